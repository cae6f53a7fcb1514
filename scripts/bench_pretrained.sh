#!/usr/bin/env bash
# The explainer benchmark on the task models fine-tuned from the packaged pre-trained MiniLM
# (issue #47; docs/explainers.md, "Results on the pre-trained task models"): every registered post-hoc
# method, plus ExpNet as leave-one-task-out trained it for the task (runs/expnet/loto3-paper-minilm,
# trained on the other two tasks), over the first LIMIT examples of each task's held-out split with
# human rationales: plausibility (token F1 / AUROC / AUPRC) and faithfulness (comprehensiveness,
# sufficiency and their AOPCs), seeded bootstrap 95% CIs, time per example.
# ERASER reviews are read whole, as overlapping windows of the model's 512 positions (--windows);
# occlusion, LIME and KernelSHAP are left out there (EXPENSIVE_ON_ERASER=1 keeps them): one pass per
# piece or 1,000 samples of a review of about 1,000 pieces are some 4,000 windowed forward passes
# per review and method, about 10 minutes of one core each.
# Resumable (the benchmark skips the (example, method) pairs already in results.jsonl).
# TIMING=1: the time per example alone, on nothing else running, 2 threads, over the first 10
# examples (2 ERASER reviews), metrics time_ms only, into runs/bench/timing/<task>-minilm (the
# quality runs share the machine, so their own times are not reported).
#   [THREADS=1] [LIMIT=100] [ERASER_LIMIT=10] [TIMING=1] scripts/bench_pretrained.sh [sst2 hatexplain eraser]
# SAMPLES and ERASER_SAMPLES (default SAMPLES): LIME's and KernelSHAP's budget, model evaluations
# per input (unset: each method's default, LIME's 5,000 and KernelSHAP's exact / 2d + 2048). OUT (default runs/bench) is where the runs go; SUFFIX (default -minilm)
# names the models (models/<task>SUFFIX); MPI="mpirun -np 2" shares each run over two ranks.
# scripts/method_table.sh runs it at the sizes of docs/explainers.md's table, resumable across machines.
# Outputs: OUT/<task>-minilm/ (results.jsonl, summary.{md,csv,json}, heatmaps.html);
# scripts/bench_table.py RUN [--timing runs/bench/timing/<task>-minilm] makes the docs' table.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
THREADS=${THREADS:-1}
LIMIT=${LIMIT:-100}
ERASER_LIMIT=${ERASER_LIMIT:-10}
OUT=${OUT:-runs/bench}
SUFFIX=${SUFFIX:--minilm}
SAMPLES=${SAMPLES:-}
ERASER_SAMPLES=${ERASER_SAMPLES:-$SAMPLES}
read -r -a MPI_CMD <<< "${MPI:-}"
if [ "${TIMING:-0}" = 1 ]; then
  THREADS=${THREADS_TIMING:-2} LIMIT=10 ERASER_LIMIT=2 OUT=runs/bench/timing
fi
POST_HOC=random,saliency,grad_x_input,ig,raw_attention,attention_mean,attention_mean_last,rollout,attention_gradcam,cam,gae,attcat,lrp_partial,lrp_full,transformer_attribution,mgae
METRICS=token_f1,token_auroc,token_auprc,comprehensiveness,sufficiency,aopc_comprehensiveness,aopc_sufficiency,time_ms
[ "${TIMING:-0}" = 1 ] && METRICS=time_ms
LOTO=runs/expnet/loto3-paper-minilm

bench() {  # task, data spec, limit, methods, extra options...
  local task=$1 data=$2 limit=$3 methods=$4
  shift 4
  local model=models/$task$SUFFIX expnet=$LOTO/expnet-heldout-$task
  [ -f "$model/config.json" ] || { echo "$model/config.json not found (INIT=minilm scripts/train_models.sh $task)" >&2; exit 2; }
  local extra=()
  if [ -f "$expnet/expnet.json" ]; then methods+=",expnet"; extra+=(--expnet "$expnet"); fi
  if [ -n "$samples" ]; then case ,$methods, in *,lime,*|*,kernel_shap,*) extra+=(--samples "$samples") ;; esac; fi
  ${MPI_CMD[@]+"${MPI_CMD[@]}"} "$BIN" --threads "$THREADS" --quiet benchmark --model "$model" --data "$data" --limit "$limit" \
    --methods "$methods" --metrics "$METRICS" ${extra[@]+"${extra[@]}"} "$@" --out "$OUT/$task-minilm"
}

for task in "${@:-sst2 hatexplain eraser}"; do
  for t in $task; do
    case $t in
      sst2) samples=$SAMPLES bench sst2 sst-trees:dev "$LIMIT" "$POST_HOC,occlusion,lime,kernel_shap" ;;
      hatexplain) samples=$SAMPLES bench hatexplain hatexplain:test "$LIMIT" "$POST_HOC,occlusion,lime,kernel_shap" ;;
      eraser)
        m=$POST_HOC; [ "${EXPENSIVE_ON_ERASER:-0}" = 1 ] && m+=",occlusion,lime,kernel_shap"
        samples=$ERASER_SAMPLES bench eraser eraser:test "$ERASER_LIMIT" "$m" --windows --heatmaps 3 ;;
      *) echo "unknown task '$t' (sst2, hatexplain, eraser)" >&2; exit 2 ;;
    esac
  done
done
