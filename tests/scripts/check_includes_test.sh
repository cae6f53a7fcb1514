#!/usr/bin/env bash
# scripts/check_includes.sh passes on the repository and fails, naming the line, on a tree that
# breaks a rule: a file in src/explain including a paper's header, a module below the papers
# including one, the public API including a header of src/, the CLI, the server or the Python module including one.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
"$REPO/scripts/check_includes.sh" "$REPO"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/explain/gradient" "$tmp/src/data" "$tmp/src/text" "$tmp/src/model" "$tmp/src/util" "$tmp/include/salient" \
  "$tmp/src/serve" "$tmp/python" "$tmp/apps/salient"
# expect_report WHAT FILE LINES WANTED: FILE (under the tree) with LINES breaks the rule WHAT, and the
# report's line matches WANTED; the file is removed again.
expect_report() {
  local what=$1 file=$tmp/$2 lines=$3 want=$4 out
  printf '%b' "$lines" > "$file"
  if out=$("$REPO/scripts/check_includes.sh" "$tmp" 2>&1); then
    echo "check_includes_test: $what was not reported" >&2; exit 1
  fi
  grep -q "$want" <<< "$out" || { echo "check_includes_test: unexpected report for $what: $out" >&2; exit 1; }
  rm "$file"
}
printf '#include "explain/methods.h"\n' > "$tmp/src/explain/gradient/ok.cpp"
printf '#include <vector>\n#include "salient/encoding.h"\n' > "$tmp/include/salient/api.h"
printf '#include <httplib.h>\n#include "salient/salient.h"\n#include "serve/api.h"\n#include "serve_assets.h"\n' > "$tmp/src/serve/ok.cpp"
printf '#include <CLI/CLI.hpp>\n#include "commands.h"\n#include "salient/runs.h"\n' > "$tmp/apps/salient/ok.cpp"
"$REPO/scripts/check_includes.sh" "$tmp"
expect_report "a paper include in src/explain" src/explain/gradient/bad.cpp \
  '#include "explain/methods.h"\n  #include "smat/head_explainer.h"\n' 'bad.cpp:2:.*smat/head_explainer.h'
expect_report "a paper include below the papers" src/data/images.cpp '#include "sst/data.h"\n' 'images.cpp:1:.*sst/data.h'
expect_report "a src/ include in the public API" include/salient/bad.h \
  '#include "salient/encoding.h"\n#include "model/classifier.h"\n' 'bad.h:2:.*model/classifier.h'
expect_report "a src/ include in the server" src/serve/bad.cpp \
  '#include "serve/api.h"\n#include "data/dataset.h"\n' 'bad.cpp:2:.*data/dataset.h'
expect_report "a src/ include in the Python module" python/_bad.cpp \
  '#include "salient/salient.h"\n#include "sst/train.h"\n' '_bad.cpp:2:.*sst/train.h'
expect_report "a src/ include in the CLI" apps/salient/cmd_bad.cpp \
  '#include "commands.h"\n#include "attattr/analysis.h"\n' 'cmd_bad.cpp:2:.*attattr/analysis.h'
echo "check_includes_test: ok"
