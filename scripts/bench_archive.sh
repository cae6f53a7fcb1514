#!/usr/bin/env bash
# Packs a benchmark study's records (runs/bench/NAME/<task>/results.jsonl) into
# docs/results/bench-NAME.tar.gz so that a later session, on a new machine, computes only what is
# left (scripts/method_table.sh unpacks it where a task's folder is missing). Every line keeps its
# metrics, index, method, label and target, so the summaries and a resumed run read it whole; only
# the lines the heatmaps show (the first 10 examples; ERASER's 3, bench_pretrained.sh's --heatmaps)
# keep their tokens, scores, words and text.
# Sorted, fixed metadata: the same records pack to the same bytes.
#   scripts/bench_archive.sh scale   → docs/results/bench-scale.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: scripts/bench_archive.sh NAME (a folder of runs/bench)" >&2; exit 2; }
name=$1
[ -d "runs/bench/$name" ] || { echo "runs/bench/$name: no such study" >&2; exit 2; }
out=docs/results/bench-$name.tar.gz
stage=$(mktemp -d)
tmp=$(mktemp "$out.tmp.XXXXXX")
trap 'rm -rf "$stage" "$tmp"' EXIT
python3 - "runs/bench/$name" "$stage" <<'EOF'
import json, pathlib, sys
src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
HEAVY = ("tokens", "token_scores", "words", "word_scores", "text", "text_pair", "token_rationale")
for results in sorted(src.glob("*/results.jsonl")):
    shown = 3 if results.parent.name.startswith("eraser") else 10
    lines = []
    for raw in results.read_text().splitlines(keepends=True):
        if not raw.endswith("\n"):
            continue  # a killed run's unfinished last line
        j = json.loads(raw)
        if j["index"] >= shown:
            j = {k: v for k, v in j.items() if k not in HEAVY}
        lines.append(json.dumps(j, separators=(",", ":")) + "\n")
    (dst / results.parent.name).mkdir(parents=True)
    (dst / results.parent.name / "results.jsonl").write_text("".join(lines))
EOF
(cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort > .list &&
  tar --no-recursion --owner=0 --group=0 --numeric-owner --mtime=2026-01-01 -cf - -T .list | gzip -n -9) > "$tmp"
mv "$tmp" "$out"
echo "$out: $(tar -tzf "$out" | wc -l) files, $(du -k "$out" | cut -f1) KB"
