#!/usr/bin/env bash
# SMaT's normalisation ablation (Fernandes et al. 2022, Table 7) on the text study of docs/smat.md:
# the learned explainer's head coefficients normalised by sparsemax (the paper's), 1.5-entmax,
# softmax or not at all, each meta-trained and then used to teach students, against the
# no-explainer students and the static all-heads mean that every SMaT run starts from. The split and teacher are the text study's (scripts/smat_text_study.sh
# makes them if missing); sparsemax runs in the text study's own folder (runs/smat/study), every
# other normaliser in runs/smat/ablation-<normaliser>. Resumable: finished runs are kept.
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
/usr/bin/python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]

def quantile(v, q):  # linear interpolation, as salient's report (numpy's default)
    v = sorted(v); pos = q * (len(v) - 1); lo = int(pos); hi = min(len(v) - 1, lo + 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])

def runs(folder, explainer):
    by_size = {}
    for path in sorted(glob.glob(os.path.join(folder, "runs", explainer + "_n*_s*.json"))):
        r = json.load(open(path))
        by_size.setdefault(r["size"], []).append(r["run"]["simulability"])
    return by_size

def cell(v, base):
    med, q25, q75 = quantile(v, .5), quantile(v, .25), quantile(v, .75)
    mark = ""
    if base:
        b25, b75 = quantile(base, .25), quantile(base, .75)
        mark = " ▲" if q25 > b75 else " ▼" if q75 < b25 else ""
    return f"{med:.3f} [{q25:.3f}, {q75:.3f}]{mark} ({len(v)} seeds)"

def coefficients(folder):  # size → the learned λ of every finished seed
    by_size = {}
    for path in sorted(glob.glob(os.path.join(folder, "explainers", "smat_n*_s*.json"))):
        name = os.path.basename(path)
        if not os.path.exists(os.path.join(folder, "runs", name)):
            continue  # meta-trained, its student not finished yet
        size = int(name.split("_n")[1].split("_s")[0])
        by_size.setdefault(size, []).append(json.load(open(path))["coefficients"])
    return by_size

none = runs(os.path.join(out, "study"), "none")
rows = [("none (no explainer)", none, {}, {}),
        ("attention_all (static; SMaT's start)", runs(os.path.join(out, "study"), "attention_all"), none, {})]
for norm in ["sparsemax", "entmax15", "softmax", "none"]:
    folder = os.path.join(out, "study" if norm == "sparsemax" else "ablation-" + norm)
    rows.append(("smat, " + norm, runs(folder, "smat"), none, coefficients(folder)))
sizes = sorted({n for _, by_size, _, _ in rows for n in by_size})
if not sizes:
    sys.exit("smat_normalizer_ablation.sh: no finished runs under " + out)
lines = ["| teacher explainer | " + " | ".join(f"n = {n}" for n in sizes) + " | λ: heads at exactly 0 | λ: largest |",
         "|---|" + "---|" * (len(sizes) + 2)]
for name, by_size, base, lam in rows:
    per_seed = [l for n in sizes for l in lam.get(n, [])]
    zeros = f"{sum(sum(x == 0 for x in l) for l in per_seed) / len(per_seed):.1f} of {len(per_seed[0])}" if per_seed else ""
    largest = f"{sum(max(l) for l in per_seed) / len(per_seed):.3f}" if per_seed else ""
    lines.append(f"| {name} | " + " | ".join(cell(by_size[n], base.get(n)) if n in by_size else "–" for n in sizes)
                 + f" | {zeros} | {largest} |")
lines.append("\nSimulability (agreement with the teacher on the test split): median [25%, 75%] over seeds; "
             "▲ / ▼: the 25–75% range lies above / below the no-explainer students'. λ: the learned head "
             "coefficients, mean over the finished seeds (and sizes) of the count of exact zeros and of the largest.")
text = "\n".join(lines) + "\n"
tmp = os.path.join(out, ".ablation.md.tmp")
open(tmp, "w").write(text)
os.replace(tmp, os.path.join(out, "ablation.md"))
print(text, end="")
PY
