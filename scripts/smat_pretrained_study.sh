#!/usr/bin/env bash
# SMaT's text study on the packaged pre-trained encoder (issue #84): the teacher fine-tuned from
# all-MiniLM-L6-v2 (6 layers × 12 heads) on the teacher part of SST-2 train with the authors' head
# (a scalar mix of every layer), students from the same encoder with the same head, trained with
# SGD (the paper's), the authors' early stopping, patience and meta-optimiser (salient's defaults),
# gradient explainers at the embedding output. Every explainer × size × seed of Table 1.
# Resumable across machines: the records of finished runs are archived without weights
# (scripts/smat_archive.sh smat-minilm → docs/results/smat-minilm.tar.gz) and unpacked here on a
# machine that lacks runs/smat-minilm; the teacher is then trained again (2 threads, 12-40 min by load) and
# must have the archived weights' fingerprint. It does when trained with the archive's BLAS kernels,
# OpenBLAS's Haswell ones (TEACHER_OPENBLAS_CORETYPE; checked: a machine whose OpenBLAS picks its
# SkylakeX kernels trained a teacher with other weights, the Haswell pin the archived one bit for bit).
# Usage: [SIZES=500] [SEEDS=0,9,11,30,69] [EXPLAINERS=...] [THREADS=1] [TEACHER_THREADS=2]
#        [MPI="mpirun -np 2"] scripts/smat_pretrained_study.sh [smat study options]
set -euo pipefail
cd "$(dirname "$0")/.."
ENC=models/pretrained/all-minilm-l6-v2
[ -d "$ENC" ] || scripts/fetch_pretrained.sh all-minilm-l6-v2
OUT=${OUT:-runs/smat-minilm}
# The teacher: docs/pretrained.md's SST-2 recipe (one epoch at lr 1e-4) on the teacher part only.
OUT=$OUT ARCHIVE=${ARCHIVE:-docs/results/$(basename "$OUT").tar.gz} TEACHER=${TEACHER:-models/smat-teacher-minilm} \
  TEACHER_INIT=$ENC TEACHER_LR=1e-4 TEACHER_EPOCHS=1 TEACHER_MINUTES=${TEACHER_MINUTES:-120} \
  TEACHER_THREADS=${TEACHER_THREADS:-2} TEACHER_OPENBLAS_CORETYPE=${TEACHER_OPENBLAS_CORETYPE:-Haswell} POOLING=scalar_mix STUDENT_INIT=$ENC SIZES=${SIZES:-500} \
  exec scripts/smat_text_study.sh "$@"
