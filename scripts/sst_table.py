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


SST_EVALS = [f"eval-sst-{kind}{pick}" for pick in ("", "-closest") for kind in ("baseline", "probabilistic", "robust")]


def sst_label(name):
    """The SST row's name for an evaluation folder: eval-sst-<kind> holds the run the selection rule
    chose, eval-sst-<kind>-closest the most accurate run where none was within a point."""
    kind = name[len("eval-sst-"):]
    if kind.endswith("-closest"):
        return f"SST ({kind[:-len('-closest')]} masking; none within a point of the standard model, the most accurate run)"
    return f"SST ({kind} masking)"


def table_rows(d):
    """(label, row, run settings) of every evaluation in an experiment directory."""
    out = []
    for name in SST_EVALS + ["eval-posthoc", "eval-posthoc-sis-threshold"]:
        f = Path(d) / name / "table.json"
        if not f.exists():
            continue
        run = json.loads(f.read_text())
        for r in run["rows"]:
            if r["method"] == "sst":
                label = sst_label(name)
            elif r["method"] == "sst_shuffled":  # the control: as many features, at random positions
                label = f"{sst_label(name)}, its subset's size at random positions"
            elif r["method"] == "sst_standard":  # its subsets, judged by the standard model
                label = f"{sst_label(name)}, its subsets checked on the standard model"
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
