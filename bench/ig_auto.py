#!/usr/bin/env python3
"""IG to an accuracy target (issue #86 item 4; docs/PERFORMANCE.md, "IG to an accuracy"): salient's
`steps=auto` against a fixed 50 Gauss-Legendre points (Captum's default n_steps and method, which
salient's IG equals to float rounding: tests/hf), on the first N SST-2 dev sentences, one thread
count, interleaved rounds. For each setting: seconds (median of the rounds), points per sentence,
and the completeness gap |delta| / |F(x) - F(x')| (median and largest).

  PYTHONPATH=build/python bench/ig_auto.py --model DIR [--limit 100] [--rounds 3] [--tols 0.01,0.001]
"""
import argparse
import csv
import os
import statistics
import time

import salient


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default=os.path.join(os.environ.get("SALIENT_SHARED", "../shared"), "data/sst2_glue/dev.tsv"))
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tols", default="0.01,0.001")
    a = ap.parse_args()
    with open(a.data, newline="") as f:
        texts = [row["sentence"] for row in csv.DictReader(f, delimiter="\t")][: a.limit]
    m = salient.load(a.model)
    settings = [("50 points (Captum's default)", {"steps": 50})] + [
        (f"auto, tol {t}", {"steps": "auto", "tol": float(t)}) for t in a.tols.split(",")]
    times = {name: [] for name, _ in settings}
    results = {}
    for _ in range(a.rounds):
        for name, params in settings:
            t0 = time.perf_counter()
            results[name] = salient.explain(m, texts, method="ig", batch_size=8, **params)
            times[name].append(time.perf_counter() - t0)
    print(f"{len(texts)} sentences, {salient.threads()} threads, {a.rounds} interleaved rounds")
    print("| setting | seconds (median) | points per sentence (mean) | gap / abs(F(x) - F(x')): median, largest |")
    print("|---|---|---|---|")
    for name, _ in settings:
        gaps, points = [], []
        for e in results[name]:
            change = abs(float(sum(e.scores)) - e.extras["delta"])
            gaps.append(abs(e.extras["delta"]) / change if change > 0 else float("inf"))
            points.append(e.extras["steps"])
        print(f"| {name} | {statistics.median(times[name]):.2f} | {statistics.mean(points):.1f} | "
              f"{statistics.median(gaps):.1e}, {max(gaps):.1e} |")


if __name__ == "__main__":
    main()
