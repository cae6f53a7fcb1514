#!/usr/bin/env bash
# SMaT's text study on the packaged pre-trained encoder (issue #48): the teacher fine-tuned from
# all-MiniLM-L6-v2 (6 layers × 12 heads) on the teacher part of SST-2 train with the authors' head
# (a scalar mix of every layer), students from the same encoder with the same head, trained with
# SGD (the paper's), the authors' early stopping, patience and meta-optimiser (salient's defaults),
# gradient explainers at the embedding output. Every explainer × size × seed of Table 1.
# Resumable (scripts/smat_text_study.sh keeps every finished run).
# Usage: [SIZES=500,1000,2000] [SEEDS=0,9,11,30,69] [THREADS=1] [MPI="mpirun -np 2"] scripts/smat_pretrained_study.sh [smat study options]
set -euo pipefail
cd "$(dirname "$0")/.."
ENC=models/pretrained/all-minilm-l6-v2
[ -d "$ENC" ] || scripts/fetch_pretrained.sh all-minilm-l6-v2
# The teacher: docs/pretrained.md's SST-2 recipe (one epoch at lr 1e-4) on the teacher part only.
OUT=${OUT:-runs/smat-minilm} TEACHER=${TEACHER:-models/smat-teacher-minilm} TEACHER_INIT=$ENC \
  TEACHER_LR=1e-4 TEACHER_EPOCHS=1 TEACHER_MINUTES=${TEACHER_MINUTES:-120} POOLING=scalar_mix \
  STUDENT_INIT=$ENC SIZES=${SIZES:-500,1000,2000} \
  exec scripts/smat_text_study.sh "$@"
