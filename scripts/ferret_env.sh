#!/usr/bin/env bash
# ferret-xai 0.4.2 with everything its Benchmark imports, for bench/ferret_vs_salient.py (issue #86
# item 2): Debian's python3 with its system packages (python3-torch 1.13, numpy 1.24, pandas, scipy,
# sklearn, matplotlib) plus the packages pinned by version and sha256 in scripts/requirements-ferret.txt
# (captum 0.7.0 as ferret asks, HF datasets 2.x, shap, lime, spaCy for thermostat, ...), into
# .venv-ferret. A venv of its own: .venv-ref (CI's) keeps captum 0.8.0 and ferret's evaluators only.
# Installed on demand, never in CI; salient itself never needs it. Idempotent: a venv made from the
# same requirements file is left as it is. WHEELS=DIR installs from files already downloaded there
# (pip download --no-deps -d DIR -r scripts/requirements-ferret.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pinned_venv.sh
VENV=${FERRET_VENV:-.venv-ferret}
# --no-build-isolation: lime and pytreebank are source archives only; pip builds them with Debian's
# setuptools instead of fetching an unpinned one into a build environment. The check is ferret's own
# entry point, as its README uses it, and captum 0.7.0 (not .venv-ref's 0.8.0).
PIP_ARGS=--no-build-isolation pinned_venv ferret_env "$VENV" scripts/requirements-ferret.txt \
  "from ferret import Benchmark, GradientExplainer, IntegratedGradientExplainer; import transformers, captum, captum.attr; assert captum.__version__ == '0.7.0', captum.__version__" \
  --system-site-packages
echo "ferret_env: $VENV ready ($("$VENV/bin/python" -c 'import importlib.metadata as m, torch; print(", ".join([f"{p} {m.version(p)}" for p in ("ferret-xai", "captum", "transformers")] + ["torch " + torch.__version__]))'))"
