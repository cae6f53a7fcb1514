#!/usr/bin/env bash
# Peak resident memory of `salient explain` on one long text (about 490 word pieces) under each
# token budget (--max-batch-tokens), and whether the scores are the same under every budget
# (issue #88; docs/PERFORMANCE.md, "Batches sized by tokens"). The budget 1000000000 is the
# behaviour before token budgets: 64 rows per pass whatever their length.
#   bench/batch_memory.sh MODEL_DIR ["lime --samples 300;ig --steps 50"] ["1000000000 8192 4096 2048"]
# One thread; prints a markdown table. Peak memory does not depend on what else runs; the seconds do.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:?usage: bench/batch_memory.sh MODEL_DIR [METHODS] [BUDGETS]}
METHODS=${2:-"lime --samples 300;kernel_shap --samples 300;occlusion;ig --steps 50"}
BUDGETS=${3:-"1000000000 8192 4096 2048"}
BIN=${BIN:-build/salient}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -c "
import json
w = ('the film is a charming and moving journey through memory , loss and the small absurd moments of life '
     'that we rarely notice . ' * 40).split()
print(json.dumps({'text': ' '.join(w[:490])}))" > "$tmp/long.jsonl"
echo "| method | --max-batch-tokens | peak RSS (MB) | seconds | largest score difference to the first budget |"
echo "|---|---|---|---|---|"
IFS=';' read -ra methods <<< "$METHODS"
for m in "${methods[@]}"; do
  name=${m%% *}
  first=""
  for t in $BUDGETS; do
    out="$tmp/$name-$t.jsonl"
    # shellcheck disable=SC2086  # the method and its flags
    /usr/bin/time -f "%M %e" -o "$tmp/time" "$BIN" --threads 1 --quiet explain --model "$MODEL" --method $m \
      --max-batch-tokens "$t" -i "$tmp/long.jsonl" -o "$out" 2>/dev/null
    read -r kb secs < "$tmp/time"
    [ -n "$first" ] || first=$out
    diff=$(python3 -c "
import json, sys
a, b = (json.loads(open(p).readline())['token_scores'] for p in sys.argv[1:])
print('%.1e' % max(abs(x - y) for x, y in zip(a, b)))" "$first" "$out")
    echo "| $m | $t | $((kb / 1024)) | $secs | $diff |"
  done
done
