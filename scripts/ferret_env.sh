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
VENV=${FERRET_VENV:-.venv-ferret}
REQ=scripts/requirements-ferret.txt
stamp=$(sha256sum "$REQ" | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.requirements-sha256" 2>/dev/null)" = "$stamp" ]; then
  echo "ferret_env: $VENV is up to date"; exit 0
fi
rm -rf "$VENV"
/usr/bin/python3 -m venv --system-site-packages "$VENV"
# --no-build-isolation: lime and pytreebank are source archives only; pip builds them with Debian's
# setuptools instead of fetching an unpinned one into a build environment.
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes --no-build-isolation \
  ${WHEELS:+--no-index --find-links "$WHEELS"} -r "$REQ"
# Fails here, not in the benchmark, if a package is missing or does not import: ferret's own
# entry point, as its README uses it.
"$VENV/bin/python" -c "from ferret import Benchmark, GradientExplainer, IntegratedGradientExplainer; import transformers, captum.attr"
"$VENV/bin/python" -c "import captum; assert captum.__version__ == '0.7.0', captum.__version__" # not .venv-ref's 0.8.0
echo "$stamp" > "$VENV/.requirements-sha256"
echo "ferret_env: $VENV ready ($("$VENV/bin/python" -c 'import importlib.metadata as m, torch; print(", ".join([f"{p} {m.version(p)}" for p in ("ferret-xai", "captum", "transformers")] + ["torch " + torch.__version__]))'))"
