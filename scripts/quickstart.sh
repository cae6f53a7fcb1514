#!/usr/bin/env bash
# The main job on a fresh Debian machine: install dependencies, build, train a BERT-style
# SST-2 sentiment classifier from scratch on ../shared/data (about 15 minutes on 2 cores), then
# classify a few sentences with it and explain one with integrated gradients.
#   QUICK=1 scripts/quickstart.sh   trains for 3 minutes instead (lower accuracy)
# The model, models/sst2-scratch, is the from-scratch SST-2 model of scripts/train_models.sh
# (INIT=none, same recipe); the docs' models/sst2 is fine-tuned from a pre-trained encoder instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
BIN=build/salient
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
[ -d "$SHARED/data" ] || { echo "quickstart: $SHARED/data not found (set SALIENT_SHARED)" >&2; exit 1; }
export SALIENT_SHARED=$SHARED
MINUTES=15
[ "${QUICK:-0}" = "1" ] && MINUTES=3
MODEL=${MODEL_DIR:-models/sst2-scratch}
if [ ! -f "$MODEL/model.safetensors" ]; then
  $BIN --threads 2 train --train sst2:train --dev sst2:dev --out "$MODEL" \
    --vocab "$SHARED/data/bert_base_uncased_tokenizer" \
    --hidden 128 --layers 2 --heads 4 --intermediate 512 --max-length 64 \
    --epochs 5 --max-minutes "$MINUTES" --seed 13 --resume
fi
$BIN info --model "$MODEL"
printf '%s\n' "a gorgeous, witty and deeply moving film" \
  "the plot is thin and the jokes fall flat" \
  '{"text": "not bad at all , actually quite charming"}' > /tmp/salient_quickstart_inputs.txt
echo "--- predictions"
$BIN predict --model "$MODEL" < /tmp/salient_quickstart_inputs.txt
echo "--- integrated gradients (score per token) for the first sentence"
head -1 /tmp/salient_quickstart_inputs.txt | $BIN --quiet explain --model "$MODEL" --method ig
