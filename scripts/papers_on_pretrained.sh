#!/usr/bin/env bash
# The ExpNet and AttAttr findings on the models of scripts/pretrain_vs_scratch.sh (issue #19 item 7):
# for each model suffix, ExpNet's leave-one-task-out table in the paper's configuration against every
# registered baseline (3 seeds) and in salient's variant (the CLI's defaults: length-scaled
# probabilities, heads sorted per token; no baselines), the ablation from the paper's configuration,
# and AttAttr's head scores and pruning curves on the SST-2 model.
# The suffixes run at once, one thread each, so they share the machine (the baselines' time budget
# is wall time); with MPI set, one after another.
#   scripts/papers_on_pretrained.sh [expnet|variant|ablation|attattr|all]      (default all)
# env: SUFFIXES (-pre-d0-lr1e-3,-scratch4): models/<task><suffix> for sst2, hatexplain, eraser;
#      BIN (build/salient), SEEDS (0,1,2), BUDGET (90 s per baseline and held-out task),
#      MPI (e.g. "mpirun -np 2": the ExpNet evaluations run as that many one-thread ranks sharing out
#      the units, docs/distributed.md; start no other job then, the budget is wall time),
#      BASELINES (every registered post-hoc explainer but lime and kernel_shap: on these 4 x 256 models
#      a first chunk of 8 ERASER documents alone would take about 2 hours (LIME) and 50 minutes
#      (KernelSHAP), and the budget, checked between chunks, drops them on every task anyway;
#      docs/results/pretraining.md).
# Outputs: runs/expnet/loto3-paper<suffix>/, loto3-variant<suffix>/, ablation3-paper<suffix>/ (evaluate.json, report.md) and runs/attattr/sst2<suffix>/
# (heads.json, prune.{json,md,svg}). A finished output is not redone; the ExpNet units resume.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
SUFFIXES=${SUFFIXES:--pre-d0-lr1e-3,-scratch4}
SEEDS=${SEEDS:-0,1,2}
BUDGET=${BUDGET:-90}
read -r -a MPI_PREFIX <<< "${MPI:-}"
BASELINES=${BASELINES:-random,saliency,grad_x_input,ig,occlusion,raw_attention,attention_mean,attention_mean_last,rollout,attention_gradcam,cam,gae,attcat,lrp_partial,lrp_full,transformer_attribution,mgae}
what=${1:-all}
case $what in expnet|variant|ablation|attattr|all) ;; *) echo "unknown part '$what' (expnet, variant, ablation, attattr, all)" >&2; exit 2 ;; esac
IFS=, read -ra suffixes <<< "$SUFFIXES"
needed=(sst2 hatexplain eraser); [ "$what" = attattr ] && needed=(sst2)  # AttAttr reads the SST-2 model only
for s in "${suffixes[@]}"; do
  for t in "${needed[@]}"; do
    [ -f "models/$t$s/config.json" ] || { echo "models/$t$s/config.json not found (scripts/pretrain_vs_scratch.sh makes it)" >&2; exit 2; }
  done
done

# ExpNet's leave-one-task-out evaluation on the three tasks' models of suffix $1 into $2; $3...: options.
expnet_evaluate() {
  local suffix=$1 out=$2
  shift 2
  ${MPI_PREFIX[@]+"${MPI_PREFIX[@]}"} "$BIN" --threads 1 --quiet expnet evaluate --task "sst2=models/sst2$suffix" --task "hatexplain=models/hatexplain$suffix" \
    --task "eraser=models/eraser$suffix" --seeds "$SEEDS" --max-test 200 "$@" --out "$out" > "$out.log" 2>&1
}
expnet() { expnet_evaluate "$1" "runs/expnet/loto3-paper$1" --baselines "$BASELINES" --tune-examples 60 \
  --baseline-budget "$BUDGET" --scale raw --head-pool none; }
variant() { expnet_evaluate "$1" "runs/expnet/loto3-variant$1" --baselines none; }
# One change at a time from the paper's configuration (features, directions, layers, scale, head
# pooling, loss, filter, MLP size, feature selection on the source tasks); 600 training examples
# per source task, as the earlier ablations.
ablation() { expnet_evaluate "$1" "runs/expnet/ablation3-paper$1" --baselines none --max-train 600 --ablation \
  --scale raw --head-pool none; }

attattr() {  # $1 = suffix; the last layer's top-k heads are pruned too, as docs/attattr.md does
  local out=runs/attattr/sst2$1 model=models/sst2$1 last
  mkdir -p "$out"
  last=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['num_hidden_layers'] - 1)" "$model/config.json")
  [ -f "$out/heads.json" ] || "$BIN" --threads 1 --quiet attattr heads --model "$model" --out "$out/heads.json"
  "$BIN" --threads 1 --quiet attattr prune --model "$model" --heads "$out/heads.json" --layer "$last" \
    --out "$out/prune.json" --svg "$out/prune.svg" --markdown "$out/prune.md"
}

wants() { [ "$what" = all ] || [ "$what" = "$1" ]; }  # is part $1 asked for?
mkdir -p runs/expnet runs/attattr
pids=()
status=0
for s in "${suffixes[@]}"; do
  (
    for part in expnet variant ablation attattr; do
      if wants $part; then $part "$s"; fi
    done
  ) &
  pids+=($!)
  # Under MPI the ranks already fill the cores: one suffix after another.
  if [ ${#MPI_PREFIX[@]} -gt 0 ]; then wait "$!" || status=$?; pids=(); fi
done
for p in "${pids[@]+"${pids[@]}"}"; do wait "$p" || status=$?; done
[ $status -eq 0 ] || { echo "a run failed (ExpNet logs: runs/expnet/loto3-*.log; AttAttr: the messages above)" >&2; exit 1; }
for s in "${suffixes[@]}"; do
  if wants expnet; then echo "ExpNet, the paper's configuration$s: runs/expnet/loto3-paper$s/report.md"; fi
  if wants variant; then echo "ExpNet, salient's variant$s: runs/expnet/loto3-variant$s/report.md"; fi
  if wants ablation; then echo "ExpNet ablation$s: runs/expnet/ablation3-paper$s/report.md"; fi
  if wants attattr; then echo "AttAttr$s:"; cat "runs/attattr/sst2$s/prune.md"; fi
done
