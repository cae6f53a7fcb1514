#!/usr/bin/env python3
"""The Python package's overhead against the CLI, per example, on the same inputs (issue #14: at
most 5% more). Run on a quiet machine:

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [MODEL_DIR] [--salient build/salient]

The CLI's per-example time is its marginal cost, (T(2N inputs) − T(N inputs)) / N, so process start
and model loading are not counted; the package's is T(N) / N with the model loaded once. Each
figure is the median of REPEATS runs, methods saliency (cheapest: overhead shows most) and IG.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import salient

REPEATS = 7
N = 2048  # and 2N: large enough that compute, not process start, dominates the difference


def texts(n):
    words = "a charming , moving and often funny journey through the dull parts of a very long film".split()
    return [" ".join(words[(i % 5):(i % 5) + 8 + i % 7]) for i in range(n)]


def cli_seconds(binary, model, method, params, lines):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "in.jsonl")
        with open(path, "w") as f:
            f.write("".join(json.dumps({"text": t}) + "\n" for t in lines))
        args = [binary, "--quiet", "explain", "--model", model, "--method", method, "-i", path, "-o",
                os.path.join(d, "out.jsonl"), "--batch-size", "8"]
        for k, v in params.items():
            args += ["--" + k.replace("_", "-"), str(v)]
        start = time.perf_counter()
        subprocess.run(args, check=True)
        return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default="../shared/fixtures/reference-bert/model")
    ap.add_argument("--salient", default="build/salient")
    a = ap.parse_args()
    m = salient.load(a.model)
    rows = []
    for method, params in [("saliency", {}), ("ig", {"steps": 50})]:
        one, two = texts(N), texts(2 * N)
        salient.explain(m, one[:8], method=method, batch_size=8, **params)  # warm up
        py = statistics.median(
            [(lambda t0: (salient.explain(m, one, method=method, batch_size=8, **params), time.perf_counter() - t0)[1])(
                time.perf_counter()) for _ in range(REPEATS)]) / N
        cli_n = statistics.median([cli_seconds(a.salient, a.model, method, params, one) for _ in range(REPEATS)])
        cli_2n = statistics.median([cli_seconds(a.salient, a.model, method, params, two) for _ in range(REPEATS)])
        cli = (cli_2n - cli_n) / N
        rows.append((method, cli * 1e3, py * 1e3, py / cli))
    print(f"model {a.model}, {N} / {2 * N} inputs, batch 8, median of {REPEATS}")
    print("| method | CLI ms/example (marginal) | Python ms/example | Python / CLI |")
    print("|---|---|---|---|")
    for method, cli, py, ratio in rows:
        print(f"| {method} | {cli:.3f} | {py:.3f} | {ratio:.3f} |")


if __name__ == "__main__":
    main()
