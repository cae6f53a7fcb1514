#!/usr/bin/env bash
# The virtual environment of the Python references (tests/hf, bench/): Debian's python3 with its
# system packages (python3-torch 1.13, numpy, matplotlib) plus the wheels pinned by version and sha256 in
# scripts/requirements-reference.txt (Hugging Face transformers and its tokenizers), into .venv-ref.
# Idempotent: a venv made from the same requirements file is left as it is. Nothing in salient needs
# it at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pinned_venv.sh
VENV=${REFERENCE_VENV:-.venv-ref}
pinned_venv reference_env "$VENV" scripts/requirements-reference.txt \
  "import transformers, tokenizers, torch, captum.attr, sklearn.metrics, scipy.stats" --system-site-packages
echo "reference_env: $VENV ready (transformers $("$VENV/bin/python" -c 'import transformers; print(transformers.__version__)'))"
