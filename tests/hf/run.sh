#!/usr/bin/env bash
# ctest HF.Parity: tests/hf with the references' venv (scripts/reference_env.sh). Exit 77 (ctest's
# skip) with the reason where the venv could not be made; a missing pre-trained model is a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${REFERENCE_VENV:-.venv-ref}
if [ ! -x "$VENV/bin/python" ]; then
  echo "skipped: $VENV not found: scripts/reference_env.sh could not install Hugging Face transformers here"
  exit 77
fi
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/hf "$@"
