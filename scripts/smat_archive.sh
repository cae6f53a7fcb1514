#!/usr/bin/env bash
# Packs a SMaT study's records into docs/results/NAME.tar.gz so that a later session, on a new
# machine, does not train its finished students again: the teacher's training log and test
# evaluation, the study's settings (study.json, with the teacher weights' fingerprint), every
# finished student run and learned explainer, the report. Not packed: the split (`smat split`
# makes it again, byte for byte), weights, temporaries. scripts/smat_text_study.sh unpacks it
# (ARCHIVE=) where the study's folder is missing.
#   scripts/smat_archive.sh smat-minilm     → docs/results/smat-minilm.tar.gz (from runs/smat-minilm)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: scripts/smat_archive.sh NAME (a study folder runs/NAME)" >&2; exit 2; }
name=$1
[ -f "runs/$name/study/study.json" ] || { echo "runs/$name: no SMaT study there (no study/study.json)" >&2; exit 2; }
out=docs/results/$name.tar.gz
tmp=$(mktemp "$out.tmp.XXXXXX")
list=$(mktemp)
trap 'rm -f "$tmp" "$list"' EXIT
# Sorted names and fixed metadata: the same records pack to the same bytes.
find "runs/$name" -path "runs/$name/split" -prune -o -type f ! -name '*.safetensors' ! -name '*.tmp*' \
  ! -name '*.log' -print | LC_ALL=C sort > "$list"
tar --no-recursion --owner=0 --group=0 --numeric-owner --mtime=2026-01-01 -cf - -T "$list" | gzip -n -9 > "$tmp"
mv "$tmp" "$out"
echo "$out: $(tar -tzf "$out" | wc -l) files, $(du -k "$out" | cut -f1) KB"
