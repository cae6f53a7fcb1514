#!/usr/bin/env bash
# Trains the task classifiers used across docs/: 2 layers, 4 heads, hidden 128 (so attention
# features align across tasks for ExpNet), bert-base-uncased vocabulary, fine-tuned from the
# encoder pre-trained on the task texts (models/pretrained-small-tasks, made by
# scripts/pretrain_task_encoder.sh; docs/training.md), or from scratch (INIT=none).
# Usage: scripts/train_models.sh [sst2|hatexplain|cola|eraser ...]   (default: all)
# Results (dev metrics per epoch) land in models/<task><suffix>/training.json, the held-out metric in
# runs/test_<task><suffix>.json; logs in runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
export SALIENT_SHARED=$SHARED
VOCAB=$SHARED/data/bert_base_uncased_tokenizer
THREADS=${THREADS:-2}
# INIT: unset = the docs' encoder, models/pretrained-small-tasks, into models/<task>;
#       none = from scratch, into models/<task>-scratch (the recipe of scripts/quickstart.sh);
#       DIR = another encoder, into models/<task>-pretrained.
# SUFFIX replaces the suffix. An encoder is fine-tuned at peak lr $INIT_LR (default 2e-4: the
# from-scratch 1e-3 is a from-scratch rate); its shape is its own.
#       minilm = the packaged pre-trained encoder (models/pretrained/all-minilm-l6-v2, scripts/fetch_pretrained.sh),
#                into models/<task>-minilm with its own recipe (below; docs/pretrained.md).
DOCS_ENCODER=models/pretrained-small-tasks
MINILM=models/pretrained/all-minilm-l6-v2
INIT=${INIT-$DOCS_ENCODER}
RECIPE=small
if [ "$INIT" = minilm ]; then INIT=$MINILM; RECIPE=minilm; SUFFIX=${SUFFIX--minilm}; fi
case $INIT in
  none) SUFFIX=${SUFFIX--scratch} ;;
  "$DOCS_ENCODER") SUFFIX=${SUFFIX-} ;;
  "") echo "INIT: empty (unset it for $DOCS_ENCODER, or give none or an encoder directory)" >&2; exit 2 ;;
  *) SUFFIX=${SUFFIX--pretrained} ;;
esac
if [ "$INIT" != none ] && [ ! -f "$INIT/config.json" ]; then
  if [ "$INIT" = "$DOCS_ENCODER" ]; then
    echo "INIT: $INIT/config.json not found: pre-train it first (scripts/pretrain_task_encoder.sh, about an hour), or INIT=none for from scratch" >&2
  elif [ "$RECIPE" = minilm ]; then
    echo "INIT: $INIT/config.json not found: fetch it first (scripts/fetch_pretrained.sh)" >&2
  else
    echo "INIT: $INIT/config.json not found" >&2
  fi
  exit 2
fi
# From scratch at another shape, e.g. the pre-training default to compare like with like:
#   INIT=none LAYERS=4 HIDDEN=256 HEADS=8 INTERMEDIATE=1024 SUFFIX=-scratch4 scripts/train_models.sh
# (LR=X sets the peak lr of these from-scratch runs; salient train's default otherwise.)
# An encoder pre-trained at fewer than 128 positions gets its table tiled for HateXplain (EXTEND;
# a no-op otherwise).
if [ "$INIT" = none ]; then
  SHAPE=(--vocab "$VOCAB" --hidden "${HIDDEN:-128}" --layers "${LAYERS:-2}" --heads "${HEADS:-4}"
         --intermediate "${INTERMEDIATE:-512}")
  RATE=(${LR:+--lr "$LR"}); EXTEND=()
else
  SHAPE=(--init "$INIT"); RATE=(--lr "${INIT_LR:-2e-4}"); EXTEND=(--extend-positions)
fi
# DROPOUT=X: hidden and attention dropout of every run (default 0.1, BERT's: the docs' encoder was
# pre-trained without dropout, and salient train --init would otherwise keep the encoder's value).
DROPOUT=${DROPOUT:-0.1}
DROP=(--dropout "$DROPOUT" --attention-dropout "$DROPOUT")
# SEED=N: the seed of every run (default 13), e.g. with another SUFFIX to measure the spread over seeds.
# ERASER_FROM=sst2|encoder: ERASER is fine-tuned from the SST-2 model of the same INIT and SUFFIX
# (default; made first if missing) or, with an encoder, from the encoder directly (far worse from
# 1,599 documents: docs/results/pretraining.md).
ERASER_FROM=${ERASER_FROM:-sst2}
case $ERASER_FROM in encoder|sst2) ;; *) echo "ERASER_FROM: '$ERASER_FROM' is not sst2 or encoder" >&2; exit 2 ;; esac
[ "$ERASER_FROM" = encoder ] && [ "$INIT" = none ] &&
  { echo "ERASER_FROM: encoder needs an encoder (INIT is none)" >&2; exit 2; }
[ "$ERASER_FROM" = encoder ] && [ "$RECIPE" = minilm ] &&
  { echo "ERASER_FROM: encoder is not a MiniLM recipe (its ERASER model starts from its SST-2 model)" >&2; exit 2; }
train() {  # task, then train options
  local task=$1; shift
  "$BIN" --threads "$THREADS" train --out "models/$task$SUFFIX" "${SHAPE[@]}" "${RATE[@]}" "${DROP[@]}" \
    --seed "${SEED:-13}" --resume "$@" \
    > "runs/train_$task$SUFFIX.json.tmp" 2> "runs/train_$task$SUFFIX.log"
  # Moved in whole: a table read during the run (pretrain_vs_scratch.sh) never sees a partial file.
  mv "runs/train_$task$SUFFIX.json.tmp" "runs/train_$task$SUFFIX.json"
  echo "$task$SUFFIX: $(cat "runs/train_$task$SUFFIX.json")"
}
# The reported number: the held-out split never used for choosing the checkpoint (dev picks it),
# as scripts/held_out.py names it for the table scripts.
held_out() {  # task, then evaluate options
  local split task=$1; shift
  split=$(python3 scripts/held_out.py split "$task")
  "$BIN" --threads "$THREADS" --quiet evaluate --model "models/$task$SUFFIX" --data "$split" "$@" \
    > "runs/test_$task$SUFFIX.json.tmp"
  mv "runs/test_$task$SUFFIX.json.tmp" "runs/test_$task$SUFFIX.json"
  echo "$task$SUFFIX held out: $(cat "runs/test_$task$SUFFIX.json")"
}
tasks=("$@")
if [ ${#tasks[@]} -eq 0 ]; then
  tasks=(sst2 hatexplain cola eraser)
fi
python3 scripts/held_out.py check "${tasks[@]}"  # all checked before anything trains
mkdir -p models runs
if [ "$RECIPE" = minilm ]; then
  # The packaged MiniLM (6 x 384, 12 heads, 512 positions): its own dropout (0.1), HF-style rates,
  # no time caps (the schedule runs to its end).
  RATE=(); DROP=()
  minilm_sst2() { train sst2 --train sst2:train --dev sst2:dev --max-length 64 --epochs 1 --batch-size 32 --lr 1e-4; }
  for t in "${tasks[@]}"; do
    case $t in
      sst2) minilm_sst2
            held_out sst2 ;;
      hatexplain) train hatexplain --train hatexplain:train --dev hatexplain:val --max-length 128 --epochs 2 \
                    --batch-size 32 --lr 5e-5 --select-metric macro_f1
                  held_out hatexplain ;;
      cola) train cola --train cola:train --dev cola:dev --max-length 64 --epochs 3 --batch-size 32 --lr 5e-5 \
              --select-metric mcc
            held_out cola ;;
      # Movie reviews (median 797 word pieces): fine-tuned from the SST-2 model (same domain; made
      # first if missing) on each review's first 256 pieces, then read whole at test time as
      # overlapping 512-piece windows (--windows, stride 255) whose logits are averaged.
      eraser) [ -f "models/sst2$SUFFIX/model.safetensors" ] || minilm_sst2
              ( SHAPE=(--init "models/sst2$SUFFIX")
                train eraser --train eraser:train --dev eraser:val --max-length 256 --epochs 2 --batch-size 16 \
                  --lr 3e-5 )
              held_out eraser --windows ;;
    esac
  done
  exit 0
fi
for t in "${tasks[@]}"; do
  case $t in
    sst2) train sst2 --train sst2:train --dev sst2:dev --max-length 64 --epochs 5 --max-minutes 15
          held_out sst2 ;;
    hatexplain) train hatexplain "${EXTEND[@]}" --train hatexplain:train --dev hatexplain:val \
                  --max-length 128 --epochs 6 --max-minutes 10 --select-metric macro_f1
                held_out hatexplain ;;
    cola) train cola --train cola:train --dev cola:dev --max-length 64 --epochs 10 --max-minutes 6 \
            --select-metric mcc
          held_out cola ;;
    # From scratch it stayed at chance (docs/training.md); fine-tuning the SST-2 model (same
    # domain, movie reviews) with its position table grown to 256 works, from scratch and from
    # an encoder (docs/pretraining.md); ERASER_FROM=encoder tiles the encoder's table to 256.
    eraser) if [ "$ERASER_FROM" = encoder ]; then
              train eraser --extend-positions --train eraser:train --dev eraser:val --max-length 256 \
                --batch-size 16 --epochs 6 --max-minutes 15
            else
              [ -f "models/sst2$SUFFIX/model.safetensors" ] ||
                train sst2 --train sst2:train --dev sst2:dev --max-length 64 --epochs 5 --max-minutes 15
              ( SHAPE=(--init "models/sst2$SUFFIX"); RATE=(--lr 3e-4)
                train eraser --extend-positions --train eraser:train --dev eraser:val \
                  --max-length 256 --batch-size 16 --epochs 6 --max-minutes 15 )
            fi
            held_out eraser ;;
  esac
done
