#!/usr/bin/env python3
"""ExpNet's leave-one-task-out result against the paper's (Mihaila 2026, token F1: ExpNet SST-2
.398, CoLA .468, HateXplain .473; best baselines .350 / .356 / .396): per held-out task and metric,
ExpNet's mean ± std over its seeds, the best baseline, ExpNet's rank, and its lead over the best
baseline in units of its seed std (|lead| > 2 std: larger than the seed spread).

  scripts/expnet_table.py runs/expnet/loto3-paper-minilm [runs/expnet/loto3-variant-minilm]
  scripts/expnet_table.py DIR_SEED13,DIR_SEED14,DIR_SEED15 [VARIANT_13,VARIANT_14,VARIANT_15]
Reads DIR/report.csv of `salient expnet evaluate` (the first: ExpNet and the baselines; the second,
optional: another ExpNet configuration, shown as its own row). Markdown on stdout.

With several directories, one per classifier seed (the same tasks fine-tuned with another seed),
each cell is taken over the classifiers: ExpNet's mean per classifier (over its own seeds) and
their mean ± std, the best baseline by its mean over the classifiers (only baselines every run
kept: the time budget drops some on some runs), and ExpNet's lead over that baseline paired per
classifier, mean ± standard error over the classifiers (|lead| > 2 s.e.: larger than the spread
over classifier seeds), and how much ExpNet moves between classifiers against the baselines (its
std over the classifiers beside the median of theirs).
"""
import csv
import statistics
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


def task_order(cells):
    return sorted({t for _, t, _ in cells}, key=lambda t: (t not in PAPER, list(PAPER).index(t) if t in PAPER else 0, t))


def paper_cell(task, first_row):
    """The paper's ExpNet / best-baseline F1 for the task, on its first row only."""
    if not first_row:
        return ""
    paper = PAPER.get(task)
    return f"{paper[0]:.3f} / {paper[1]:.3f}" if paper else "— (not in the paper)"


def one_run(cells, variant):
    baselines = sorted({m for m, _, _ in cells if m != "expnet"})
    print("| held-out task | paper: ExpNet / best baseline (token F1) | metric | ExpNet, paper's configuration "
          "(mean ± std, seeds) | rank | best baseline | lead / seed std |"
          + (" salient's variant |" if variant else ""))
    print("|---" * (7 + bool(variant)) + "|")
    for task in task_order(cells):
        first = True  # the task and the paper's numbers head its first row
        for metric, label in METRICS:
            if ("expnet", task, metric) not in cells:
                continue
            mean, std, runs = cells[("expnet", task, metric)]
            scored = [(cells[(b, task, metric)][0], b) for b in baselines if (b, task, metric) in cells]
            best_value, best = max(scored)
            rank = 1 + sum(v > mean for v, _ in scored)
            lead = mean - best_value
            ratio = f"{lead:+.3f} / {std:.3f} = {lead / std:+.1f}" if std > 0 else f"{lead:+.3f} / 0"
            row = [task if first else "", paper_cell(task, first), label, f"{mean:.3f} ± {std:.3f} ({runs})",
                   f"{rank} of {len(scored) + 1}", f"{best} {best_value:.3f}", ratio]
            if variant:
                v = variant.get(("expnet", task, metric))
                row.append(f"{v[0]:.3f} ± {v[1]:.3f}" if v else "—")
            print("| " + " | ".join(row) + " |")
            first = False


def spread_of_baselines(per):
    """The median over baselines of each one's std over the classifiers; random is left out: its
    spread is its own draws, not the classifier's."""
    spreads = [statistics.stdev(v) for m, v in per.items() if m != "random"]
    return statistics.median(spreads) if spreads else float("nan")


def over_classifiers(runs, variants, names):
    """runs: one cells dict per classifier seed (same order as variants, if any)."""
    c = len(runs)
    print(f"Over {c} classifier seeds ({', '.join(names)}); ExpNet's value per classifier is the mean over "
          "its own seeds.\n")
    print("| held-out task | paper: ExpNet / best baseline (token F1) | metric | ExpNet, paper's configuration: "
          "mean ± std over classifiers (each) | rank | best baseline (mean over classifiers) | "
          "ExpNet − best: mean ± s.e. (t) | ExpNet ahead on | std over classifiers: ExpNet / baselines' median |"
          + (" salient's variant (mean ± std) |" if variants else ""))
    print("|---" * (9 + bool(variants)) + "|")
    for task in task_order(runs[0]):
        first = True
        for metric, label in METRICS:
            key = ("expnet", task, metric)
            if not all(key in r for r in runs):
                continue
            own = [r[key][0] for r in runs]
            kept = sorted(m for m, t, k in runs[0]
                          if t == task and k == metric and m != "expnet" and all((m, t, k) in r for r in runs))
            if not kept:
                continue
            per = {m: [r[(m, task, metric)][0] for r in runs] for m in kept}
            mean, own_std = statistics.fmean(own), statistics.stdev(own)
            best = max(kept, key=lambda m: statistics.fmean(per[m]))
            best_mean = statistics.fmean(per[best])
            rank = 1 + sum(statistics.fmean(v) > mean for v in per.values())
            leads = [a - b for a, b in zip(own, per[best])]
            lead = statistics.fmean(leads)
            se = statistics.stdev(leads) / c ** 0.5
            t = f"{lead / se:+.1f}" if se > 0 else "—"
            row = [task if first else "", paper_cell(task, first), label,
                   f"{mean:.3f} ± {own_std:.3f} ({', '.join(f'{v:.3f}' for v in own)})",
                   f"{rank} of {len(kept) + 1}", f"{best} {best_mean:.3f}", f"{lead:+.3f} ± {se:.3f} ({t})",
                   f"{sum(x > 0 for x in leads)} of {c}",
                   f"{own_std:.3f} / {spread_of_baselines(per):.3f}"]
            if variants:
                vs = [v.get(key) for v in variants]
                row.append(f"{statistics.fmean(x[0] for x in vs):.3f} ± {statistics.stdev(x[0] for x in vs):.3f}"
                           if all(vs) else "—")
            print("| " + " | ".join(row) + " |")
            first = False


def main(args):
    if not 1 <= len(args) <= 2:
        sys.exit(__doc__)
    dirs = args[0].split(",")
    variant_dirs = args[1].split(",") if len(args) == 2 else []
    if variant_dirs and len(variant_dirs) != len(dirs):
        sys.exit(f"expnet_table.py: {len(dirs)} paper-configuration directories but {len(variant_dirs)} variant ones")
    if len(dirs) == 1:
        one_run(load(dirs[0]), load(variant_dirs[0]) if variant_dirs else {})
    else:
        over_classifiers([load(d) for d in dirs], [load(d) for d in variant_dirs], dirs)


if __name__ == "__main__":
    main(sys.argv[1:])
