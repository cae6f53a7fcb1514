#!/usr/bin/env bash
# The CLI's outputs of two builds compared byte for byte on the fixture model (a refactoring of the
# library or its clients must not change them; issue #51): predict, tokenize, every registered
# post-hoc explainer, evaluate, AttAttr's attribution and tree, a small benchmark (its results and
# summary without the timing fields, which differ from run to run), and the ViT's evaluate and
# explain on a tiny ViT (when the shared data has MNIST).
#   scripts/compare_cli.sh OLD_BIN NEW_BIN      (the shared data: $SALIENT_SHARED, else ../shared)
# Prints each differing output and exits 1; "compare_cli: N outputs identical" and 0 otherwise.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: compare_cli.sh OLD_BIN NEW_BIN" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
for bin in "$old" "$new"; do [ -x "$bin" ] || { echo "compare_cli: $bin is not an executable" >&2; exit 2; }; done
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${SALIENT_SHARED:-$(cd "$root/.." && pwd)/shared}
model=$shared/fixtures/reference-bert/model
[ -f "$model/config.json" ] || { echo "compare_cli: $model not found (set SALIENT_SHARED)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "a charming and moving journey" "dull , lifeless and bad" "not bad at all , actually quite charming" > "$tmp/in.txt"
cat > "$tmp/data.jsonl" <<'JSONL'
{"text": "a charming and moving journey", "label": 1, "rationale": [0, 1, 0, 1, 0]}
{"text": "dull , lifeless and bad", "label": 0, "rationale": [1, 0, 1, 0, 1]}
{"text": "not bad at all , actually quite charming", "label": 1, "rationale": [0, 0, 0, 0, 0, 0, 1, 1]}
JSONL
# run NAME ARGS...: both binaries, stdout (and -o/--out files) into $tmp/{old,new}/NAME.
n=0 status=0
run() {
  local name=$1; shift
  for side in old new; do
    local bin=${!side}
    mkdir -p "$tmp/$side"
    (cd "$tmp/$side" && "$bin" --threads 1 --quiet "$@" < "$tmp/in.txt" > "$name.out" 2> "$name.err") ||
      { echo "compare_cli: $side: salient $* failed: $(cat "$tmp/$side/$name.err")" >&2; status=1; }
  done
  if ! cmp -s "$tmp/old/$name.out" "$tmp/new/$name.out"; then
    echo "compare_cli: '$name' differs (salient $*):" >&2
    diff "$tmp/old/$name.out" "$tmp/new/$name.out" | head -5 >&2
    status=1
  fi
  n=$((n + 1))
}
run predict predict --model "$model" --format json
run tokenize tokenize --model "$model"
for method in $("$new" explain --list 2>/dev/null | awk '/^[a-z_]+ /{print $1}'); do
  case $method in expnet|sst|smat) continue ;; esac  # learned: they need a trained artifact
  run "explain-$method" explain --model "$model" --method "$method" --format json
done
run explain-target explain --model "$model" --method saliency --target 0 --score logit --format json
run evaluate evaluate --model "$model" --data "$tmp/data.jsonl"
run attattr attattr attribute --model "$model" --m 4
run tree attattr tree --model "$model" --data "$tmp/data.jsonl" --index 0 --m 4
run benchmark benchmark --model "$model" --data "$tmp/data.jsonl" --methods ig,saliency,occlusion \
  --metrics token_f1,aopc_comprehensiveness --out bench
for side in old new; do  # the benchmark's files without time and memory
  python3 - "$tmp/$side/bench" > "$tmp/$side/bench.txt" <<'PY'
import json, sys
d = sys.argv[1]
# estimated_mem_mb: an estimate, deterministic, but absent from binaries before issue #88.
drop = {"time_ms", "peak_mem_mb", "estimated_mem_mb"}
for line in open(f"{d}/results.jsonl"):
    j = json.loads(line)
    j["metrics"] = {k: v for k, v in j.get("metrics", {}).items() if k not in drop}
    print(json.dumps(j, sort_keys=True))
print(json.dumps(json.load(open(f"{d}/summary.json")), sort_keys=True))
PY
done
if ! cmp -s "$tmp/old/bench.txt" "$tmp/new/bench.txt"; then
  echo "compare_cli: the benchmark's results differ:" >&2
  diff "$tmp/old/bench.txt" "$tmp/new/bench.txt" | head -5 >&2
  status=1
fi
# The ViT commands, on a tiny ViT the old build trains on MNIST (when the shared data has it).
if [ -d "$shared/data/mnist" ]; then
  "$old" --quiet --threads 1 vit train --data mnist:train --dev mnist:val -o "$tmp/vit" --data-dir "$shared/data" \
    --hidden 16 --layers 1 --heads 2 --intermediate 16 --epochs 1 --max-train-examples 256 > /dev/null
  vit=(--model "$tmp/vit" --data mnist:test --data-dir "$shared/data")
  run vit-evaluate vit evaluate "${vit[@]}" --limit 50
  run vit-explain-ig vit explain "${vit[@]}" --limit 3 --method ig --steps 8
  run vit-explain-rollout vit explain "${vit[@]}" --limit 3 --method rollout -o views
  if ! diff -r "$tmp/old/views" "$tmp/new/views" > /dev/null; then
    echo "compare_cli: vit explain -o: the files differ" >&2
    status=1
  fi
fi
[ $status -eq 0 ] && echo "compare_cli: $n outputs identical"
exit $status
