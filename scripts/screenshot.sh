#!/usr/bin/env bash
# The README's picture of `salient serve` (docs/images/serve.png), taken by the browser test
# (tests/python/test_serve.py, headless Chromium) on a real model: the quick start's MiniLM SST-2
# model unless MODEL is given. Every number on the page is checked against the Python package first.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${MODEL:-models/sst2-minilm-quick}
[ -f "$MODEL/config.json" ] || { echo "MODEL: $MODEL/config.json not found (scripts/quickstart.sh makes it)" >&2; exit 2; }
out=$(mktemp -d)
SALIENT_PAGE_MODEL=$MODEL SALIENT_PAGE_TEXT=${TEXT:-"not bad at all, actually quite charming"} SALIENT_ARTIFACTS=$out \
  PYTHONPATH=${BUILD_DIR:-build}/python /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  tests/python/test_serve.py -k headless_chromium
cp "$out/serve.png" docs/images/serve.png
echo "docs/images/serve.png from $MODEL"
