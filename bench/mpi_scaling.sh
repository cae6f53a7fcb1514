#!/usr/bin/env bash
# Two ranks of one thread each (mpirun -np 2) against one process of two threads, on this machine,
# one after the other, REPEAT times: a training epoch of models/sst2's shape (2 layers, hidden
# 128, 4 heads, from scratch, 4,000 SST-2 sentences, batch 32), explanations of 200 SST-2 dev
# sentences with LIME and IG by the model that epoch trained, and a benchmark of LIME and IG
# (comprehensiveness and sufficiency) on the same 200 sentences. Wall seconds per run, as TSV.
#   bench/mpi_scaling.sh [REPEAT] [TASKS]   TASKS: a comma list of train, explain, benchmark (default all)
#   (docs/distributed.md records the result)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${1:-2}
TASKS=",${2:-train,explain,benchmark},"
BIN=${BIN:-build/salient}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
export SALIENT_SHARED=$SHARED OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
sed -n 2,201p "$SHARED/data/sst2_glue/dev.tsv" | cut -f1 > "$W/dev200.txt"
TRAIN=(train --train sst2:train --dev sst2:dev --vocab "$SHARED/data/bert_base_uncased_tokenizer" --hidden 128
       --layers 2 --heads 4 --intermediate 512 --max-length 64 --epochs 1 --batch-size 32 --max-train 4000 --seed 13)
seconds() {
  local t0; t0=$(date +%s.%N)
  "$@" > /dev/null 2> "$W/err" || { echo "failed: $* ($(tail -1 "$W/err"))" >&2; exit 1; }
  python3 -c "print(round($(date +%s.%N) - $t0, 2))"
}
printf "task\tsetting\trun\tseconds\n"
# The model every task explains: one epoch, trained once first when training is not timed.
[[ $TASKS == *,train,* ]] || "$BIN" --quiet --threads 2 "${TRAIN[@]}" --out "$W/m1" > /dev/null
BENCH=(benchmark --model "$W/m1" --data sst2:dev --limit 200 --methods lime,ig --metrics comprehensiveness,sufficiency)
for r in $(seq "$REPEAT"); do
  if [[ $TASKS == *,train,* ]]; then
    printf "train epoch\t1 process, 2 threads\t%s\t%s\n" "$r" "$(seconds "$BIN" --quiet --threads 2 "${TRAIN[@]}" --out "$W/m1")"
    printf "train epoch\t2 ranks, 1 thread each\t%s\t%s\n" "$r" "$(seconds mpirun -np 2 "$BIN" --quiet --threads 1 "${TRAIN[@]}" --out "$W/m2")"
  fi
  if [[ $TASKS == *,explain,* ]]; then
    for method in lime ig; do
      printf "explain %s\t1 process, 2 threads\t%s\t%s\n" "$method" "$r" \
        "$(seconds "$BIN" --quiet --threads 2 explain --model "$W/m1" --method "$method" -i "$W/dev200.txt" -o "$W/e1.jsonl")"
      printf "explain %s\t2 ranks, 1 thread each\t%s\t%s\n" "$method" "$r" \
        "$(seconds mpirun -np 2 "$BIN" --quiet --threads 1 explain --model "$W/m1" --method "$method" -i "$W/dev200.txt" -o "$W/e2.jsonl")"
    done
  fi
  if [[ $TASKS == *,benchmark,* ]]; then
    rm -rf "$W/b1" "$W/b2"  # a benchmark resumes from its records: start empty each time
    printf "benchmark lime+ig\t1 process, 2 threads\t%s\t%s\n" "$r" "$(seconds "$BIN" --quiet --threads 2 "${BENCH[@]}" --out "$W/b1")"
    printf "benchmark lime+ig\t2 ranks, 1 thread each\t%s\t%s\n" "$r" \
      "$(seconds mpirun -np 2 "$BIN" --quiet --threads 1 "${BENCH[@]}" --out "$W/b2")"
  fi
done
