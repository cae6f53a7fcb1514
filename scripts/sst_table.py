#!/usr/bin/python3
"""One comparison table from an SST experiment directory (scripts/sst_experiments.sh):
the post-hoc rows of DIR/eval-posthoc and the SST row of each DIR/eval-sst-<masking>.

  sst_table.py DIR > DIR/table.md
"""
import json
import sys
from pathlib import Path


def no_sis(r):
    """The time-outs cell's note for SIS with Carter et al.'s criterion: inputs below the threshold."""
    return f" ({r['no_subset']} without a SIS)" if r.get("no_subset") else ""


def table_rows(d):
    """(label, row, run settings) of every evaluation in an experiment directory."""
    out = []
    for name in ["eval-sst-baseline", "eval-sst-probabilistic", "eval-sst-robust", "eval-posthoc",
                 "eval-posthoc-sis-threshold"]:
        f = Path(d) / name / "table.json"
        if not f.exists():
            continue
        run = json.loads(f.read_text())
        for r in run["rows"]:
            if r["method"] == "sst":
                label = f"SST ({name.rsplit('-', 1)[1]} masking)"
            elif r["method"] == "sst_shuffled":  # the control: as many features, at random positions
                label = f"SST ({name.rsplit('-', 1)[1]} masking), its subset's size at random positions"
            elif r["method"] == "sst_standard":  # its subsets, judged by the standard model
                label = f"SST ({name.rsplit('-', 1)[1]} masking), its subsets checked on the standard model"
            elif name.endswith("sis-threshold"):
                s = run["run"]["search"]
                label = f"sis, Carter et al.'s criterion p ≥ {s['sis_threshold']:g} (standard model)"
            else:
                label = r["method"] + " (standard model)"
            out.append((label, r, run["run"]))
    return out


def main():
    d = Path(sys.argv[1])
    rows = []
    for label, r, run in table_rows(d):
        rows.append((label, r, run))
    print("| explanation | accuracy % | size % | time / explanation | time-outs % | faithful: baseline % | probabilistic % | robust % | n |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, r, _ in rows:
        done = r["explained"] - r["timed_out"] - r.get("no_subset", 0)
        t = r["seconds_per_explanation"]
        time = "—" if done == 0 else (f"{1e3 * t:.2f} ms" if t < 0.1 else f"{t:.2f} s")
        cell = (lambda v: "—" if done == 0 else f"{v:.1f}")
        size = "—" if done == 0 else f"{r['size_percent']:.2f} ± {r['size_percent_std']:.2f}"
        print(f"| {label} | {100 * r['accuracy']:.2f} | {size} | "
              f"{time} | {100 * r['timed_out'] / max(r['explained'], 1):.0f}{no_sis(r)} | {cell(r['faithful_baseline'])} | "
              f"{cell(r['faithful_probabilistic'])} | {cell(r['faithful_robust'])} | {r['explained']} |")


if __name__ == "__main__":
    main()
