#!/usr/bin/env bash
# The virtual environment of the Python references (tests/hf, bench/): Debian's python3 with its
# system packages (python3-torch 1.13, numpy, matplotlib) plus the wheels pinned by version and sha256 in
# scripts/requirements-reference.txt (Hugging Face transformers and its tokenizers), into .venv-ref.
# Idempotent: a venv made from the same requirements file is left as it is. Nothing in salient needs
# it at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${REFERENCE_VENV:-.venv-ref}
REQ=scripts/requirements-reference.txt
stamp=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.requirements-sha256" 2>/dev/null)" = "$stamp" ]; then
  echo "reference_env: $VENV is up to date"; exit 0
fi
rm -rf "$VENV"
/usr/bin/python3 -m venv --system-site-packages "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes -r "$REQ"
"$VENV/bin/python" -c "import transformers, tokenizers, torch, captum.attr, sklearn.metrics, scipy.stats" # fails here, not in a test, if a wheel does not import
echo "$stamp" > "$VENV/.requirements-sha256"
echo "reference_env: $VENV ready (transformers $("$VENV/bin/python" -c 'import transformers; print(transformers.__version__)'))"
