#!/usr/bin/env bash
# Pre-training throughput, salient vs PyTorch eager (bench/pretrain_eager.py under /usr/bin/python3, Debian's python3-torch),
# one after the other on this machine at the same shape, batch, length, masking rate and threads.
#   bench/pretrain_throughput.sh [STEPS] [REPEATS]    (default 30 steps, 1 repeat; run from the repository root after
#                                                     scripts/build.sh). REPEATS > 1 alternates salient and eager that
#                                                     many times (drift hits both alike) and prints each pair's ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-30}
REPEATS=${2:-1}
[[ $STEPS =~ ^[1-9][0-9]*$ ]] || { echo "pretrain_throughput.sh: STEPS must be a positive integer, got '$STEPS'" >&2; exit 2; }
[[ $REPEATS =~ ^[1-9][0-9]*$ ]] || { echo "pretrain_throughput.sh: REPEATS must be a positive integer, got '$REPEATS'" >&2; exit 2; }
THREADS=${SALIENT_THREADS:-$(nproc)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
build/salient --quiet corpus build -o "$TMP/corpus.txt" >/dev/null
: > "$TMP/pairs"
for ((r = 1; r <= REPEATS; r++)); do
  rm -rf "$TMP/run"
  build/salient --quiet --threads "$THREADS" pretrain --corpus "$TMP/corpus.txt" --vocab ../shared/data/bert_base_uncased_tokenizer \
    -o "$TMP/run" --max-steps "$STEPS" --eval-every 100000 --save-every 100000 --heldout 0.001 2>/dev/null >/dev/null
  salient_line=$(python3 - "$TMP/run/pretrain.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"salient: {r['steps']} steps in {r['seconds']:.1f} s, {r['tokens_per_second']:.0f} tokens/s "
      f"(shape {r['settings']['layers']}x{r['settings']['hidden']}, {r['settings']['heads']} heads, "
      f"batch {r['settings']['batch_size']} x {r['settings']['max_length']})")
PY
)
  eager_line=$(/usr/bin/python3 bench/pretrain_eager.py --steps "$STEPS" --threads "$THREADS")
  echo "$salient_line"
  echo "$eager_line"
  salient_rate=${salient_line%% tokens/s*} eager_rate=${eager_line%% tokens/s*}
  echo "${salient_rate##* } ${eager_rate##* }" >> "$TMP/pairs"  # tokens/s of this pair: salient, eager
done
if ((REPEATS > 1)); then
  python3 - "$TMP/pairs" <<'PY'
import statistics, sys
ratios = [s / e for s, e in (map(float, line.split()) for line in open(sys.argv[1]))]
print("salient / eager tokens/s per pair: " + ", ".join(f"{x:.3f}" for x in ratios)
      + f"; median {statistics.median(ratios):.3f}")
PY
fi
