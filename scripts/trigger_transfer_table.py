#!/usr/bin/env python3
"""Do AttAttr's adversarial trigger patterns transfer between models (e.g. fine-tuning seeds)?
Tabulates `salient attattr triggers` outputs: each model's own mined patterns, and the same
patterns evaluated on the other models (`attattr triggers --patterns`), as the largest drop of one
class's accuracy (points) and the mean over the patterns of each pattern's largest one-class drop.

  scripts/trigger_transfer_table.py s13=runs/attattr/sst2-minilm s14=runs/attattr/sst2-minilm-s14 ...
Each DIR holds triggers.json (mined there) and triggers-from-NAME.json for every other NAME
(the patterns of NAME's directory evaluated on DIR's model). Markdown on stdout.
"""
import json
import statistics
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"trigger_transfer_table.py: {path}: {e}")


def drops(run):
    """(largest one-class drop, mean over patterns of each one's largest one-class drop), in points."""
    per_pattern = [100 * max(p["accuracy_drop"]) for p in run["patterns"]]
    return 100 * run["largest_drop"], statistics.mean(per_pattern) if per_pattern else 0.0


def main(args):
    if len(args) < 2:
        sys.exit(__doc__)
    models = []
    for arg in args:
        name, sep, directory = arg.partition("=")
        if not sep or not name or not directory:
            sys.exit(f"trigger_transfer_table.py: '{arg}' is not NAME=DIR")
        models.append((name, directory))
    names = [n for n, _ in models]
    print("Largest one-class accuracy drop / mean per-pattern drop (points); rows: where the patterns were mined, "
          "columns: the model attacked (diagonal: its own patterns)\n")
    print("| patterns of \\ attacked | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    own, transferred = [], []
    for src, _ in models:
        cells = []
        for dst, directory in models:
            path = f"{directory}/triggers.json" if src == dst else f"{directory}/triggers-from-{src}.json"
            run = load(path)
            if src != dst and "patterns_from" not in run:
                sys.exit(f"trigger_transfer_table.py: {path}: not an evaluation of given patterns")
            largest, mean = drops(run)
            (own if src == dst else transferred).append(largest)
            cells.append(f"{largest:.1f} / {mean:.1f}")
        print(f"| {src} | " + " | ".join(cells) + " |")
    print(f"\nLargest drop, mean over models: own patterns {statistics.mean(own):.1f}, "
          f"another model's {statistics.mean(transferred):.1f} points.")


if __name__ == "__main__":
    main(sys.argv[1:])
