#!/usr/bin/env bash
# scripts/check_includes.sh passes on the repository and fails, naming the line, on a tree that
# breaks a rule (a file in src/explain including a paper's header).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
"$REPO/scripts/check_includes.sh" "$REPO"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/explain/gradient" "$tmp/src/data" "$tmp/src/text" "$tmp/src/model" "$tmp/src/util"
printf '#include "explain/methods.h"\n' > "$tmp/src/explain/gradient/ok.cpp"
"$REPO/scripts/check_includes.sh" "$tmp"
printf '#include "explain/methods.h"\n  #include "smat/head_explainer.h"\n' > "$tmp/src/explain/gradient/bad.cpp"
if out=$("$REPO/scripts/check_includes.sh" "$tmp" 2>&1); then
  echo "check_includes_test: a paper include in src/explain was not reported" >&2; exit 1
fi
grep -q 'bad.cpp:2:.*smat/head_explainer.h' <<< "$out" || { echo "check_includes_test: unexpected report: $out" >&2; exit 1; }
rm "$tmp/src/explain/gradient/bad.cpp"
printf '#include "sst/data.h"\n' > "$tmp/src/data/images.cpp"
if "$REPO/scripts/check_includes.sh" "$tmp" 2>/dev/null; then
  echo "check_includes_test: a paper include below the papers was not reported" >&2; exit 1
fi
rm "$tmp/src/data/images.cpp"
mkdir -p "$tmp/include/salient"
printf '#include <vector>\n#include "salient/encoding.h"\n' > "$tmp/include/salient/api.h"
"$REPO/scripts/check_includes.sh" "$tmp"
printf '#include "salient/encoding.h"\n#include "model/classifier.h"\n' > "$tmp/include/salient/api.h"
if out=$("$REPO/scripts/check_includes.sh" "$tmp" 2>&1); then
  echo "check_includes_test: a src/ include in the public API was not reported" >&2; exit 1
fi
grep -q 'api.h:2:.*model/classifier.h' <<< "$out" || { echo "check_includes_test: unexpected report: $out" >&2; exit 1; }
echo "check_includes_test: ok"
