#!/usr/bin/env python3
"""One markdown table from a `salient benchmark` run's summary.json: a row per method, the mean of
each metric with its bootstrap 95% CI, the best mean of each column in bold (the lowest for the
metrics where lower is better). With --timing DIR, the ms per example of another run (a quiet
timing run over fewer examples) replaces the run's own.

    python3 scripts/bench_table.py runs/bench/sst2-minilm [--timing runs/bench/timing/sst2-minilm]
    python3 scripts/bench_table.py --combine runs/bench/sst2-minilm runs/bench/hatexplain-minilm ...
        (one row per method: token F1 and AOPC comprehensiveness on each run, means, best in bold)
"""
import argparse
import json
import math
import os
import sys

COLUMNS = [  # metric, header, lower is better
    ("token_f1", "token F1 ↑", False),
    ("token_auroc", "token AUROC ↑", False),
    ("token_auprc", "token AUPRC ↑", False),
    ("comprehensiveness", "comp. ↑", False),
    ("sufficiency", "suff. ↓", True),
    ("aopc_comprehensiveness", "AOPC comp. ↑", False),
    ("aopc_sufficiency", "AOPC suff. ↓", True),
]


def load(path):
    with open(os.path.join(path, "summary.json"), encoding="utf-8") as f:
        return json.load(f)


def combined(runs):
    summaries = [load(r) for r in runs]
    metrics = [("token_f1", "token F1"), ("aopc_comprehensiveness", "AOPC comp.")]
    methods = []
    for s in summaries:
        methods += [m for m in s["methods"] if m not in methods]
    header = ["method"]
    for s in summaries:
        header += [f"{s['data']}: {h}" for _, h in metrics]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    best = [{m: max((x[m]["mean"] for x in s["methods"].values() if m in x and x[m]["mean"] is not None), default=None)
             for m, _ in metrics} for s in summaries]
    for name in methods:
        row = [name]
        for s, b in zip(summaries, best):
            for m, _ in metrics:
                v = s["methods"].get(name, {}).get(m)
                if not v or v["mean"] is None:
                    row.append("–")
                    continue
                cell = f"{v['mean']:.3f}"
                row.append(f"**{cell}**" if math.isclose(v["mean"], b[m], abs_tol=5e-4) else cell)
        print("| " + " | ".join(row) + " |")
    print("\n" + "; ".join(f"{s['data']}: {s['examples']} examples, {s['model']}" for s in summaries) + ".")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--combine":
        return combined(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="benchmark output directory (holds summary.json)")
    ap.add_argument("--timing", help="another run's directory whose time_ms to show")
    ap.add_argument("--no-ci", action="store_true", help="means only")
    a = ap.parse_args()
    s = load(a.run)
    methods = s["methods"]
    timing = load(a.timing)["methods"] if a.timing else methods
    cols = [c for c in COLUMNS if any(c[0] in m for m in methods.values())]
    best = {}
    for metric, _, lower in cols:
        vals = [m[metric]["mean"] for m in methods.values() if metric in m and m[metric]["mean"] is not None]
        if vals:
            best[metric] = min(vals) if lower else max(vals)
    header = ["method"] + [h for _, h, _ in cols] + ["ms / example"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, m in methods.items():
        row = [name]
        for metric, _, _ in cols:
            v = m.get(metric)
            if not v or v["mean"] is None:
                row.append("–")
                continue
            cell = f"{v['mean']:.3f}"
            if metric in best and math.isclose(v["mean"], best[metric], abs_tol=5e-4):
                cell = f"**{cell}**"
            if not a.no_ci and v["ci95"][0] is not None:
                cell += f" [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]"
            row.append(cell)
        t = timing.get(name, {}).get("time_ms")
        row.append("–" if not t or t["mean"] is None else (f"{t['mean']:.1f}" if t["mean"] < 100 else f"{t['mean']:,.0f}"))
        print("| " + " | ".join(row) + " |")
    print(f"\n{s['examples']} examples of {s['data']}, model {s['model']}; bootstrap 95% CIs of the mean"
          f"{' (--no-ci: means only)' if a.no_ci else ''}.")


if __name__ == "__main__":
    sys.exit(main())
