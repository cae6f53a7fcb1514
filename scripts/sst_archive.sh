#!/usr/bin/env bash
# Packs an SST study's records into docs/results/sst-NAME.tar.gz so that a later session, on a new
# machine, does not train its finished runs again: every training's records (sst.json, the
# options it ran with, its log) and every evaluation's results, without the weights, checkpoints,
# tokenizer copies or HTML views. scripts/sst_experiments.sh unpacks it where runs/sst/NAME is
# missing; a run without weights counts as finished, and a standard model is trained again only
# where a post-hoc search on it is unfinished (ensure_weights).
#   scripts/sst_archive.sh eraser-paper     → docs/results/sst-eraser-paper.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: scripts/sst_archive.sh NAME (a folder of runs/sst)" >&2; exit 2; }
name=$1
[ -d "runs/sst/$name" ] || { echo "runs/sst/$name: no such study" >&2; exit 2; }
out=docs/results/sst-$name.tar.gz
tmp=$(mktemp "$out.tmp.XXXXXX")
# A training still running leaves no sst.json in its folder yet; its options (.args) and log go in,
# and the next machine trains it again. Each explained example keeps its subset, sizes and
# faithfulness but not "selection" (s, one score per token: 90% of the bytes of a text study; only
# the HTML views, not archived, shade by it). Sorted names and fixed metadata: the same records pack
# to the same bytes.
stage=$(mktemp -d)
trap 'rm -rf "$tmp" "$stage"' EXIT
(cd runs/sst && find "$name" \( -name last -o -name views -o -name '*.archived' \) -prune -o \
  \( -type f -o -type l \) ! -name '*.safetensors' ! -name 'vocab.txt' ! -name 'tokenizer*.json' \
  ! -name 'special_tokens_map.json' ! -name 'report.html' ! -name '*.tmp.*' -print | LC_ALL=C sort) > "$stage/.list"
(cd runs/sst && xargs -d '\n' cp -P --parents -t "$stage" < "$stage/.list")
find "$stage" -type f -name 'examples-*.jsonl' -exec sed -E -i 's/,"selection":\[[^]]*\]//; s/"selection":\[[^]]*\],?//' {} +
(cd "$stage" && tar --no-recursion --owner=0 --group=0 --numeric-owner --mtime=2026-01-01 -cf - -T .list | gzip -n -9) > "$tmp"
mv "$tmp" "$out"  # the trap removes the staged copy
echo "$out: $(tar -tzf "$out" | wc -l) files, $(du -k "$out" | cut -f1) KB"
