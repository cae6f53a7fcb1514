#!/usr/bin/env bash
# examples/ build and run as a user would run them (docs: examples/README.md), on the reference
# fixture model: the library installed into a fresh prefix and the C++ example built against it with
# find_package(salient); the Python example on the package built in BUILD/python; the serve example
# against BUILD/salient. Each one's prediction must be the CLI's.
#   examples_test.sh BUILD_DIR [SERVE]   (SERVE: CMake's SALIENT_SERVE, default ON; OFF leaves the
#                                         serve example out. The shared data: $SALIENT_SHARED, else ../shared)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
serve=${2:-ON}
shared=${SALIENT_SHARED:-$(cd "$root/.." && pwd)/shared}
model=$shared/fixtures/reference-bert/model
[ -f "$model/config.json" ] || { echo "examples_test: $model not found (set SALIENT_SHARED)"; exit 1; }
text="a charming and moving journey"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
want=$("$build/salient" --quiet predict --model "$model" --format json <<< "$text" |
       /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); print(d["label"], round(d["probs"][d["label_id"]], 4))')

# C++: install, then a separate CMake project against the installed package.
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
generator=(); command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$root/examples/cpp" -B "$tmp/cpp" ${generator[@]+"${generator[@]}"} -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/cpp" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
out=$("$tmp/cpp/explain" "$model" "$text" ig)
echo "$out"
got=$(sed -n 's/^prediction: \(.*\) (p = \(.*\))$/\1 \2/p' <<< "$out" | awk '{printf "%s %.4f\n", $1, $2}')
[ "$got" = "$(awk '{printf "%s %.4f\n", $1, $2}' <<< "$want")" ] || { echo "C++ example: '$got', the CLI: '$want'"; exit 1; }
[ "$(grep -c $'\t' <<< "$out")" -eq 5 ] || { echo "C++ example: expected 5 word scores"; exit 1; }

# Python.
out=$(PYTHONPATH="$build/python" /usr/bin/python3 "$root/examples/python/explain.py" "$model" "$text" ig)
echo "$out"
got=$(sed -n 's/^prediction: \(.*\) (p = \(.*\))$/\1 \2/p' <<< "$out" | awk '{printf "%s %.4f\n", $1, $2}')
[ "$got" = "$(awk '{printf "%s %.4f\n", $1, $2}' <<< "$want")" ] || { echo "Python example: '$got', the CLI: '$want'"; exit 1; }

# salient serve and its JSON API.
case $serve in ON|on|1|TRUE|true|YES|yes) ;; *) echo "examples_test: ok (no serve: SALIENT_SERVE=$serve)"; exit 0 ;; esac
out=$(SALIENT_BIN="$build/salient" "$root/examples/serve/query.sh" "$model" "$text")
echo "$out"
printf '%s\n' "$out" > "$tmp/serve.jsonl"
/usr/bin/python3 - "$want" "$tmp/serve.jsonl" <<'PY'
import json, sys
label, prob = sys.argv[1].split()
pred, expl = (json.loads(line) for line in open(sys.argv[2]).read().splitlines() if line.strip())
assert pred["label"] == label and abs(pred["probs"][pred["label_id"]] - float(prob)) < 1e-4, pred
assert [e["method"] for e in expl["explanations"]] == ["saliency", "ig"], expl
assert all("faithfulness" in e for e in expl["explanations"]), expl
PY
echo "examples_test: ok"
