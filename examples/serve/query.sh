#!/usr/bin/env bash
# Start `salient serve` on a model, ask its JSON API (docs/serve.md) for a prediction and for two
# explanations with their faithfulness, then stop the server.
#   examples/serve/query.sh MODEL_DIR [TEXT]      (SALIENT_BIN: the CLI, default build/salient)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: query.sh MODEL_DIR [TEXT]" >&2; exit 2; }
BIN=${SALIENT_BIN:-build/salient}
TEXT=${2:-a charming and moving journey}
log=$(mktemp)
"$BIN" --quiet serve --model "$1" --port 0 > "$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -f "$log"' EXIT
# --port 0 takes any free port and prints it on the first line.
port=
for _ in $(seq 300); do
  port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$log")
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "query.sh: salient serve did not start" >&2; cat "$log" >&2; exit 1; }
text_json=$(printf '%s' "$TEXT" | sed 's/\\/\\\\/g; s/"/\\"/g')
api() { curl -sS --fail-with-body -H 'Content-Type: application/json' -d "$2" "http://127.0.0.1:$port/api/$1"; echo; }
api predict "{\"text\": \"$text_json\"}"
api explain "{\"text\": \"$text_json\", \"methods\": [\"saliency\", {\"name\": \"ig\", \"params\": {\"steps\": 16}}], \"faithfulness\": true}"
