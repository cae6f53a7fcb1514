#!/usr/bin/env bash
# SMaT's plausibility on HateXplain (Fernandes et al. 2022, Table 2's HateXplain rows) with its own
# teacher: split hatexplain:train into the teacher's texts and a disjoint student pool, train a
# from-scratch teacher (the text study's shape, HateXplain's recipe of scripts/train_models.sh),
# meta-train SMaT's coefficients on it for each seed, then score every teacher explainer's tokens
# against the human rationales of hatexplain:test (with the oracle best layer and head).
# Usage: scripts/smat_hatexplain_plausibility.sh [extra `smat train` options]
#        env: SEEDS (0,9,11), SIZE (500), JOBS (SMaT runs at once, one thread each; default 1),
#             THREADS (teacher, plausibility; default 2), OUT (runs/smat-hatexplain),
#             TEACHER (models/hatexplain-teacher), POOLING (e.g. scalar_mix: the teacher's head, as in
#             scripts/smat_text_study.sh)
# Resumable: the split, the teacher and every finished SMaT run are kept and skipped on a rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
export SALIENT_SHARED=$SHARED
OUT=${OUT:-runs/smat-hatexplain}
TEACHER=${TEACHER:-models/hatexplain-teacher}
SEEDS=${SEEDS:-0,9,11}
SIZE=${SIZE:-500}
JOBS=${JOBS:-1}
THREADS=${THREADS:-2}
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || { echo "JOBS: must be a positive integer (got '$JOBS')" >&2; exit 2; }
mkdir -p "$OUT/explainers"
# 1. Disjoint teacher texts and student pool (test 2000 + valid 500 + train up to 2000).
[ -f "$OUT/split/pool.jsonl" ] ||
  "$BIN" --quiet smat split --data hatexplain:train --pool-size 4500 --min-words 6 -o "$OUT/split" > /dev/null
labels=$(python3 -c "import json,sys; print(','.join(json.load(open(sys.argv[1]))['label_names']))" "$OUT/split/split.json")
# 2. The teacher (--resume: an interrupted training continues; a finished one is not redone).
if [ ! -f "$OUT/teacher_test.json" ]; then
  "$BIN" --threads "$THREADS" --quiet train --train "$OUT/split/teacher.jsonl" --labels "$labels" \
    --dev hatexplain:val --out "$TEACHER" --vocab "$SHARED/data/bert_base_uncased_tokenizer" \
    --hidden 128 --layers 2 --heads 4 --intermediate 512 --max-length 128 --epochs 6 --max-minutes 10 \
    --select-metric macro_f1 --seed 13 ${POOLING:+--pooling "$POOLING"} --resume > "$OUT/teacher_train.json"
  "$BIN" --threads "$THREADS" --quiet evaluate --model "$TEACHER" --data hatexplain:test > "$OUT/teacher_test.json.tmp"
  mv "$OUT/teacher_test.json.tmp" "$OUT/teacher_test.json"
fi
# 3. SMaT for each seed, JOBS at a time.
explainers=()
for seed in ${SEEDS//,/ }; do
  [[ $seed =~ ^[0-9]+$ ]] || { echo "SEEDS: '$seed' is not a seed" >&2; exit 2; }
  file=$OUT/explainers/smat_n${SIZE}_s$seed.json
  explainers+=("$file")
  [ -f "$file" ] && continue
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  "$BIN" --threads 1 --quiet smat train --teacher "$TEACHER" --pool "$OUT/split/pool.jsonl" --max-length 128 \
    --size "$SIZE" --seed "$seed" -o "$file" "$@" > "$OUT/explainers/smat_n${SIZE}_s$seed.log" 2>&1 &
done
for job in $(jobs -rp); do wait "$job"; done
for file in "${explainers[@]}"; do [ -f "$file" ] || { echo "$file: SMaT run failed (see its .log)" >&2; exit 1; }; done
# 4. Plausibility against the human rationales of the test split.
"$BIN" --threads "$THREADS" --quiet smat plausibility --teacher "$TEACHER" --data hatexplain:test \
  --smat "${explainers[@]}" -o "$OUT/plausibility" > /dev/null
cat "$OUT/plausibility/plausibility.md"
