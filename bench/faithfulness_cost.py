"""What one input's faithfulness numbers cost beside its explanation (docs/PERFORMANCE.md, "Per-input
faithfulness"): on a text of the model's full length (an ERASER movie review cut to 510 pieces), the
time of `salient.faithfulness` with the benchmark's bins (deciles and the curves) and with ERASER's
(the server's default), against cheap explanations of the same text. Median of --rounds, interleaved.

  python3 bench/faithfulness_cost.py MODEL_DIR [--threads 2] [--rounds 3]
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import salient


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    salient.set_threads(a.threads)
    m = salient.load(a.model)
    shared = Path(os.environ.get("SALIENT_SHARED", Path(__file__).resolve().parents[2] / "shared"))
    review = sorted((shared / "data" / "eraser_movies" / "docs").iterdir())[0].read_text()
    words = review.split()
    # The longest prefix of the review that fits the model's positions uncut.
    lo, hi = 1, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if not m.tokenize(" ".join(words[:mid]))[0]["truncated"]:
            lo = mid
        else:
            hi = mid - 1
    text = " ".join(words[:lo])
    n = len(m.tokenize(text)[0]["tokens"])
    ex = {name: salient.explain(m, text, method=name)[0] for name in ("saliency", "gae")}
    runs = {
        "saliency explanation": lambda: salient.explain(m, text, method="saliency"),
        "gae explanation": lambda: salient.explain(m, text, method="gae"),
        "faithfulness, deciles + curves": lambda: salient.faithfulness(m, text, ex["saliency"].scores, target=ex["saliency"].target),
        "faithfulness, ERASER's bins": lambda: salient.faithfulness(m, text, ex["saliency"].scores, target=ex["saliency"].target,
                                                                    aopc_bins="eraser"),
    }
    times = {k: [] for k in runs}
    for _ in range(a.rounds):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    base = statistics.median(times["saliency explanation"])
    print(f"{n} tokens, {a.threads} threads, median of {a.rounds} interleaved rounds", file=sys.stderr)
    print("| what | s | × saliency |")
    print("|---|---|---|")
    for name, t in times.items():
        print(f"| {name} | {statistics.median(t):.3f} | {statistics.median(t) / base:.1f} |")


if __name__ == "__main__":
    main()
