#!/usr/bin/env bash
# Pre-training throughput, salient vs PyTorch eager (bench/pretrain_eager.py under /usr/bin/python3, Debian's python3-torch),
# one after the other on this machine at the same shape, batch, length, masking rate and threads.
#   bench/pretrain_throughput.sh [STEPS]     (default 30; run from the repository root after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-30}
THREADS=${SALIENT_THREADS:-$(nproc)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
build/salient --quiet corpus build -o "$TMP/corpus.txt" >/dev/null
build/salient --quiet --threads "$THREADS" pretrain --corpus "$TMP/corpus.txt" --vocab ../shared/data/bert_base_uncased_tokenizer \
  -o "$TMP/run" --max-steps "$STEPS" --eval-every 100000 --save-every 100000 --heldout 0.001 2>/dev/null >/dev/null
python3 - "$TMP/run/pretrain.json" "$STEPS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"salient: {r['steps']} steps in {r['seconds']:.1f} s, {r['tokens_per_second']:.0f} tokens/s "
      f"(shape {r['settings']['layers']}x{r['settings']['hidden']}, {r['settings']['heads']} heads, "
      f"batch {r['settings']['batch_size']} x {r['settings']['max_length']})")
PY
/usr/bin/python3 bench/pretrain_eager.py --steps "$STEPS" --threads "$THREADS"
