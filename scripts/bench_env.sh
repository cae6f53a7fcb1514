#!/usr/bin/env bash
# The peers' environment for the benchmarks (issue #86 item 3): PyPI's current torch, transformers
# and Captum as a user installs them today, pinned by version and sha256 in
# scripts/requirements-bench.txt, into .venv-bench (Debian's python3, no system site packages, so
# nothing of Debian's torch 1.13 leaks in). Installed on demand, never in CI (~5.7 GB); salient
# itself never needs it. Idempotent: a venv made from the same requirements file is left as it is.
# WHEELS=DIR installs from wheels already downloaded there (pip download -d DIR -r ...).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pinned_venv.sh
VENV=${BENCH_VENV:-.venv-bench}
pinned_venv bench_env "$VENV" scripts/requirements-bench.txt "import torch, transformers, captum.attr, sklearn.linear_model"
echo "bench_env: $VENV ready ($("$VENV/bin/python" -c 'import torch, transformers, captum; print(f"torch {torch.__version__}, transformers {transformers.__version__}, captum {captum.__version__}")'))"
