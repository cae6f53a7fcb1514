#!/usr/bin/env bash
# The layering rules of the source tree (issue #51), checked on the #include lines:
#   1. src/explain (the explainer registry and the post-hoc methods) includes no paper's folder
#      (attattr/, expnet/, smat/, sst/): the learned explainers live with their papers.
#   2. Headers below the papers (src/data, src/text, src/model, src/util) include no paper's folder.
#   3. The public API (include/salient) includes no header of src/: only its own ("salient/...")
#      and external ones (<...>), so a program needs nothing but the installed include/salient.
#   4. The thin clients include the public API and their own headers only: the CLI (apps/salient:
#      "salient/..." and its own "commands.h", "common.h"), src/serve (the server of `salient
#      serve`: "salient/...", "serve/...", its generated "serve_assets.h") and the Python module
#      (python/: "salient/..." and its own "bindings.h").
# Prints every offending line and exits 1; silent and 0 when the tree keeps the rules.
# Usage: scripts/check_includes.sh [ROOT]   (default: the repository)
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
PAPERS='(attattr|expnet|smat|sst)/'
status=0
check() {  # rule text, then folders
  local rule=$1; shift
  local hits
  hits=$(cd "$ROOT" && grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]+\"$PAPERS" "$@" --include='*.h' --include='*.cpp' --include='*.inc' || true)
  if [ -n "$hits" ]; then
    echo "check_includes: $rule:" >&2
    echo "$hits" >&2
    status=1
  fi
}
check "src/explain includes a paper's folder" src/explain
check "a module below the papers includes a paper's folder" src/data src/text src/model src/util
if [ -d "$ROOT/include/salient" ]; then
  hits=$(cd "$ROOT" && grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' include/salient | grep -vE '#[[:space:]]*include[[:space:]]+"salient/' || true)
  if [ -n "$hits" ]; then
    echo "check_includes: the public API includes a header of src/:" >&2
    echo "$hits" >&2
    status=1
  fi
fi
# thin_client RULE DIR ALLOWED: every quoted include in DIR matches the regex ALLOWED.
thin_client() {
  local rule=$1 dir=$2 allowed=$3 hits
  [ -d "$ROOT/$dir" ] || return 0
  hits=$(cd "$ROOT" && grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$dir" --include='*.h' --include='*.cpp' |
         grep -vE "#[[:space:]]*include[[:space:]]+\"($allowed)" || true)
  if [ -n "$hits" ]; then
    echo "check_includes: $rule:" >&2
    echo "$hits" >&2
    status=1
  fi
}
thin_client "the CLI (apps/salient) includes a header of the library's src/" apps/salient 'salient/|commands\.h"|common\.h"'
thin_client "the server (src/serve) includes a header of the library's src/" src/serve 'salient/|serve/|serve_assets\.h"'
thin_client "the Python module (python/) includes a header of the library's src/" python 'salient/|bindings\.h"'
exit $status
