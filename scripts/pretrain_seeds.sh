#!/usr/bin/env bash
# Fine-tunes several encoders, and the from-scratch recipe, with several seeds and tabulates the
# held-out metric of each task: mean, standard deviation and every seed (docs/pretraining.md). One
# seed per side is within the noise of these splits; this measures the spread.
#   ARMS="scratch=- tasks=models/pretrained-small-tasks" SEEDS="13 14 15" scripts/pretrain_seeds.sh [sst2 hatexplain cola eraser]
# ARMS: NAME=DIR pairs; DIR "-" is scripts/train_models.sh from scratch (INIT=none: the recipe of quickstart.sh,
#   2 layers, hidden 128, 4 heads, its default lr), any other DIR an encoder fine-tuned with
#   INIT=DIR (peak lr INIT_LR, default 2e-4; DROPOUT, default 0.1). ERASER goes through each arm's
#   SST-2 model; ERASER_FROM=encoder fine-tunes an encoder arm's ERASER from the encoder directly.
# Runs go two at a time, one thread each; models land in models/<task>-<NAME>-s<SEED>, held-out
# metrics in runs/test_<task>-<NAME>-s<SEED>.json (a finished run is only re-evaluated), the table in
# $TABLE (default runs/pretrain_seeds.md).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${ARMS:-}" ] || { echo 'ARMS: required, "NAME=DIR ..." (DIR - for from scratch)' >&2; exit 2; }
SEEDS=${SEEDS:-13 14 15}
TABLE=${TABLE:-runs/pretrain_seeds.md}
tasks=("$@")
[ ${#tasks[@]} -eq 0 ] && tasks=(sst2 hatexplain cola)
python3 scripts/held_out.py check "${tasks[@]}"
for seed in $SEEDS; do
  [[ $seed =~ ^[0-9]+$ ]] || { echo "SEEDS: '$seed' is not a non-negative integer" >&2; exit 2; }
done
jobs=()
for arm in $ARMS; do
  name=${arm%%=*} dir=${arm#*=}
  [[ $arm == *=* && $name =~ ^[A-Za-z0-9_.-]+$ && -n $dir ]] ||
    { echo "ARMS: '$arm' is not NAME=DIR (NAME of letters, digits, '_', '.', '-')" >&2; exit 2; }
  [ "$dir" = - ] || [ -f "$dir/config.json" ] || { echo "ARMS: $name: $dir/config.json not found" >&2; exit 2; }
  for seed in $SEEDS; do jobs+=("$name $dir $seed"); done
done
mkdir -p runs
run_one() {  # name dir seed tasks...
  local name=$1 dir=$2 seed=$3; shift 3
  local init=$dir eraser_from=${ERASER_FROM:-sst2}  # INIT_LR and DROPOUT: train_models.sh's defaults
  [ "$dir" = - ] && init=none eraser_from=sst2
  INIT="$init" ERASER_FROM="$eraser_from" SUFFIX="-$name-s$seed" SEED="$seed" THREADS=1 \
    scripts/train_models.sh "$@" > "runs/pretrain_seeds-$name-s$seed.log" 2>&1 ||
    { echo "$name seed $seed failed (runs/pretrain_seeds-$name-s$seed.log)" >&2; return 1; }
  echo "$name seed $seed done"
}
# Two at a time; a failed run fails the script (after the others finish).
status=0 running=0
for job in "${jobs[@]}"; do
  if [ $running -ge 2 ]; then wait -n || status=1; running=$((running - 1)); fi
  run_one $job "${tasks[@]}" &
  running=$((running + 1))
done
while [ $running -gt 0 ]; do wait -n || status=1; running=$((running - 1)); done
[ $status -eq 0 ] || exit 1
PYTHONPATH=scripts python3 - "$TABLE.tmp" "${tasks[*]}" "$SEEDS" $ARMS <<'PY'
import statistics, sys
from held_out import HELD_OUT, reported
out, tasks, seeds, arms = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4:]
with open(out, "w") as f:
    f.write(f"| task | held-out split, metric | arm (encoder) | mean | sd | seeds {', '.join(seeds)} |\n")
    f.write("|---|---|---|---|---|---|\n")
    for task in tasks:
        split, metric = HELD_OUT[task]
        for arm in arms:
            name, encoder = arm.split("=", 1)
            values = [reported(task, f"-{name}-s{seed}") for seed in seeds]
            sd = statistics.stdev(values) if len(values) > 1 else float("nan")
            f.write(f"| {task} | {split}, {metric} | {name} ({'from scratch' if encoder == '-' else encoder}) | "
                    f"{statistics.mean(values):.3f} | {sd:.3f} | {', '.join(f'{v:.3f}' for v in values)} |\n")
PY
mv "$TABLE.tmp" "$TABLE"
cat "$TABLE"
