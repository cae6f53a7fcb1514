#!/usr/bin/env bash
# Pre-trains the encoder the task models are fine-tuned from: the corpus (salient corpus build:
# train texts of every task, GCIDE and WordNet glosses, dev/test texts removed) and BERT MLM at the default shape
# (4 layers, hidden 256, 8 heads, intermediate 1024, 128 tokens, batch 32).
#   scripts/pretrain.sh [MAX_STEPS] [MAX_MINUTES]     → models/pretrained (resumes when re-run)
# Recipe (env): LR, DROPOUT, MAXLEN (--max-length), BATCH, and the shape LAYERS, HIDDEN, HEADS, INTERMEDIATE
#   (unset: salient pretrain's defaults),
#   OUT=models/pretrained, RUNS=runs (pretrain.json/.log), THREADS=2, SEED=13.
# Corpus (env): GCIDE, WORDNET (salient corpus build's --gcide/--wordnet: auto, none or a path;
#   unset: auto), CORPUS=models/corpus/corpus.txt (where it is written; give another name with other sources).
# Continued pre-training: FROM=DIR starts from that saved encoder (salient pretrain --init: its weights,
#   its held-out slice, a fresh schedule; give it another SEED for other batches and masks).
# Then: INIT=models/pretrained scripts/train_models.sh   → models/<task>-pretrained
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
export SALIENT_SHARED=$SHARED
STEPS=${1:-3000}
MINUTES=${2:-0}
OUT=${OUT:-models/pretrained}
RUNS=${RUNS:-runs}
CORPUS=${CORPUS:-models/corpus/corpus.txt}
mkdir -p "$(dirname "$CORPUS")" "$RUNS"
trap 'rm -f "$RUNS/pretrain.json.tmp"' EXIT  # a failed run leaves no partial pretrain.json
"$BIN" --quiet corpus build -o "$CORPUS" ${GCIDE:+--gcide "$GCIDE"} ${WORDNET:+--wordnet "$WORDNET"} > "$RUNS/corpus.json"
"$BIN" --threads "${THREADS:-2}" pretrain --corpus "$CORPUS" --vocab "$SHARED/data/bert_base_uncased_tokenizer" \
  --out "$OUT" ${LR:+--lr "$LR"} ${DROPOUT:+--dropout "$DROPOUT"} ${MAXLEN:+--max-length "$MAXLEN"} ${BATCH:+--batch-size "$BATCH"} \
  ${LAYERS:+--layers "$LAYERS"} ${HIDDEN:+--hidden "$HIDDEN"} ${HEADS:+--heads "$HEADS"} ${INTERMEDIATE:+--intermediate "$INTERMEDIATE"} \
  ${FROM:+--init "$FROM"} --max-steps "$STEPS" --max-minutes "$MINUTES" --eval-every 250 --save-every 250 \
  --seed "${SEED:-13}" --resume > "$RUNS/pretrain.json.tmp" 2> "$RUNS/pretrain.log"
mv "$RUNS/pretrain.json.tmp" "$RUNS/pretrain.json"
cat "$RUNS/pretrain.json"
