#!/usr/bin/env bash
# scripts/train_models.sh and scripts/attattr_minilm.sh refuse invalid settings with one line naming
# the variable or argument, exit status 2, before they train anything. Usage: train_models_options.sh SALIENT_BINARY
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export BIN=$1
fails=0
expect() {  # expected message, then the environment assignments and arguments
  local want=$1; shift
  local err status
  err=$(env "$@" 2>&1 >/dev/null); status=$?
  if [ $status -ne 2 ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || [[ $err != *"$want"* ]]; then
    echo "FAIL: $* -> status $status, stderr: $err (wanted '$want')"; fails=$((fails + 1))
  fi
}
tm=$root/scripts/train_models.sh
expect "INIT: empty" INIT= "$tm" sst2
expect "INIT: /nonexistent/encoder/config.json not found" INIT=/nonexistent/encoder "$tm" sst2
expect "ERASER_FROM: 'x' is not sst2 or encoder" INIT=none ERASER_FROM=x "$tm" eraser
expect "ERASER_FROM: encoder needs an encoder" INIT=none ERASER_FROM=encoder "$tm" eraser
expect "unknown task 'bogus' (sst2, hatexplain, cola, eraser)" INIT=none "$tm" sst2 bogus
expect "ERASER_FROM: encoder is not a MiniLM recipe" INIT=minilm ERASER_FROM=encoder "$tm" eraser
am=$root/scripts/attattr_minilm.sh
expect "unknown task 'bogus' (sst2, hatexplain)" "$am" sst2 bogus
expect "SEEDS: 'x' is not a seed" SEEDS="13 x" "$am" sst2
[ $fails -eq 0 ] && echo "train_models.sh and attattr_minilm.sh options: all refused as expected"
exit $fails
