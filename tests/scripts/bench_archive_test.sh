#!/usr/bin/env bash
# scripts/bench_archive.sh and a benchmark study resumed from its archive on a new machine (the
# bookkeeping of scripts/method_table.sh), with the real binary on the fixture model: a study of
# every method over 12 SST-2 sentences packs without the heavy fields past the heatmaps' examples,
# and unpacked elsewhere it computes nothing again and summarises to the same numbers.
#   bench_archive_test.sh SALIENT_BIN
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(realpath "$1")
shared=${SALIENT_SHARED:-$root/../shared}
model=$shared/fixtures/reference-bert/model
[ -f "$model/config.json" ] || { echo "skipped: $model not found"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  "$@" || { echo "FAIL: $what"; fails=$((fails + 1)); }
}
setup() {  # a machine: the scripts and the model, nothing else
  mkdir -p "$1/models" "$1/docs/results"
  cp -r "$root/scripts" "$1/scripts"
  ln -s "$model" "$1/models/sst2-fixture"
}
study() {  # on machine $1
  (cd "$1" && BIN=$bin SALIENT_SHARED=$shared SUFFIX=-fixture OUT=runs/bench/scale LIMIT=12 SAMPLES=20 THREADS=1 \
    scripts/bench_pretrained.sh sst2 > "$1/out.txt" 2>&1)
}
setup "$work/a"
study "$work/a"; rc=$?; check "the study exits 0 ($(tail -1 "$work/a/out.txt"))" [ $rc -eq 0 ]
results=$work/a/runs/bench/scale/sst2-minilm/results.jsonl
check "every method on every sentence" [ "$(wc -l < "$results")" -eq $((12 * 19)) ]
(cd "$work/a" && scripts/bench_archive.sh scale > /dev/null); rc=$?; check "bench_archive.sh exits 0" [ $rc -eq 0 ]
archive=$work/a/docs/results/bench-scale.tar.gz
setup "$work/b"
mkdir -p "$work/b/runs/bench/scale" && tar -xzf "$archive" -C "$work/b/runs/bench/scale"
unpacked=$work/b/runs/bench/scale/sst2-minilm/results.jsonl
check "lines past the heatmaps' examples packed without their scores" \
  python3 -c "import json,sys; L=[json.loads(l) for l in open(sys.argv[1])]; sys.exit(not all(('token_scores' in j) == (j['index'] < 10) for j in L) or not all('token_f1' in j['metrics'] for j in L))" "$unpacked"
study "$work/b"; rc=$?; check "the resumed study exits 0 ($(tail -1 "$work/b/out.txt"))" [ $rc -eq 0 ]
check "nothing computed again (the lines without scores are still without)" \
  python3 -c "import json,sys; L=[json.loads(l) for l in open(sys.argv[1])]; sys.exit(len(L) != 12 * 19 or any('token_scores' in j for j in L if j['index'] >= 10))" "$unpacked"
check "the same summary on the new machine" \
  python3 -c "import json,sys; a,b=(json.load(open(p))['methods'] for p in sys.argv[1:]); sys.exit(a != b)" \
  "$work/a/runs/bench/scale/sst2-minilm/summary.json" "$work/b/runs/bench/scale/sst2-minilm/summary.json"
[ "$fails" -eq 0 ] && echo "bench_archive_test: all passed"
exit $((fails > 0))
