#!/usr/bin/python3
"""Every epoch of SST trainings as one markdown table (docs/sst.md's robust text ablation).

  sst_history.py RUN_DIR... > table.md

One row per run and epoch: the masking, ξ, λ, the attack's steps (HotFlip flips for text), the
epoch's validation accuracy, faithfulness, subset size and loss, and whether the paper's rule
(the lowest validation loss) keeps that epoch.
"""
import json
import sys
from pathlib import Path


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: sst_history.py RUN_DIR...")
    runs = []
    for d in sys.argv[1:]:
        path = Path(d) / "sst.json"
        if not path.is_file():
            sys.exit(f"sst_history.py: {path}: not found (is {d} a finished sst train run?)")
        runs.append((Path(d).name, json.loads(path.read_text())))
    print("| run | masking | ξ | λ | attack steps (text: flips) | epoch | val accuracy % "
          "| val faithful % | val size % | val loss | kept |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, s in runs:
        o = s["objective"]
        standard = o["masking"] == "none"  # no objective beyond the cross-entropy: its columns are "–"
        xi, lam, steps = ("–",) * 3 if standard else (f"{o['xi']:g}", f"{o['lambda']:g}", o["fill"]["steps"])
        for e in s["history"]:
            faithful, size = (("–", "–") if standard
                              else (f"{100 * e['val_faithfulness']:.1f}", f"{100 * e['val_size']:.2f}"))
            print(f"| {name} | {o['masking']} | {xi} | {lam} | {steps} | {e['epoch']} "
                  f"| {100 * e['val_accuracy']:.2f} | {faithful} | {size} "
                  f"| {e['val_loss']:.3f} | {'yes' if e['epoch'] == s['best_epoch'] else ''} |")


if __name__ == "__main__":
    main()
