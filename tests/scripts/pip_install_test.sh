#!/usr/bin/env bash
# The Python package installed as Python users install things (docs/python.md): salient installed
# into a prefix (cmake --install), a fresh virtual environment without Debian's packages, the pinned
# build backend and NumPy/pytest from scripts/requirements-python.txt, then `pip install ./python`
# against that prefix. The package must import from the environment, not from BUILD/python, carry
# the library's version, and pass the package's tests (tests/python: test_bindings, test_sst_smat,
# test_expnet_attattr, test_vit) and the Python example there.
#   pip_install_test.sh BUILD_DIR      (the shared data: $SALIENT_SHARED, else ../shared)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
work=$build/pip-install-test   # a fixed path, so that ccache finds the extension's object again
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
/usr/bin/python3 -m venv "$work/venv"
py=$work/venv/bin/python
"$py" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes -r "$root/scripts/requirements-python.txt"
launcher=(); command -v ccache > /dev/null && launcher=(env CMAKE_CXX_COMPILER_LAUNCHER=ccache)
${launcher[@]+"${launcher[@]}"} env CMAKE_PREFIX_PATH="$work/prefix" \
  "$py" -m pip install --verbose --disable-pip-version-check --no-build-isolation --no-deps \
  --config-settings=build-dir="$work/skbuild" "$root/python" > "$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; exit 1; }
grep -q "salient python: the installed salient at $work/prefix" "$work/pip.log" ||
  { echo "pip_install_test: the extension was not built against $work/prefix"; cat "$work/pip.log"; exit 1; }

# Imported from the environment (not BUILD/python, not a .pth file), the library's version.
(cd "$work" && "$py" - "$work/venv" "$root/include/salient/version.h" <<'PY'
import importlib.metadata, re, sys
import salient
venv, header = sys.argv[1], sys.argv[2]
assert salient.__file__.startswith(venv + "/"), f"salient imported from {salient.__file__}, not from {venv}"
want = re.search(r'#define SALIENT_VERSION "([0-9.]+)"', open(header).read()).group(1)
assert salient.__version__ == want == importlib.metadata.version("salient"), (salient.__version__, want)
print(f"pip_install_test: salient {salient.__version__} from {salient.__file__}, {len(salient.methods())} explainers")
PY
)
cd "$root"
SALIENT_BIN="$build/salient" "$py" -m pytest -q -p no:cacheprovider tests/python/test_bindings.py \
  tests/python/test_sst_smat.py tests/python/test_expnet_attattr.py tests/python/test_vit.py
shared=${SALIENT_SHARED:-$(cd "$root/.." && pwd)/shared}
"$py" examples/python/explain.py "$shared/fixtures/reference-bert/model" "a charming and moving journey" ig
echo "pip_install_test: ok"
