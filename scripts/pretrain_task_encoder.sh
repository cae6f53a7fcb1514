#!/usr/bin/env bash
# Pre-trains the encoder the docs' task models are fine-tuned from (scripts/train_models.sh):
# BERT MLM on the task texts alone (the train splits of SST-2, CoLA, HateXplain and ERASER; no
# dictionary text, dev and test texts removed) at the task models' shape (2 layers, hidden 128,
# 4 heads, intermediate 512), 64 tokens, batch 32, peak lr 1e-3, no dropout, 16,000 steps, seed 13.
# About 55 minutes on one thread (docs/results/pretraining.md, "Task text alone against the dictionaries").
#   scripts/pretrain_task_encoder.sh     → models/pretrained-small-tasks (resumes when re-run)
# env: THREADS (1, as the documented encoder was made), BIN, OUT and RUNS (where the encoder and its
#      logs go; default models/pretrained-small-tasks and runs/pretrain-small-tasks).
set -euo pipefail
cd "$(dirname "$0")/.."
GCIDE=none WORDNET=none CORPUS=models/corpus/tasks.txt LR=1e-3 DROPOUT=0 LAYERS=2 HIDDEN=128 HEADS=4 \
  INTERMEDIATE=512 MAXLEN=64 OUT=${OUT:-models/pretrained-small-tasks} RUNS=${RUNS:-runs/pretrain-small-tasks} \
  THREADS=${THREADS:-1} scripts/pretrain.sh 16000
