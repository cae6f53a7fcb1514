#!/usr/bin/env python3
"""Tabulates `salient attattr prune` curves over several models (e.g. seeds) per arm: the mean
accuracy of each ordering at each number of heads removed (every model in brackets), and each
model's mean accuracy over the partly pruned points (at least one head removed, at least one kept).

  scripts/prune_table.py encoder=runs/attattr/encoder,runs/attattr/sst2-tasks-s14 scratch=runs/attattr/sst2-scratch-s13
Each directory holds a prune.json; the output is markdown on stdout.
"""
import json
import statistics
import sys

ORDERS = ["attattr", "attention", "random", "taylor", "taylor_michel"]


def load(directory):
    path = f"{directory}/prune.json"
    try:
        with open(path) as f:
            prune = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"prune_table.py: {path}: {e}")
    # One accuracy per number of removed heads (10% steps can repeat a count).
    return prune["model"], {o: {c["removed"]: 100 * c["accuracy"] for c in prune["curves"][o]} for o in ORDERS}


def main(args):
    if not args:
        sys.exit(__doc__)
    for arg in args:
        name, sep, dirs = arg.partition("=")
        if not sep or not name or not dirs:
            sys.exit(f"prune_table.py: '{arg}' is not NAME=DIR[,DIR...]")
        models = [load(d) for d in dirs.split(",")]
        counts = sorted(set.intersection(*(set(c["attattr"]) for _, c in models)))
        full, heads = counts[0], counts[-1]
        print(f"**{name}**: " + ", ".join(f"{m} (unpruned {c['attattr'][full]:.2f})" for m, c in models) + "\n")
        print("| heads removed | " + " | ".join(ORDERS) + " |")
        print("|---" * (len(ORDERS) + 1) + "|")
        for k in counts[1:]:
            cells = []
            for o in ORDERS:
                values = [c[o][k] for _, c in models]
                cells.append(f"{statistics.mean(values):.1f} (" + ", ".join(f"{v:.1f}" for v in values) + ")")
            print(f"| {k} | " + " | ".join(cells) + " |")
        inner = [k for k in counts if full < k < heads]
        print(f"\nMean accuracy over {inner[0]}–{inner[-1]} heads removed:\n")
        print("| model | " + " | ".join(ORDERS) + " |")
        print("|---" * (len(ORDERS) + 1) + "|")
        means = {o: [] for o in ORDERS}
        for m, c in models:
            row = {o: statistics.mean(c[o][k] for k in inner) for o in ORDERS}
            best = max(row.values())
            for o in ORDERS:
                means[o].append(row[o])
            print(f"| {m} | " + " | ".join(f"**{row[o]:.2f}**" if row[o] == best else f"{row[o]:.2f}" for o in ORDERS) + " |")
        print("| mean | " + " | ".join(f"{statistics.mean(means[o]):.2f}" for o in ORDERS) + " |\n")


if __name__ == "__main__":
    main(sys.argv[1:])
