#!/usr/bin/env bash
# SMaT's normalisation ablation (Fernandes et al. 2022, Table 7) on the text study of docs/smat.md:
# the learned explainer's head coefficients normalised by sparsemax (the paper's), 1.5-entmax,
# softmax or not at all, each meta-trained and then used to teach students, against the
# no-explainer students and the static all-heads mean that every SMaT run starts from. The split
# and teacher are the text study's (scripts/smat_text_study.sh makes them if missing); sparsemax
# runs in the text study's own folder (runs/smat/study), every other normaliser in
# runs/smat/ablation-<normaliser>. Resumable: finished runs are kept.
# Usage: scripts/smat_normalizer_ablation.sh [extra `smat study` options]
#        env: NORMALIZERS (default sparsemax,entmax15,softmax,none), SIZES (500), SEEDS (0,9,11,30,69),
#             THREADS, OUT (runs/smat), REPORT_ONLY=1 to only write $OUT/ablation.md from finished runs.
# Two invocations with disjoint NORMALIZERS may run at once (each writes its own folders).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/smat}
NORMALIZERS=${NORMALIZERS:-sparsemax,entmax15,softmax,none}
export OUT SIZES=${SIZES:-500} SEEDS=${SEEDS:-0,9,11,30,69}
study_dir() { if [ "$1" = sparsemax ]; then echo "$OUT/study"; else echo "$OUT/ablation-$1"; fi; }
for norm in ${NORMALIZERS//,/ }; do  # every value checked before any run starts
  case $norm in sparsemax|entmax15|softmax|none) ;; *) echo "NORMALIZERS: unknown normaliser '$norm'" >&2; exit 2 ;; esac
done
if [ "${REPORT_ONLY:-0}" != 1 ]; then
  for norm in ${NORMALIZERS//,/ }; do
    # The no-explainer students and those taught by the static all-heads mean (SMaT's starting point)
    # do not depend on the normaliser: they run once, in the text study's folder.
    explainers=smat
    [ "$norm" = sparsemax ] && explainers=none,attention_all,smat
    STUDY=$(study_dir "$norm") EXPLAINERS=$explainers scripts/smat_text_study.sh --normalizer "$norm" "$@"
  done
fi
# Each folder's own report (salient's quantiles and summary.json); the table below only arranges them.
BIN=${BIN:-build/salient}
folders=()
for norm in sparsemax entmax15 softmax none; do
  dir=$(study_dir "$norm")
  if compgen -G "$dir/runs/*.json" > /dev/null; then
    "$BIN" --quiet smat report --study "$dir" > /dev/null
    folders+=("$norm=$dir")
  fi
done
/usr/bin/python3 - "$OUT" "${folders[@]}" <<'PY'
import glob, json, os, sys
out, folders = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])

def rows(folder):  # (explainer, size) → salient's summary row: median, q25, q75, seeds
    if folder is None:
        return {}
    return {(r["explainer"], r["size"]): r for r in json.load(open(os.path.join(folder, "summary.json")))["rows"]}

def cell(r, base):
    mark = ""
    if base:
        mark = " ▲" if r["q25"] > base["q75"] else " ▼" if r["q75"] < base["q25"] else ""
    return f"{r['median']:.3f} [{r['q25']:.3f}, {r['q75']:.3f}]{mark} ({r['seeds']} seeds)"

def coefficients(folder):  # the learned λ of every seed whose student finished
    found = []
    if folder is None:
        return found
    for path in sorted(glob.glob(os.path.join(folder, "explainers", "smat_n*_s*.json"))):
        if os.path.exists(os.path.join(folder, "runs", os.path.basename(path))):
            found.append(json.load(open(path))["coefficients"])
    return found

study = rows(folders.get("sparsemax"))
table = [("none (no explainer)", "none", study, [], False), ("attention_all (static; SMaT's start)", "attention_all", study, [], True)]
for norm in ["sparsemax", "entmax15", "softmax", "none"]:
    table.append(("smat, " + norm, "smat", rows(folders.get(norm)), coefficients(folders.get(norm)), True))
sizes = sorted({n for _, e, found, _, _ in table for (x, n) in found if x == e})
if not sizes:
    sys.exit("smat_normalizer_ablation.sh: no finished runs under " + out)
lines = ["| teacher explainer | " + " | ".join(f"n = {n}" for n in sizes) + " | λ: heads at exactly 0 | λ: largest |",
         "|---|" + "---|" * (len(sizes) + 2)]
for name, explainer, found, lam, versus_none in table:
    zeros = f"{sum(sum(x == 0 for x in l) for l in lam) / len(lam):.1f} of {len(lam[0])}" if lam else ""
    largest = f"{sum(max(l) for l in lam) / len(lam):.3f}" if lam else ""
    cells = [cell(found[(explainer, n)], study.get(("none", n)) if versus_none else None) if (explainer, n) in found
             else "–" for n in sizes]
    lines.append(f"| {name} | " + " | ".join(cells) + f" | {zeros} | {largest} |")
lines.append("\nSimulability (agreement with the teacher on the test split): median [25%, 75%] over seeds; "
             "▲ / ▼: the 25–75% range lies above / below the no-explainer students'. λ: the learned head "
             "coefficients, mean over the finished seeds (and sizes) of the count of exact zeros and of the largest.")
text = "\n".join(lines) + "\n"
tmp = os.path.join(out, ".ablation.md.tmp")
open(tmp, "w").write(text)
os.replace(tmp, os.path.join(out, "ablation.md"))
print(text, end="")
PY
