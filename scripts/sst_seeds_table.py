#!/usr/bin/python3
"""The SST comparison over seeds (scripts/sst_experiments.sh mnist-paper, fashion-mlp-paper,
sst2-paper): mean ± std over the seed directories ROOT/s<seed>, each holding the paper's protocol
(paper/, or for text chosen-lr/: the learning rate chosen on validation) and salient's
straight-through variant (ste/, images) with their chosen models' evaluations and the post-hoc evaluations on that seed's
standard model. The definitions used (the probabilistic fill, ε, the SIS criterion, the time limit)
are read from the evaluations' run.json and printed above the table.

  sst_seeds_table.py ROOT > ROOT/table.md
"""
import json
import statistics
import sys
from pathlib import Path

from sst_table import table_rows

VARIANTS = {"paper": "paper's protocol: hard threshold, the paper's ξ grid",
            "ste": "salient's variant: straight-through, ξ ∈ {0.3, 1, 3} (text: {0.03 … 3})",
            "ft": "salient's variant: the paper's protocol fine-tuned from the standard model"}


def variant_dir(seed, variant):
    """A seed's folder of a variant: paper/ and ste/ (images), or for text the learning rate the
    paper's grid chose (chosen-lr -> lr<rate>, scripts/sst_experiments.sh sst2-paper)."""
    if variant == "paper" and (seed / "chosen-lr").is_dir():
        return seed / "chosen-lr"
    return seed / variant


def spread(values, fmt):
    if not values:
        return "—"
    m = statistics.fmean(values)
    s = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{fmt.format(m)} ± {fmt.format(s)}"


def without_sis(c):
    n = sum(c["no_subset"])
    return f" ({n} without a SIS, all seeds)" if n else ""


def main():
    root = Path(sys.argv[1])
    seeds = sorted((p for p in root.glob("s*") if p.is_dir() and p.name[1:].isdigit()), key=lambda p: int(p.name[1:]))
    cells, chosen, runs = {}, {}, []  # label -> metric -> per-seed values
    order, used = [], []  # the seeds with an evaluation (a seed's trainings may still be under way)
    for seed in seeds:
        for variant, name in VARIANTS.items():
            d = variant_dir(seed, variant)
            if not d.is_dir():
                continue
            sel = d / "selection.json"
            if sel.exists():
                selection = json.loads(sel.read_text())
                xi = lambda run_dir: json.loads((Path(run_dir) / "sst.json").read_text())["objective"]["xi"]
                for kind, run_dir in selection["chosen"].items():
                    near = selection.get("closest", {}).get(kind)
                    pick = (f"ξ={xi(run_dir):g}" if run_dir else
                            f"none eligible (the most accurate: ξ={xi(near):g})" if near else "none eligible")
                    chosen.setdefault((variant, kind), []).append(f"{seed.name}: {pick}")
            for label, r, run in table_rows(d):
                if not label.startswith("SST"):
                    if variant != "paper":
                        continue  # the post-hoc rows are the same evaluations in both
                else:
                    label = f"{label}, {name}"
                runs.append(run)
                if seed not in used:
                    used.append(seed)
                if label not in cells:
                    order.append(label)
                c = cells.setdefault(label, {})
                done = r["explained"] - r["timed_out"] - r.get("no_subset", 0)
                c.setdefault("accuracy", []).append(100 * r["accuracy"])
                c.setdefault("timeouts", []).append(100 * r["timed_out"] / max(r["explained"], 1))
                c.setdefault("n", []).append(r["explained"])
                c.setdefault("no_subset", []).append(r.get("no_subset", 0))
                if done > 0:
                    c.setdefault("size", []).append(r["size_percent"])
                    c.setdefault("seconds", []).append(r["seconds_per_explanation"])
                    for k in ("baseline", "probabilistic", "robust"):
                        c.setdefault(k, []).append(r[f"faithful_{k}"])
    if not runs:
        sys.exit(f"{root}: no evaluations under s*/paper or s*/ste")
    fills = sorted({(r.get("fill", {}).get("noise", "domain"), r.get("fill", r.get("attack", {})).get("epsilon", 0.12)) for r in runs})
    limits = sorted({r["time_limit"] for r in runs if r.get("standard_model")})  # the post-hoc searches' runs
    print(f"Seeds: {', '.join(s.name[1:] for s in used)}. Mean ± std over seeds. Probabilistic fill: "
          + "; ".join(f"{n} (ε = {e:g})" for n, e in fills)
          + f". Post-hoc time limit: {', '.join(f'{t:g} s' for t in limits)} per example. "
          "Faithfulness and size over the examples that finished; time per explanation.\n")
    print("| explanation | accuracy % | size % | time / explanation | time-outs % | faithful: baseline % "
          "| probabilistic % | robust % | n per seed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label in order:
        c = cells[label]
        secs = c.get("seconds", [])
        t = "—" if not secs else (f"{1e3 * statistics.fmean(secs):.2f} ms" if statistics.fmean(secs) < 0.1
                                  else f"{statistics.fmean(secs):.2f} s")
        print(f"| {label} | {spread(c['accuracy'], '{:.2f}')} | {spread(c.get('size', []), '{:.2f}')} | {t} | "
              f"{spread(c['timeouts'], '{:.0f}')}{without_sis(c)} | {spread(c.get('baseline', []), '{:.1f}')} | "
              f"{spread(c.get('probabilistic', []), '{:.1f}')} | {spread(c.get('robust', []), '{:.1f}')} | "
              f"{'/'.join(str(n) for n in c['n'])} |")
    print("\nChosen configurations (scripts/sst_select.py):\n")
    for (variant, kind), picks in sorted(chosen.items()):
        print(f"- {VARIANTS[variant]}, {kind} masking: {'; '.join(picks)}")


if __name__ == "__main__":
    main()
