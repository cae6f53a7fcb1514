#!/usr/bin/env bash
# SMaT's study on the pre-trained encoder (issue #48, scripts/smat_pretrained_study.sh) on a GPU
# machine of the device tool: the CLI built against that machine's CUDA PyTorch (scripts/cuda_build.sh
# without the web server, tests, benchmarks, Python or MPI), the teacher fine-tuned there, a one-run
# smoke test of the student loop on the GPU, then the student runs of SIZES (default 500), one
# process per seed × explainer sharing the GPU, SMaT's first, one per core at a time (PARALLEL=run). Every step after the
# build stops at BUDGET seconds from the start (default 500; the teacher's training at
# TEACHER_MINUTES, default 4): finished runs are kept, runs under way are lost. The study folder
# (runs, report, the teacher's records; not its 90 MB of weights) comes back in $OUT, as
# runs/smat-minilm-gpu (apart from the CPU study's runs/smat-minilm: another teacher).
# Two calls: STAGE=build builds and stops (~2 min), then the study in a second call while the
# machine is still warm (ignored paths, the build among them, are kept between calls).
# A study brought back earlier travels in .gpu/ (scripts/gpu_pack.sh packs runs/smat-minilm-gpu):
# its runs count only for a teacher with the same weights, so the teacher is trained again and
# `smat study` compares the weights' fingerprint (study.json). The same: its missing runs are added.
# Another: the earlier study is kept beside as study-earlier-teacher and the whole study runs anew.
#   here:   scripts/gpu_pack.sh            (→ .gpu/: .debs, the encoder in float16, SST-2, the earlier study)
#   there:  run(command="STAGE=build scripts/gpu_smat_study.sh", carry=[".gpu"], timeout_s=300)
#           run(command="BUDGET=550 scripts/gpu_smat_study.sh", carry=[".gpu"], timeout_s=600)   # at once
#   back:   tar xzf .../smat-minilm-gpu.tar.gz && build/salient smat report --study runs/smat-minilm-gpu/study
# A dry run of the same steps on this machine's CPU build (no build, a tiny study):
#   OUT=/tmp/gpu-out BIN=build/salient SALIENT_DEVICE=cpu STUDY_DIR=/tmp/gpu-dry TEACHER=/tmp/gpu-dry-teacher \
#     TEACHER_MINUTES=1 SIZES=40 SEEDS=0,9 scripts/gpu_smat_study.sh --max-epochs 1 --test-size 40 --valid-size 40
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?OUT: the folder whose files come back (the device tool sets it)}"
START=$SECONDS
BUDGET=${BUDGET:-500}
STUDY_DIR=${STUDY_DIR:-runs/smat-minilm-gpu}
TEACHER=${TEACHER:-models/smat-teacher-minilm}
export SALIENT_DEVICE=${SALIENT_DEVICE:-cuda}
exec > >(tee "$OUT/log.txt") 2>&1
TEE=$!
stamp() { echo "[$((SECONDS - START)) s] $*"; }
left() { echo $((BUDGET - (SECONDS - START))); }
pack() {  # at exit, whatever happened: the study folder, then the log written out in full
  if [ -d "$STUDY_DIR" ]; then
    tar czf "$OUT/smat-minilm-gpu.tar.gz" "$STUDY_DIR" && stamp "packed $(du -h "$OUT/smat-minilm-gpu.tar.gz" | cut -f1)"
  fi
  exec >&- 2>&-
  wait "$TEE" 2> /dev/null || true
}
trap pack EXIT
[ -d .gpu/all-minilm-l6-v2 ] || { echo ".gpu/ not carried: make it with scripts/gpu_pack.sh, carry [\".gpu\"]"; exit 2; }
nvidia-smi -L || true
# 1. The CLI (BIN given: a build already made, as in the dry run).
if [ -z "${BIN:-}" ]; then
  SALIENT_DEBS=$PWD/.gpu/debs SALIENT_TARGETS=salient scripts/cuda_build.sh -DSALIENT_SERVE=OFF -DSALIENT_BUILD_TESTS=OFF \
    -DSALIENT_BUILD_BENCH=OFF -DSALIENT_PYTHON=OFF -DSALIENT_MPI=OFF > "$OUT/build.log" 2>&1 ||
    { tail -40 "$OUT/build.log"; exit 1; }
  BIN=build-cuda/salient
  stamp "built"
fi
"$BIN" info | sed -n 1,4p
[ "${STAGE:-}" != build ] || exit 0
[ -z "${STAGE:-}" ] || { echo "STAGE: expected build or nothing, got '$STAGE'"; exit 2; }
# 2. The encoder (float16 weights, read into float32) where the study scripts look for it, the data.
mkdir -p models/pretrained
[ -f models/pretrained/all-minilm-l6-v2/model.safetensors ] || cp -r .gpu/all-minilm-l6-v2 models/pretrained/
export SALIENT_SHARED=$PWD/.gpu/shared
# The earlier study, if one travelled: its split and runs; its teacher's records kept as earlier-*.
EARLIER=${EARLIER:-.gpu/smat-minilm-gpu.tar.gz}  # its paths: $STUDY_DIR/{split,study,teacher_*.json}
if [ -f "$EARLIER" ] && [ ! -d "$STUDY_DIR" ]; then
  rm -rf /tmp/earlier && mkdir -p /tmp/earlier && tar xzf "$EARLIER" -C /tmp/earlier
  [ -d "/tmp/earlier/$STUDY_DIR/study" ] || { echo "$EARLIER: no $STUDY_DIR/study in it (EARLIER=none: without it)"; exit 2; }
  mkdir -p "$STUDY_DIR"
  mv "/tmp/earlier/$STUDY_DIR/study" "$STUDY_DIR/"
  # Without the split (the committed copy) `smat split` makes it again: the same seed gave the same
  # files with g++ 12 and 13; were it another, the teacher trained on it would differ (step 4).
  [ ! -d "/tmp/earlier/$STUDY_DIR/split" ] || mv "/tmp/earlier/$STUDY_DIR/split" "$STUDY_DIR/"
  for f in teacher_train.json teacher_test.json; do mv "/tmp/earlier/$STUDY_DIR/$f" "$STUDY_DIR/earlier-$f"; done
  CARRIED=1
fi
mkdir -p "$STUDY_DIR"
[ "$(left)" -gt 60 ] || { stamp "the build left no time within BUDGET=$BUDGET"; exit 1; }
# 3. The split, the teacher, and one SMaT run (n = 32, one epoch: a smoke test of the student loop
#    and the meta step on the device) in a study folder of its own.
common=(BIN="$BIN" THREADS="${THREADS:-1}" OUT="$STUDY_DIR" TEACHER="$TEACHER" TEACHER_MINUTES="${TEACHER_MINUTES:-4}")
env "${common[@]}" STUDY="$STUDY_DIR/smoke" SIZES=32 SEEDS=0 EXPLAINERS=smat \
  timeout --kill-after=10 "$(left)" scripts/smat_pretrained_study.sh --max-epochs 1 --test-size 32 --valid-size 32 > "$OUT/smoke.log" 2>&1 ||
  { tail -30 "$OUT/smoke.log"; exit 1; }
stamp "teacher: $(cat "$STUDY_DIR/teacher_test.json")"
stamp "smoke (n = 32, 1 epoch): $(grep '^| smat |' "$OUT/smoke.log"); $(grep '^Cost' "$OUT/smoke.log")"
# 4. An earlier study counts only if this teacher's weights are its teacher's: a study asked for one
#    of its finished runs has nothing pending, so it only compares the settings (study.json, the
#    fingerprint among them) and exits.
if [ -n "${CARRIED:-}" ]; then
  finished=$(ls "$STUDY_DIR/study/runs" 2> /dev/null | head -1)
  [[ $finished =~ ^(.+)_n([0-9]+)_s([0-9]+)\.json$ ]] || finished=
  if [ -n "$finished" ] && env "${common[@]}" EXPLAINERS="${BASH_REMATCH[1]}" SIZES="${BASH_REMATCH[2]}" \
    SEEDS="${BASH_REMATCH[3]}" scripts/smat_pretrained_study.sh "$@" > "$OUT/earlier.log" 2>&1; then
    stamp "the earlier study's teacher has these weights: its $(ls "$STUDY_DIR/study/runs" | wc -l) runs are kept"
  elif [ -z "$finished" ] || grep -q 'other settings' "$OUT/earlier.log"; then
    mv "$STUDY_DIR/study" "$STUDY_DIR/study-earlier-teacher"
    why=$(grep -o 'other settings ([^;]*' "$OUT/earlier.log" 2> /dev/null | sed 's/ (/: /' || true)
    stamp "the earlier study does not count (${why:-no finished run}): the study runs anew"
  else
    tail -5 "$OUT/earlier.log"; exit 1
  fi
fi
# 5. The study, one process per seed × explainer, until BUDGET.
remaining=$(left)
[ "$remaining" -gt 30 ] || { stamp "no time left for the study"; exit 0; }
stamp "study: SIZES=${SIZES:-500} SEEDS=${SEEDS:-0,9,11,30,69}, $remaining s"
rc=0
env "${common[@]}" SIZES="${SIZES:-500}" SEEDS="${SEEDS:-0,9,11,30,69}" PARALLEL=run \
  timeout --kill-after=10 "$remaining" scripts/smat_pretrained_study.sh "$@" || rc=$?
stamp "study rc $rc: $(find "$STUDY_DIR/study/runs" -name '*.json' 2> /dev/null | wc -l) runs finished"
[ $rc -eq 124 ] && "$BIN" --quiet smat report --study "$STUDY_DIR/study" > /dev/null || true
