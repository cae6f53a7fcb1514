#!/usr/bin/python3
"""Applies the SST sweep's selection rule and writes the sweep table (docs/sst.md).

  sst_select.py STANDARD_DIR SWEEP_DIR... > selection.json

Rule (ours; the paper's appendix rule was not available to us): among the runs whose validation
accuracy is within 1 point of the standard model's, take those whose validation faithfulness under
their own masking is ≥ 0.95 and choose the smallest mean subset; when none reaches 0.95, the most
faithful. Ties go to the earlier run in the argument order. One choice per masking kind.
When no run of a kind is within the point, none is chosen and "closest" names the most accurate
run (then the most faithful), which scripts/sst_experiments.sh evaluates under that label.
"""
import json
import sys
from pathlib import Path


def best_epoch(d):
    s = json.loads((Path(d) / "sst.json").read_text())
    e = s["history"][s["best_epoch"] - 1]
    return s, e


def main():
    std_dir, sweep = sys.argv[1], sys.argv[2:]
    _, std = best_epoch(std_dir)
    rows, chosen, closest = [], {}, {}
    for d in sweep:
        s, e = best_epoch(d)
        o = s["objective"]
        rows.append({"dir": d, "masking": o["masking"], "xi": o["xi"], "lambda": o["lambda"],
                     "straight_through": o["straight_through"], "epoch": s["best_epoch"],
                     "val_accuracy": e["val_accuracy"], "val_faithfulness": e["val_faithfulness"], "val_size": e["val_size"],
                     "eligible": e["val_accuracy"] >= std["val_accuracy"] - 0.01})
    # masking, then the hard threshold before straight-through, then ξ from large to small
    rows.sort(key=lambda r: (r["masking"], r["straight_through"], -r["xi"], r["lambda"]))
    for kind in sorted({r["masking"] for r in rows}):
        cands = [r for r in rows if r["masking"] == kind and r["eligible"]]
        faithful = [r for r in cands if r["val_faithfulness"] >= 0.95]
        if faithful:
            pick = min(faithful, key=lambda r: r["val_size"])
        elif cands:
            pick = max(cands, key=lambda r: r["val_faithfulness"])
        else:
            pick = None
            of_kind = [r for r in rows if r["masking"] == kind]
            near = max(of_kind, key=lambda r: (r["val_accuracy"], r["val_faithfulness"], -of_kind.index(r)))
            closest[kind] = near["dir"]
        chosen[kind] = pick["dir"] if pick else None
    lines = ["| masking | threshold | ξ | λ | epoch | val accuracy % | val faithful % | val size % | chosen |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['masking']} | {'straight-through' if r['straight_through'] else 'hard'} | {r['xi']:g} | "
                     f"{r['lambda']:g} | {r['epoch']} | {100 * r['val_accuracy']:.2f}{'' if r['eligible'] else ' (out)'} | "
                     f"{100 * r['val_faithfulness']:.1f} | {100 * r['val_size']:.2f} | "
                     f"{'**yes**' if chosen.get(r['masking']) == r['dir'] else ''}"
                     f"{'closest (none within a point)' if closest.get(r['masking']) == r['dir'] else ''} |")
    json.dump({"standard": {"dir": std_dir, "val_accuracy": std["val_accuracy"]}, "runs": rows, "chosen": chosen,
               "closest": closest,
               "table": "\n".join(lines) + "\n"}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
