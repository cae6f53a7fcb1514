#!/usr/bin/env bash
# salient with glibc's default malloc settings (SALIENT_RETAIN_MEMORY=0) against freed memory kept
# for reuse (the default since 2026-11-26; src/util/memory.h), alternated REPEATS times on this
# machine so that drift hits both alike:
#   - `salient evaluate` of MODEL on eraser:test (256-token documents) at batch 1 and batch 16;
#   - 20 steps of `salient pretrain` (default shape, batch 32 x 128) on the corpus of scripts/pretrain.sh.
# Prints wall seconds, minor page faults and peak resident size of each run (for pre-training also
# the training seconds alone), then the medians and each pair's time ratio.
#   bench/retain_memory.sh MODEL [REPEATS]     (run from the repository root after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:?usage: bench/retain_memory.sh MODEL [REPEATS] (a classifier with 256 positions, e.g. models/eraser)}
REPEATS=${2:-1}
[ -f "$MODEL/config.json" ] || { echo "retain_memory.sh: $MODEL/config.json not found" >&2; exit 2; }
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || { echo "retain_memory.sh: REPEATS must be a positive integer, got '$REPEATS'" >&2; exit 2; }
THREADS=${SALIENT_THREADS:-$(nproc)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CORPUS=${CORPUS:-models/corpus/corpus.txt}
[ -f "$CORPUS" ] || { CORPUS=$TMP/corpus.txt; build/salient --quiet corpus build -o "$CORPUS" > /dev/null; }

# One run: label, retain (0/1), command...; appends "label retain seconds faults maxrss_kb" to $TMP/rows.
measure() {
  local label=$1 retain=$2
  shift 2
  SALIENT_RETAIN_MEMORY=$retain /usr/bin/time -f "%e %R %M" -o "$TMP/time" "$@" > /dev/null 2> "$TMP/err" ||
    { cat "$TMP/err" >&2; exit 1; }
  echo "$label $retain $(cat "$TMP/time")" | tee -a "$TMP/rows"
}

echo "run retain seconds minor_faults max_rss_kb"
for ((r = 1; r <= REPEATS; r++)); do
  for retain in 0 1; do
    for bs in 1 16; do
      measure "evaluate_batch$bs" $retain build/salient --quiet --threads "$THREADS" evaluate --model "$MODEL" \
        --data eraser:test --batch-size $bs
    done
    rm -rf "$TMP/pre"
    measure pretrain_20_steps $retain build/salient --quiet --threads "$THREADS" pretrain --corpus "$CORPUS" \
      --vocab ../shared/data/bert_base_uncased_tokenizer -o "$TMP/pre" --max-steps 20 --eval-every 100000 \
      --save-every 100000 --heldout 0.001
    # The steps alone, without reading and tokenizing the corpus (pretrain.json's training seconds).
    echo "pretrain_20_steps_training_only $retain $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["seconds"])' \
      "$TMP/pre/pretrain.json") - -" | tee -a "$TMP/rows"
  done
done
python3 - "$TMP/rows" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(lambda: {"0": [], "1": []})
for line in open(sys.argv[1]):
    label, retain, seconds, faults, rss = line.split()
    runs[label][retain].append((float(seconds), float(faults if faults != "-" else "nan"), float(rss if rss != "-" else "nan")))
print("\n| run | default malloc: s (faults) | retained: s (faults) | time ratio default / retained | peak RSS MB default / retained |")
print("|---|---|---|---|---|")
for label, by in runs.items():
    d, k = by["0"], by["1"]
    med = lambda rows, i: statistics.median(r[i] for r in rows)
    ratios = [a[0] / b[0] for a, b in zip(d, k)]
    num = lambda v, scale=1: "-" if v != v else f"{v / scale:,.0f}"  # v != v: not measured (nan)
    print(f"| {label} | {med(d, 0):.1f} ({num(med(d, 1))}) | {med(k, 0):.1f} ({num(med(k, 1))}) | "
          f"{', '.join(f'{x:.2f}' for x in ratios)} | {num(med(d, 2), 1024)} / {num(med(k, 2), 1024)} |")
PY
