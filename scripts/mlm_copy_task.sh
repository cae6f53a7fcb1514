#!/usr/bin/env bash
# Is salient pretrain's plateau (docs/results/pretraining.md) salient's own? A synthetic corpus whose masked
# pieces are predictable only from context: each line is 6 random words (300 single-piece words of
# the BERT vocabulary) written twice, so a masked word can be copied from 6 positions away. The
# same model (2 layers, hidden 64, 4 heads, 64 tokens, batch 32, lr 1e-3) is trained by
# `salient pretrain` and by an independent PyTorch eager implementation (bench/pretrain_eager.py
# --corpus), and their held-out MLM loss and accuracy are printed side by side.
#   scripts/mlm_copy_task.sh [STEPS=2000]      (env BIN, OUT=runs/mlm_copy_task, THREADS=1)
# Recipe probes (salient only with EAGER=0): LR=1e-3 WARMUP=0.06 DROPOUT=0.1 BATCH=32 LAYERS=2 MAXLEN=64.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-2000}
BIN=${BIN:-build/salient}
OUT=${OUT:-runs/mlm_copy_task}
THREADS=${THREADS:-1}
LR=${LR:-1e-3}
WARMUP=${WARMUP:-0.06}
DROPOUT=${DROPOUT:-0.1}
BATCH=${BATCH:-32}
LAYERS=${LAYERS:-2}
MAXLEN=${MAXLEN:-64}
EAGER=${EAGER:-1}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
VOCAB=$SHARED/data/bert_base_uncased_tokenizer/vocab.txt
mkdir -p "$OUT"
/usr/bin/python3 - "$VOCAB" "$OUT/copy.txt" <<'PY'
import random, sys
random.seed(1)
vocab = [line.strip() for line in open(sys.argv[1], encoding="utf-8")]
words = [w for w in vocab[2000:6000] if w.isalpha() and len(w) > 3][:300]
with open(sys.argv[2], "w") as f:
    for _ in range(20000):
        s = [random.choice(words) for _ in range(6)]
        f.write(" ".join(s + s) + "\n")
PY
SHAPE=(--layers "$LAYERS" --hidden 64 --heads 4 --intermediate 256 --max-length "$MAXLEN" --batch-size "$BATCH")
"$BIN" --threads "$THREADS" --quiet pretrain --corpus "$OUT/copy.txt" --vocab "$(dirname "$VOCAB")" --out "$OUT/salient" \
  "${SHAPE[@]}" --lr "$LR" --warmup "$WARMUP" --dropout "$DROPOUT" --max-steps "$STEPS" --eval-every 250 --seed 1 \
  > "$OUT/salient.json"
echo "salient pretrain (step, held-out loss, accuracy):"
/usr/bin/python3 -c "import json,sys; [print(h['step'], round(h['heldout_loss'], 3), round(h['heldout_accuracy'], 3)) for h in json.load(open(sys.argv[1]))['history']]" "$OUT/salient.json"
[ "$EAGER" = 1 ] || exit 0
if [ "$WARMUP" != 0.06 ] || [ "$DROPOUT" != 0.1 ]; then
  echo "mlm_copy_task.sh: the eager twin has 6% warmup and dropout 0.1 fixed; set EAGER=0 for WARMUP/DROPOUT probes" >&2; exit 2
fi
/usr/bin/python3 bench/pretrain_eager.py --corpus "$OUT/copy.txt" --vocab "$VOCAB" "${SHAPE[@]}" --lr "$LR" \
  --steps "$STEPS" --eval-every 250 --threads "$THREADS" > "$OUT/eager.txt"
echo "PyTorch eager:"
cat "$OUT/eager.txt"
