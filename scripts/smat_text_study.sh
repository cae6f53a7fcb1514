#!/usr/bin/env bash
# SMaT's text study behind docs/smat.md (Fernandes et al. 2022, Table 1, on SST-2 here): the
# teacher/pool split of SST-2 train, a teacher trained from scratch on its part, then every
# explainer × size × seed with students from scratch (or from $STUDENT_INIT), and the report.
# Resumable: the teacher and every finished student run are kept and skipped on a rerun.
# Usage: scripts/smat_text_study.sh            (env: SIZES, SEEDS, EXPLAINERS, THREADS, OUT, TEACHER_MINUTES,
#        POOLING=scalar_mix for the authors' head on a mix of every layer; students take the teacher's,
#        STUDY=DIR for the study's own folder, default $OUT/study; extra arguments go to `smat study`;
#        MPI="mpirun -np N" shares the student runs out over N ranks: docs/distributed.md;
#        PARALLEL=seed runs one `smat study` process per seed instead, PARALLEL=run one per seed ×
#        explainer (SMaT's, the longest, started first), at most PARALLEL_MAX at once (default one
#        per core), into the same study folder, then the report (several processes on one GPU where
#        there is no MPI: scripts/gpu_smat_study.sh);
#        TEACHER_INIT=DIR fine-tunes the teacher from that pre-trained encoder (lr TEACHER_LR, default
#        2e-4, dropout 0.1) instead of the quickstart shape from scratch; TEACHER_EPOCHS (3) and
#        TEACHER_MINUTES (15) bound its training;
#        HIDDEN=N changes the from-scratch shape's width, default the quickstart's 128, with an
#        intermediate layer of 4 × HIDDEN; layers and heads stay 2 × 4;
#        TEACHER_THREADS (default THREADS) for the teacher's training and evaluation alone, TEACHER_OPENBLAS_CORETYPE
#        the BLAS kernels they run with (the archived teacher's, so that it is trained again bit for bit);
#        ARCHIVE=FILE.tar.gz: the study's records without weights (scripts/smat_archive.sh packs
#        them), unpacked where OUT is missing, so a new machine runs only the students not yet
#        done; the teacher is trained again where its weights are missing, and `smat study`
#        refuses it unless its weights' fingerprint is the archived study's)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
export SALIENT_SHARED=$SHARED
THREADS=${THREADS:-1}
OUT=${OUT:-runs/smat}
SIZES=${SIZES:-500}
SEEDS=${SEEDS:-0,9,11,30,69}
EXPLAINERS=${EXPLAINERS:-none,saliency,grad_x_input,ig,attention_all,attention_last,smat}
TEACHER=${TEACHER:-models/sst2-teacher}
HIDDEN=${HIDDEN:-128}
case ${PARALLEL:-} in '' | seed | run) ;; *) echo "PARALLEL: expected seed or run, got '$PARALLEL'" >&2; exit 2 ;; esac
[ -z "${PARALLEL:-}" ] || [ -z "${MPI:-}" ] || { echo "PARALLEL and MPI: give one or the other" >&2; exit 2; }
PARALLEL_MAX=${PARALLEL_MAX:-$(nproc)}
[[ $PARALLEL_MAX =~ ^[1-9][0-9]*$ ]] || { echo "PARALLEL_MAX: expected a positive integer, got '$PARALLEL_MAX'" >&2; exit 2; }
if [ -n "${ARCHIVE:-}" ] && [ ! -e "$OUT" ] && [ -f "$ARCHIVE" ]; then
  tar -xzf "$ARCHIVE"  # paths under runs/: the study's folder as it was packed
  echo "$OUT: unpacked from $ARCHIVE ($(find "$OUT/study/runs" -name '*.json' 2>/dev/null | wc -l) student runs done)"
fi
mkdir -p "$OUT"
TEACHER_THREADS=${TEACHER_THREADS:-$THREADS}
# 1. Disjoint teacher texts and student pool (pool: test 2000 + valid 500 + up to 2000 train).
[ -f "$OUT/split/pool.jsonl" ] ||
  "$BIN" --quiet smat split --data sst2:train --pool-size 4500 --min-words 6 -o "$OUT/split" > /dev/null
# 2. The teacher: the quickstart's shape (or fine-tuned from $TEACHER_INIT), trained on the teacher
#    part only (--resume: an interrupted training continues; a finished one is not redone).
# An archived study keeps teacher_test.json but not the weights: train the teacher again.
if [ ! -f "$OUT/teacher_test.json" ] || [ ! -f "$TEACHER/model.safetensors" ]; then
  if [ -n "${TEACHER_INIT:-}" ]; then
    SHAPE=(--init "$TEACHER_INIT" --lr "${TEACHER_LR:-2e-4}" --dropout 0.1 --attention-dropout 0.1)
  else
    SHAPE=(--vocab "$SHARED/data/bert_base_uncased_tokenizer" --hidden "$HIDDEN" --layers 2 --heads 4 --intermediate $((4 * HIDDEN)))
  fi
  # TEACHER_OPENBLAS_CORETYPE: the BLAS kernels the teacher trains with. Kernels round differently,
  # so a teacher trained again with others has other weights (its fingerprint then differs from the
  # archived study's, which `smat study` refuses): pin the kernels the archive was made with.
  TEACHER_ENV=()
  [ -n "${TEACHER_OPENBLAS_CORETYPE:-}" ] && TEACHER_ENV=(env "OPENBLAS_CORETYPE=$TEACHER_OPENBLAS_CORETYPE")
  "${TEACHER_ENV[@]}" "$BIN" --threads "$TEACHER_THREADS" --quiet train --train "$OUT/split/teacher.jsonl" --labels negative,positive \
    --dev sst2:dev --out "$TEACHER" "${SHAPE[@]}" --max-length 64 --epochs "${TEACHER_EPOCHS:-3}" \
    --max-minutes "${TEACHER_MINUTES:-15}" --seed 13 ${POOLING:+--pooling "$POOLING"} --resume > "$OUT/teacher_train.json"
  "${TEACHER_ENV[@]}" "$BIN" --threads "$TEACHER_THREADS" --quiet evaluate --model "$TEACHER" --data sst2:test > "$OUT/teacher_test.json.tmp"
  mv "$OUT/teacher_test.json.tmp" "$OUT/teacher_test.json"
fi
# 3. The study (the paper's student settings are salient's defaults).
INIT=()
[ -n "${STUDENT_INIT:-}" ] && INIT=(--student-init "$STUDENT_INIT")
STUDY=${STUDY:-$OUT/study}
study() {  # seeds, then extra `smat study` options
  local seeds=$1; shift
  # shellcheck disable=SC2086  # MPI is a command prefix: split into its words
  ${MPI:-} "$BIN" --threads "$THREADS" --quiet smat study --teacher "$TEACHER" --pool "$OUT/split/pool.jsonl" "${INIT[@]}" \
    --sizes "$SIZES" --seeds "$seeds" --explainers "$EXPLAINERS" -o "$STUDY" "$@"
}
if [ -n "${PARALLEL:-}" ]; then
  # Each process lists only its own pending runs and writes only their files (study.json holds no
  # seeds or explainers), so the processes never write the same run; the report is made once all
  # have finished.
  runs=()  # one process each: its explainers, its seed, its log's name
  case $PARALLEL in
    seed) for seed in ${SEEDS//,/ }; do runs+=("$EXPLAINERS $seed seed$seed"); done ;;
    run)
      # SMaT's runs first: each meta-trains, then trains a fresh student, several times a static run.
      ordered=$(tr , '\n' <<< "$EXPLAINERS" | awk '$0 == "smat" { print; next } { rest = rest $0 "\n" } END { printf "%s", rest }')
      for explainer in $ordered; do
        for seed in ${SEEDS//,/ }; do runs+=("$explainer $seed $explainer.seed$seed"); done
      done ;;
  esac
  pids=()
  for r in "${runs[@]}"; do
    read -r explainers seed name <<< "$r"
    while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL_MAX" ]; do sleep 1; done  # `wait PID` below collects them
    EXPLAINERS=$explainers study "$seed" "$@" > "$STUDY.$name.log" 2>&1 &
    pids+=($!)
  done
  rc=0
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  [ $rc -eq 0 ] || { echo "a study process failed (rc $rc): $STUDY.*.log" >&2; exit $rc; }
  "$BIN" --quiet smat report --study "$STUDY"
else
  study "$SEEDS" "$@"
fi
