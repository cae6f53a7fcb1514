#!/usr/bin/env bash
# SMaT's image study behind docs/smat.md (the paper's Table 3: CIFAR-100 with a ViT there):
# a ViT teacher (salient vit train, 4 layers × 4 heads, hidden 64, patch 7) on Fashion-MNIST's
# 54,000 training images; students of its shape from scratch on 5%, 10% and 20% of those images
# (2,700 / 5,400 / 10,800), validated on 500 images of fashion-mnist:val (held out from the
# teacher's training) and tested on 2,000 of fashion-mnist:test (never seen by the teacher).
# Students: AdamW lr 1e-3 (SGD at the paper's 5e-3 barely moves from-scratch students: docs/smat.md),
# each trained until its validation simulability has not improved for 5 epochs (the authors' rule
# and patience for images), at most MAX_EPOCHS (default 100). MAX_EPOCHS=6 OUT=runs/smat-image-6ep:
# the earlier cap of 6 epochs, under which most students were still improving. Resumable: rerun
# with the same options.
# Usage: scripts/smat_image_study.sh [extra smat study options]   (env: SEEDS, EXPLAINERS, THREADS, OUT, BIN, MAX_EPOCHS)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
THREADS=${THREADS:-2}
OUT=${OUT:-runs/smat-image}
SEEDS=${SEEDS:-0,9,11,30,69}
SIZES=${SIZES:-2700,5400,10800}
EXPLAINERS=${EXPLAINERS:-none,saliency,grad_x_input,ig,attention_all,attention_last,smat}
TEACHER=${TEACHER:-models/vit-fashion}
mkdir -p "$OUT"
if [ ! -f "$OUT/teacher_test.json" ]; then
  "$BIN" --threads "$THREADS" --quiet vit train -o "$TEACHER" --epochs 10 --seed 13 --resume > "$OUT/teacher_train.json"
  "$BIN" --threads "$THREADS" --quiet vit evaluate --model "$TEACHER" --data fashion-mnist:test > "$OUT/teacher_test.json"
fi
"$BIN" --threads "$THREADS" --quiet smat study --teacher "$TEACHER" --pool fashion-mnist:train \
  --test-pool fashion-mnist:test --valid-pool fashion-mnist:val --test-size 2000 --valid-size 500 \
  --sizes "$SIZES" --seeds "$SEEDS" --explainers "$EXPLAINERS" \
  --optimizer adamw --lr 1e-3 --max-epochs "${MAX_EPOCHS:-100}" -o "$OUT/study" "$@"
# Patch overlays of the teacher's learned explainers (seed 0, each size) on the first test images.
IFS=, read -ra sizes <<< "$SIZES"
for n in "${sizes[@]}"; do
  f="$OUT/study/explainers/smat_n${n}_s0.json"
  [ -f "$f" ] && "$BIN" --threads "$THREADS" --quiet vit explain --model "$TEACHER" --data fashion-mnist:test --limit 8 \
    --method smat --smat "$f" -o "$OUT/overlays_n$n" > /dev/null
done
"$BIN" --quiet smat report --study "$OUT/study"
