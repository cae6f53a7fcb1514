# Sourced by scripts/reference_env.sh, bench_env.sh and ferret_env.sh: a virtual environment made
# from one requirements file whose every package is pinned by version and sha256, installed with
# --no-deps --require-hashes, and made again only when that file changes (its sha256 is kept in
# VENV/.requirements-sha256; an up-to-date venv ends the calling script).
#   pinned_venv NAME VENV REQUIREMENTS CHECK_PYTHON_CODE [python -m venv arguments...]
# PIP_ARGS: more pip install arguments; WHEELS=DIR installs from wheels already downloaded there.
pinned_venv() {
  local name=$1 venv=$2 req=$3 check=$4 stamp
  shift 4
  stamp=$(sha256sum "$req" | cut -d' ' -f1)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.requirements-sha256" 2>/dev/null)" = "$stamp" ]; then
    echo "$name: $venv is up to date"
    exit 0
  fi
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$@" "$venv"
  # shellcheck disable=SC2086  # PIP_ARGS is a list of arguments
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes ${PIP_ARGS:-} \
    ${WHEELS:+--no-index --find-links "$WHEELS"} -r "$req"
  "$venv/bin/python" -c "$check"  # fails here, not in a test or a benchmark, if a package does not import
  echo "$stamp" > "$venv/.requirements-sha256"
}
