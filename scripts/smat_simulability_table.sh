#!/usr/bin/env bash
# Simulability of every registered post-hoc explainer on SMaT's text study (docs/smat.md): the
# teacher and pool of scripts/smat_text_study.sh, students of 500 examples, each method's
# explanations through the registry (softmax of score / max|score| / 0.1), against students
# without. Resumable (finished student runs are kept).
# Usage: scripts/smat_simulability_table.sh   (env: METHODS, SEEDS, THREADS, OUT; run the text study first;
#        MPI="mpirun -np N" shares the student runs out over N ranks: docs/distributed.md)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
export SALIENT_SHARED=$SHARED
THREADS=${THREADS:-1}
OUT=${OUT:-runs/smat-simulability}
SEEDS=${SEEDS:-0,9,11}
# Every post-hoc method of src/explain/registry.inc (the learned expnet, sst and smat need artifacts).
METHODS=${METHODS:-random,saliency,grad_x_input,ig,occlusion,raw_attention,attention_mean,attention_mean_last,rollout,attention_gradcam,cam,gae,attcat,lrp_partial,lrp_full,transformer_attribution,mgae,lime,kernel_shap}
# shellcheck disable=SC2086  # MPI is a command prefix: split into its words
${MPI:-} "$BIN" --threads "$THREADS" --quiet benchmark --model "${TEACHER:-models/sst2-teacher}" --data runs/smat/split/pool.jsonl \
  --methods "$METHODS" --metrics simulability --sim-sizes 500 --sim-seeds "$SEEDS" \
  --sim-optimizer adamw --sim-lr 3e-4 --sim-early-stopping accuracy --out "$OUT" "$@"
