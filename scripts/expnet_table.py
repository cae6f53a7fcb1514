#!/usr/bin/env python3
"""ExpNet's leave-one-task-out result against the paper's (Mihaila 2026, token F1: ExpNet SST-2
.398, CoLA .468, HateXplain .473; best baselines .350 / .356 / .396): per held-out task and metric,
ExpNet's mean ± std over its seeds, the best baseline, ExpNet's rank, and its lead over the best
baseline in units of its seed std (|lead| > 2 std: larger than the seed spread).

  scripts/expnet_table.py runs/expnet/loto3-paper-minilm [runs/expnet/loto3-variant-minilm]
Reads DIR/report.csv of `salient expnet evaluate` (the first: ExpNet and the baselines; the second,
optional: another ExpNet configuration, shown as its own row). Markdown on stdout.
"""
import csv
import sys

PAPER = {"sst2": (0.398, 0.350), "cola": (0.468, 0.356), "hatexplain": (0.473, 0.396)}
METRICS = [("f1_threshold", "token F1 at a threshold"), ("f1_top_k", "token F1, top-k"), ("auroc", "AUROC")]


def load(directory):
    path = f"{directory}/report.csv"
    cells = {}
    try:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["section"] == "main":
                    cells[(row["method"], row["heldout"], row["metric"])] = (float(row["mean"]), float(row["std"]),
                                                                             int(row["runs"]))
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"expnet_table.py: {path}: {e}")
    if not cells:
        sys.exit(f"expnet_table.py: {path}: no results")
    return cells


def main(args):
    if not 1 <= len(args) <= 2:
        sys.exit(__doc__)
    cells = load(args[0])
    variant = load(args[1]) if len(args) == 2 else {}
    tasks = sorted({t for _, t, _ in cells}, key=lambda t: (t not in PAPER, list(PAPER).index(t) if t in PAPER else 0, t))
    baselines = sorted({m for m, _, _ in cells if m != "expnet"})
    print("| held-out task | paper: ExpNet / best baseline (token F1) | metric | ExpNet, paper's configuration "
          "(mean ± std, seeds) | rank | best baseline | lead / seed std |"
          + (" salient's variant |" if variant else ""))
    print("|---" * (7 + bool(variant)) + "|")
    for task in tasks:
        paper = PAPER.get(task)
        for i, (metric, label) in enumerate(METRICS):
            if ("expnet", task, metric) not in cells:
                continue
            mean, std, runs = cells[("expnet", task, metric)]
            scored = [(cells[(b, task, metric)][0], b) for b in baselines if (b, task, metric) in cells]
            best_value, best = max(scored)
            rank = 1 + sum(v > mean for v, _ in scored)
            lead = mean - best_value
            ratio = f"{lead:+.3f} / {std:.3f} = {lead / std:+.1f}" if std > 0 else f"{lead:+.3f} / 0"
            paper_cell = (f"{paper[0]:.3f} / {paper[1]:.3f}" if paper else "— (not in the paper)") if i == 0 else ""
            row = [task if i == 0 else "", paper_cell, label, f"{mean:.3f} ± {std:.3f} ({runs})",
                   f"{rank} of {len(scored) + 1}", f"{best} {best_value:.3f}", ratio]
            if variant:
                v = variant.get(("expnet", task, metric))
                row.append(f"{v[0]:.3f} ± {v[1]:.3f}" if v else "—")
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
