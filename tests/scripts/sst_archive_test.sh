#!/usr/bin/env bash
# scripts/sst_experiments.sh's bookkeeping for a text study split over machines (EVAL_EACH, LR_GUESS,
# scripts/sst_archive.sh), with tests/scripts/fake_sst_salient.py standing in for the binary (it
# records each call): a study trains each run once, evaluates each SST run as it is trained, packs
# without weights, and on a new machine trains nothing it finished; a standard model is retrained
# only where a post-hoc search on it is unfinished, and a run cut off is trained again.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  "$@" || { echo "FAIL: $what"; fails=$((fails + 1)); }
}
cp -r "$root/scripts" "$work/scripts"
# the tables read real evaluations: here they only name their folder
printf 'import sys\nprint("table of", *sys.argv[1:])\n' > "$work/scripts/sst_table.py"
cp "$work/scripts/sst_table.py" "$work/scripts/sst_seeds_table.py"
mkdir -p "$work/docs/results" "$work/models/pretrained/all-minilm-l6-v2"
export BIN=$root/tests/scripts/fake_sst_salient.py FAKE_LOG=$work/calls.log SEEDS=13 JOBS=2 THREADS=1
study() { : > "$FAKE_LOG"; (cd "$work" && scripts/sst_experiments.sh eraser-paper > "$work/out.txt" 2>&1); }
trains() { grep -c '^sst train' "$FAKE_LOG"; }
evaluations() { grep -c '^sst evaluate' "$FAKE_LOG"; }
R=$work/runs/sst/eraser-paper/s13/lr5e-5

# 1. a whole study: the standards and the guessed rate's sweep in one list, each SST run evaluated
EVAL_EACH=1 LR_GUESS=5e-5 study; rc=$?; check "first study exits 0 ($(tail -1 "$work/out.txt"))" [ $rc -eq 0 ]
check "the first 13 trainings are the 3 standards, then the 10 runs at the guessed rate" \
  [ "$(grep '^sst train' "$FAKE_LOG" | head -13 | grep -c -- '--lr 5e-5 --masking \(baseline\|probabilistic\)')" -eq 10 ]
# the stand-in's SST accuracy falls with ξ and none is within a point of the standard's: the rule
# takes each kind's most accurate run (ξ = 1e-4), and a run that one already beats is not evaluated
check "each kind's ξ = 1e-4 run evaluated" [ -f "$R/sweep/baseline-hard-xi1e-4-eval/table.md" ]
check "probabilistic ξ = 1e-4 evaluated" [ -f "$R/sweep/probabilistic-hard-xi1e-4-eval/table.md" ]
check "ξ = 1e-8, beaten when it finished, not evaluated" [ ! -d "$R/sweep/baseline-hard-xi1e-8-eval" ]
check "said so" grep -q "baseline-hard-xi1e-8: not evaluated (a finished run of its kind ranks above it" "$work/out.txt"
check "eval-sst-baseline-closest links the run's own evaluation" [ -L "$R/eval-sst-baseline-closest" ]
check "the post-hoc searches ran" [ -f "$R/eval-posthoc/table.md" ]
check "Carter's SIS ran" [ -f "$R/eval-posthoc-sis-threshold/table.md" ]

# 2. the archive: records without weights or checkpoints, examples without their per-token scores
examples=$R/sweep/baseline-hard-xi1e-4-eval/examples-sst.jsonl
printf '%s\n' '{"baseline":1.0,"index":0,"selection":[0.25,0.75,1e-05],"size_percent":50.0,"subset":[1]}' \
  '{"index":1,"size_percent":0.0,"subset":[],"selection":[0.5]}' > "$examples"
(cd "$work" && scripts/sst_archive.sh eraser-paper > /dev/null)
archive=$work/docs/results/sst-eraser-paper.tar.gz
check "archived examples keep all but selection" [ "$(tar -xzf "$archive" -O eraser-paper/s13/lr5e-5/sweep/baseline-hard-xi1e-4-eval/examples-sst.jsonl)" = \
  '{"baseline":1.0,"index":0,"size_percent":50.0,"subset":[1]}
{"index":1,"size_percent":0.0,"subset":[]}' ]
check "and the run's own file keeps it" grep -q selection "$examples"
check "archive has no weights or checkpoints" [ "$(tar -tzf "$archive" | grep -c 'safetensors\|/last/')" -eq 0 ]
check "archive has every run's sst.json" [ "$(tar -tzf "$archive" | grep -c '/sst.json$')" -eq 13 ]

# 3. a new machine: unpacked, nothing trained or evaluated again, the table made
rm -rf "$work/runs"
EVAL_EACH=1 study; rc=$?; check "study from the archive exits 0" [ $rc -eq 0 ]
check "nothing trained or evaluated from the archive ($(trains) trainings, $(evaluations) evaluations)" [ ! -s "$FAKE_LOG" ]
check "the table made from the archive" grep -q "^table of runs/sst/eraser-paper/s13/lr5e-5$" "$work/out.txt"

# 4. an unfinished post-hoc search retrains the standard model; a run cut off is trained again
rm "$R/eval-posthoc/table.md"
: > "$R/sweep/baseline-hard-xi1e-6.json"
EVAL_EACH=1 study; rc=$?; check "study with unfinished parts exits 0" [ $rc -eq 0 ]
check "two trainings: the run cut off and the standard ($(trains))" [ "$(trains)" -eq 2 ]
check "the standard retrained to the archived history" grep -q "lr5e-5/standard: retrained; validation history the same" "$work/out.txt"
check "both post-hoc searches, and not the run cut off (beaten) ($(evaluations))" [ "$(evaluations)" -eq 2 ]

# 5. an SST run the rule can pick whose evaluation was cut off is trained again and evaluated; runs
# it beats, never evaluated, are not
rm "$R/sweep/probabilistic-hard-xi1e-4-eval/table.md"
EVAL_EACH=1 study; rc=$?; check "study with an unfinished evaluation exits 0" [ $rc -eq 0 ]
check "that run trained again ($(trains))" [ "$(grep -c '^sst train.*probabilistic-hard-xi1e-4 ' "$FAKE_LOG")" -eq 1 ]
check "and evaluated" [ -f "$R/sweep/probabilistic-hard-xi1e-4-eval/table.md" ]
# the two retrained in 4 have weights here: the binary is called again for them (a finished run's
# --resume trains nothing), and for no other run
check "besides, only the two runs with weights here ($(trains))" [ "$(trains)" -eq 3 ]

# 6. invalid settings: one line, exit 2, nothing run
for bad in "EVAL_EACH=2|EVAL_EACH: '2' is not 0 or 1" "LR_GUESS=1e-3|LR_GUESS: '1e-3' is not one of"; do
  : > "$FAKE_LOG"
  err=$(cd "$work" && env "${bad%%|*}" scripts/sst_experiments.sh eraser-paper 2>&1 >/dev/null); status=$?
  refused=0
  [ $status -eq 2 ] && [[ $err == *"${bad#*|}"* ]] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [ ! -s "$FAKE_LOG" ] ||
    refused=1
  check "${bad%%|*} refused in one line with status 2, nothing run ($status: $err)" [ $refused -eq 0 ]
done
# 7. an image study with the paper's learning-rate grid (mnist-paper-lr): every rate's standard and
# ξ sweep, crossed; the reference is the best rate's standard (the stand-in's: 1e-4), the rule sees
# every rate's runs; archived and resumed elsewhere, nothing is trained again, and a picked run whose
# evaluation is unfinished is trained again from its options
image_study() { : > "$FAKE_LOG"; (cd "$work" && scripts/sst_experiments.sh mnist-paper-lr > "$work/out.txt" 2>&1); }
image_study; rc=$?
check "mnist-paper-lr exits 0 ($(tail -1 "$work/out.txt"))" [ $rc -eq 0 ]
check "6 standards and 6 x 21 SST runs ($(trains))" [ "$(trains)" -eq 132 ]
check "every rate of the grid trained" [ "$(grep -o -- '--lr 1e-[0-9]' "$FAKE_LOG" | sort -u | tr '\n' ' ')" = "--lr 1e-2 --lr 1e-3 --lr 1e-4 --lr 1e-5 --lr 1e-6 --lr 1e-7 " ]
P=$work/runs/sst/mnist-paper-lr/s13/paper
check "the best rate chosen ($(cat "$P/lr"))" [ "$(cat "$P/lr")" = 1e-4 ]
check "the selection's reference is its standard" grep -q '"dir": "runs/sst/mnist-paper-lr/s13/lr1e-4/standard"' "$P/selection.json"
check "the selection sees all 126 SST runs" [ "$(grep -c '"masking"' "$P/selection.json")" -eq 126 ]
ok=0; [ -f "$P/eval-sst-baseline-closest/table.md" ] && [ -f "$P/eval-sst-robust-closest/table.md" ] && ok=1
check "each kind's pick evaluated (none within a point: the closest)" [ $ok -eq 1 ]
check "the table made from paper/" grep -q "^table of runs/sst/mnist-paper-lr$" "$work/out.txt"
(cd "$work" && scripts/sst_archive.sh mnist-paper-lr > /dev/null) && rm -rf "$work/runs/sst/mnist-paper-lr"
image_study; rc=$?
ok=0; [ $rc -eq 0 ] && [ ! -s "$FAKE_LOG" ] && ok=1
check "resumed from the archive: exits 0, nothing trained or evaluated ($(trains), $(evaluations))" [ $ok -eq 1 ]
rm "$P/eval-sst-robust-closest/table.md"
image_study; rc=$?
robust=$(python3 -c "import json; print(json.load(open('$P/selection.json'))['closest']['robust'])")
ok=0; [ $rc -eq 0 ] && [ "$(trains)" -eq 1 ] && grep -q "^sst train.*$robust " "$FAKE_LOG" &&
  [ -f "$P/eval-sst-robust-closest/table.md" ] && ok=1
check "an unfinished evaluation: its run trained again and evaluated ($rc, $(trains), $(evaluations))" [ $ok -eq 1 ]
[ $fails -eq 0 ] && echo "sst_experiments.sh across machines: 34 checks passed"
exit $fails
