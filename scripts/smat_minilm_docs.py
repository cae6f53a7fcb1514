#!/usr/bin/env python3
"""SMaT on MiniLM (issue #84): the per-run table of docs/results/smat.md ("On the packaged encoder, on
CPU") and the progress line of docs/smat.md, regenerated from the study's records
(runs/smat-minilm/study/runs/*.json, unpacked from docs/results/smat-minilm.tar.gz), so that the docs
say exactly what the archive holds. Run after scripts/smat_archive.sh smat-minilm.

  python3 scripts/smat_minilm_docs.py [--study runs/smat-minilm/study] [--check]

--check: exit 1 when the docs differ from the records (writes nothing).
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEEDS = [0, 9, 11, 30, 69]
ROWS = [  # (record explainer, row label, which run)
    ("smat", "SMaT, co-trained student (the authors' number)", "meta_run"),
    ("smat", "SMaT, fresh student on the learnt coefficients", "run"),
    ("none", "no explainer", "run"),
    ("saliency", "saliency", "run"),
    ("grad_x_input", "grad_x_input", "run"),
    ("ig", "ig", "run"),
    ("attention_all", "attention, all heads", "run"),
    ("attention_last", "attention, last layer", "run"),
]
PROGRESS_NAMES = {"none": "no explainer", "saliency": "saliency", "grad_x_input": "grad_x_input", "ig": "ig",
                  "attention_all": "attention, all heads", "attention_last": "attention, last layer"}


def records(study, size):
    out = {}
    for f in sorted((study / "runs").glob(f"*_n{size}_s*.json")):
        d = json.loads(f.read_text())
        out[(d["explainer"], d["seed"])] = d
    return out


def cell(run):
    return f"{run['simulability']:g} ({run['best_epoch']}/{run['epochs']})"


def table(recs):
    lines = ["| run | " + " | ".join(f"seed {s}" for s in SEEDS) + " |", "|---" * (len(SEEDS) + 1) + "|"]
    for explainer, label, which in ROWS:
        cells = [cell(recs[(explainer, s)][which]) if (explainer, s) in recs else "—" for s in SEEDS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def spread(values):
    lo, hi = min(values), max(values)
    return f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"


def progress(recs, size, total):
    done = len(recs)
    smat = sorted(s for (e, s) in recs if e == "smat")
    parts = []
    if smat:
        parts.append(f"SMaT, seeds {', '.join(map(str, smat))}: co-trained students "
                     + ", ".join(f"{recs[('smat', s)]['meta_run']['simulability']:g}" for s in smat)
                     + f", median {statistics.median(recs[('smat', s)]['meta_run']['simulability'] for s in smat):g}")
    for e, name in PROGRESS_NAMES.items():
        seeds = [s for s in SEEDS if (e, s) in recs]
        if seeds:
            values = [recs[(e, s)]["run"]["simulability"] for s in seeds]
            which = "" if len(seeds) == len(SEEDS) else f" (seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})"
            parts.append(f"{name}{which} {spread(values)}, median {statistics.median(values):g}")
    left = total - done
    tail = f"Remaining: {left} run{'s' if left != 1 else ''}; no verdict yet." if left else f"n = {size:,} complete."
    return (f"- **Progress** (n = {size}; archived in [results/smat-minilm.tar.gz](results/smat-minilm.tar.gz)): "
            f"{done} of\n  {total} runs (per run: docs/results/smat.md; all five seeds unless named). " + "; ".join(parts) + ". " + tail)


def wrap(text, width=100):
    """Re-wrap a markdown bullet to the docs' width (continuation lines indented by two)."""
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = "  " + w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--study", default=str(REPO / "runs" / "smat-minilm" / "study"))
    ap.add_argument("--size", type=int, default=500)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    study = Path(a.study)
    if not (study / "runs").is_dir():
        sys.exit(f"--study: {study}/runs not found (unpack docs/results/smat-minilm.tar.gz: scripts/smat_pretrained_study.sh does)")
    recs = records(study, a.size)
    results = REPO / "docs" / "results" / "smat.md"
    guide = REPO / "docs" / "smat.md"
    r_text, g_text = results.read_text(), guide.read_text()
    section = r_text.index("### On the packaged encoder, on CPU")
    start = r_text.index("| run | seed 0 |", section)
    end = r_text.index("\n\n", start)
    new_r = r_text[:start] + table(recs) + r_text[end:]
    m = re.search(r"- \*\*Progress\*\* \(n = \d+;.*?(?=\n- \*\*Cost\*\*)", g_text, re.S)
    if not m:
        sys.exit("docs/smat.md: no '- **Progress** (n = ...' paragraph before '- **Cost**'")
    new_g = g_text[:m.start()] + wrap(progress(recs, a.size, len(SEEDS) * 7)) + g_text[m.end():]
    changed = [p.name for p, old, new in ((results, r_text, new_r), (guide, g_text, new_g)) if old != new]
    if a.check:
        if changed:
            sys.exit(f"smat_minilm_docs: {', '.join(changed)} differ from the records in {study}")
        print("smat_minilm_docs: docs agree with the records")
        return
    results.write_text(new_r)
    guide.write_text(new_g)
    print(f"smat_minilm_docs: {len(recs)} runs at n = {a.size}; rewrote {', '.join(changed) or 'nothing'}")


if __name__ == "__main__":
    main()
