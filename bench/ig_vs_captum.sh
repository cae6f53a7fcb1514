#!/usr/bin/env bash
# IG time per example, salient vs Captum 0.8, interleaved: each round runs salient then Captum on
# the same inputs (bench_explain reads the first N SST-2 dev sentences; IDS_JSONL must be those
# sentences tokenized, N its line count), so the machine's drift (10–20% over minutes here) hits both alike; prints
# each round's ratio and the median ratio.
#   CAPTUM_DIR=<captum v0.8.0 checkout> bench/ig_vs_captum.sh MODEL_DIR IDS_JSONL [ROUNDS] [THREADS]
set -euo pipefail
model=$1 ids=$2 rounds=${3:-10} threads=${4:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
n=$(grep -c . "$ids")
ratios=()
for ((r = 1; r <= rounds; r++)); do
  s=$("$here/build/bench/bench_explain" --threads "$threads" --examples "$n" --batch 8 --methods ig --repeats 1 "$model" |
      awk -v m="$model" '$0 ~ m": hidden" {on=1} on && /^\| ig \|/ {print $4; exit}')
  c=$(PYTHONPATH=${CAPTUM_DIR:?set CAPTUM_DIR} /usr/bin/python3 "$here/bench/captum_timing.py" "$model" "$ids" \
      --threads "$threads" --methods ig | awk -F'|' '/captum ig/ {gsub(/ /, "", $3); print $3}')
  ratio=$(awk -v a="$c" -v b="$s" 'BEGIN {printf "%.2f", a / b}')
  ratios+=("$ratio")
  echo "round $r: salient $s ms, captum $c ms, speed-up ${ratio}x"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median speed-up %.2fx (min %.2fx, max %.2fx) over %d rounds\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[1], a[NR], NR}'
