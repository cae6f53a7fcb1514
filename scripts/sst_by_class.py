#!/usr/bin/env python3
"""An `sst evaluate` run's SST subsets split by the predicted class: how many examples, the mean
subset size, how many subsets are empty or hold every feature, and baseline faithfulness against
the control (sst_shuffled) and on the standard model (sst_standard), when the run has them. A
subset whose size follows the predicted class says the class, not which features decide it
(docs/sst.md, SST-2).
Usage: scripts/sst_by_class.py EVAL_DIR [MODEL_DIR]  (MODEL_DIR: for the label names)"""
import json
import os
import statistics
import sys


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1])
    run = sys.argv[1]
    sst_path = os.path.join(run, "examples-sst.jsonl")
    if not os.path.exists(sst_path):
        sys.exit(f"{sst_path}: no such file (an `sst evaluate --methods sst` run directory?)")
    rows = records(sst_path)
    def other(method):  # another method's records of the same run, by example
        path = os.path.join(run, f"examples-{method}.jsonl")
        return {r["index"]: r for r in records(path)} if os.path.exists(path) else {}

    control, judged = other("sst_shuffled"), other("sst_standard")
    names = {}
    if len(sys.argv) == 3:  # a text model's config.json, else an image model's sst.json
        config = os.path.join(sys.argv[2], "config.json")
        if os.path.exists(config):
            with open(config) as f:
                names = {int(k): v for k, v in json.load(f).get("id2label", {}).items()}
        else:
            with open(os.path.join(sys.argv[2], "sst.json")) as f:
                names = dict(enumerate(json.load(f).get("labels", [])))
    print("| predicted class | examples | size % (mean) | empty | every feature | faithful: baseline % | control % "
          "| on the standard model % | the same, empty subsets % |")
    print("|---|---|---|---|---|---|---|---|---|")
    for target in sorted({r["target"] for r in rows}):
        group = [r for r in rows if r["target"] == target]
        sizes = [r["size_percent"] for r in group]
        def cell(by_index, rows):
            values = [by_index[r["index"]]["baseline"] for r in rows if r["index"] in by_index]
            return f"{100 * statistics.mean(values):.1f}" if values else "—"

        empty = [r for r in group if r["size_percent"] == 0]
        print(f"| {names.get(target, target)} | {len(group)} | {statistics.mean(sizes):.1f} | {len(empty)} | "
              f"{sum(s >= 100 - 1e-9 for s in sizes)} | {100 * statistics.mean(r['baseline'] for r in group):.1f} | "
              f"{cell(control, group)} | {cell(judged, group)} | {cell(judged, empty)} |")


if __name__ == "__main__":
    main()
