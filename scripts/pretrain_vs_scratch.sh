#!/usr/bin/env bash
# Fine-tuned from a pre-trained encoder against the same shape trained from scratch (issue #19's
# comparison), task by task. For each task both runs of scripts/train_models.sh go at once, one
# thread each, so the two share the machine's load and its time caps give them the same compute.
#   INIT=models/pretrained scripts/pretrain_vs_scratch.sh [cola hatexplain sst2 eraser]
# env: INIT (required), DROPOUT (fine-tuning dropout of both sides; default 0.1, as BERT's
#      fine-tuning, also for an encoder pre-trained without dropout), PRE_SUFFIX (-pretrained),
#      SCRATCH_SUFFIX (-scratch4), SCRATCH_LR (2e-4, the fine-tuning rate; see docs/results/pretraining.md),
#      SEED (13, both sides; with other suffixes, to see the spread over seeds).
# The scratch side takes the encoder's shape from $INIT/config.json. Models: models/<task><suffix>,
# held-out metrics: runs/test_<task><suffix>.json; the table: $TABLE (default runs/pretrain_vs_scratch.md).
# Resumable: train_models.sh resumes an interrupted run and a finished one is not redone.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${INIT:?INIT=DIR: the pre-trained encoder (scripts/pretrain.sh)}"
[ -f "$INIT/config.json" ] || { echo "INIT: $INIT/config.json not found" >&2; exit 2; }
PRE_SUFFIX=${PRE_SUFFIX:--pretrained}
SCRATCH_SUFFIX=${SCRATCH_SUFFIX:--scratch4}
TABLE=${TABLE:-runs/pretrain_vs_scratch.md}
export DROPOUT=${DROPOUT:-0.1} THREADS=1
shape() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$INIT/config.json" "$1"; }
LAYERS=$(shape num_hidden_layers) HIDDEN=$(shape hidden_size) HEADS=$(shape num_attention_heads)
INTERMEDIATE=$(shape intermediate_size)
tasks=("$@")
[ ${#tasks[@]} -eq 0 ] && tasks=(cola hatexplain sst2 eraser)
python3 scripts/held_out.py check "${tasks[@]}"
for t in "${tasks[@]}"; do
  # ERASER from scratch starts from the scratch SST-2 model (train_models.sh makes it if missing);
  # the encoder side fine-tunes the encoder directly unless ERASER_FROM=sst2.
  SUFFIX=$PRE_SUFFIX INIT_LR=${INIT_LR:-2e-4} ERASER_FROM=${ERASER_FROM:-encoder} scripts/train_models.sh "$t" &
  pre=$!
  INIT=none ERASER_FROM=sst2 SUFFIX=$SCRATCH_SUFFIX LR=${SCRATCH_LR:-2e-4} LAYERS=$LAYERS HIDDEN=$HIDDEN HEADS=$HEADS \
    INTERMEDIATE=$INTERMEDIATE scripts/train_models.sh "$t" &
  scratch=$!
  status=0
  wait $pre || status=$?
  wait $scratch || status=$?
  [ $status -eq 0 ] || { echo "$t: a run failed (logs: runs/train_$t*.log)" >&2; exit 1; }
done
# The table: the reported metric of each task on its held-out split (train_models.sh's choice).
PYTHONPATH=scripts python3 - "$PRE_SUFFIX" "$SCRATCH_SUFFIX" "$INIT" > "$TABLE.tmp" <<'EOF'
import json, os, sys
from held_out import HELD_OUT, reported
pre, scratch, init = sys.argv[1:]
print(f"| task | held-out split | metric | from scratch (`{scratch}`) | from `{init}` (`{pre}`) | best dev epoch (scratch / pre-trained) |")
print("|---|---|---|---|---|---|")
def best_epoch(task, suffix):
    path = f"runs/train_{task}{suffix}.json"
    return str(json.load(open(path))["best_epoch"]) if os.path.exists(path) else "-"
for task, (split, metric) in HELD_OUT.items():
    cells = ["not run" if (v := reported(task, suffix)) is None else f"{v:.3f}" for suffix in (scratch, pre)]
    epochs = [best_epoch(task, suffix) for suffix in (scratch, pre)]
    print(f"| {task} | {split} | {metric} | {cells[0]} | {cells[1]} | {' / '.join(epochs)} |")
EOF
mv "$TABLE.tmp" "$TABLE"
cat "$TABLE"
