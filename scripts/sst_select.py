#!/usr/bin/python3
"""Applies the SST sweep's selection rule and writes the sweep table (docs/sst.md).

  sst_select.py STANDARD_DIR SWEEP_DIR... > selection.json

Rule (ours; the paper's appendix rule was not available to us): among the runs whose validation
accuracy is within 1 point of the standard model's, take those whose validation faithfulness under
their own masking is ≥ 0.95 and choose the smallest mean subset; when none reaches 0.95, the most
faithful. Ties go to the run first in the sweep's order (order()). One choice per masking kind.
When no run of a kind is within the point, none is chosen and "closest" names the most accurate
run (then the most faithful), which scripts/sst_experiments.sh evaluates under that label.

  sst_select.py --choose-lr SEED_DIR RATE...

prints the rate whose standard model (SEED_DIR/lr<RATE>/standard) has the best validation accuracy
at its kept epoch; a tie in accuracy goes to the lower validation loss, then to the rate first
given. ERASER's seed 15 needed it: all three standards end at 50.0%, and the loss is the one
validation number left that tells them apart (the measure early stopping already uses).

  sst_select.py --may-be-chosen RUN STANDARD_DIR SWEEP_DIR...

exits 0 when RUN, one of the finished SWEEP_DIRs, can still be the run the rule picks for its
masking kind (chosen or closest) whatever the unfinished runs give, else 1: the rule picks the
run unbeaten() among them (main() picks by it too), and runs still to come can only add
competitors.
scripts/sst_experiments.sh's EVAL_EACH evaluates only such runs. An unfinished standard model
(no sst.json yet) leaves every run possible.
"""
import json
import sys
from pathlib import Path


def best_epoch(d):
    s = json.loads((Path(d) / "sst.json").read_text())
    e = s["history"][s["best_epoch"] - 1]
    return s, e


def sweep_rows(std_dir, sweep):
    _, std = best_epoch(std_dir)
    rows = []
    for d in sweep:
        s, e = best_epoch(d)
        o = s["objective"]
        rows.append({"dir": d, "masking": o["masking"], "xi": o["xi"], "lambda": o["lambda"],
                     "straight_through": o["straight_through"], "epoch": s["best_epoch"],
                     "val_accuracy": e["val_accuracy"], "val_faithfulness": e["val_faithfulness"], "val_size": e["val_size"],
                     "eligible": e["val_accuracy"] >= std["val_accuracy"] - 0.01})
    return std, rows


def rank(r):
    """The rule as one order: eligible and ≥ 95% faithful runs first, the smaller subset higher; then
    eligible ones, the more faithful higher; then the rest, the more accurate (then faithful) higher."""
    if r["eligible"] and r["val_faithfulness"] >= 0.95:
        return (2, -r["val_size"])
    if r["eligible"]:
        return (1, r["val_faithfulness"])
    return (0, r["val_accuracy"], r["val_faithfulness"])


def order(r):
    """The sweep's order, which breaks rank() ties: masking, the hard threshold before straight-through,
    then ξ from large to small."""
    return (r["masking"], r["straight_through"], -r["xi"], r["lambda"])


def unbeaten(mine, rows):
    """No run of mine's kind in rows ranks above it, or as high and first in order(): the rule's pick
    among rows, and one that later runs may still beat."""
    return not any(rank(r) > rank(mine) or (rank(r) == rank(mine) and order(r) < order(mine))
                   for r in rows if r["masking"] == mine["masking"])


def may_be_chosen(run, std_dir, sweep):
    if not (Path(std_dir) / "sst.json").exists():
        return True
    _, rows = sweep_rows(std_dir, sweep)
    mine = next((r for r in rows if Path(r["dir"]).resolve() == Path(run).resolve()), None)
    if mine is None:
        print(f"--may-be-chosen: '{run}' is not among the finished runs given", file=sys.stderr)
        sys.exit(2)  # 1 means "cannot be chosen"
    return unbeaten(mine, rows)


def choose_lr(seed_dir, rates):
    def validation(rate):
        _, e = best_epoch(Path(seed_dir) / f"lr{rate}" / "standard")
        return (e["val_accuracy"], -e["val_loss"])
    best = rates[0]
    for rate in rates[1:]:  # strictly better only: a full tie keeps the rate first given
        if validation(rate) > validation(best):
            best = rate
    return best


def fail(message):  # exit 2: --may-be-chosen's 1 means "cannot be chosen"
    print(message, file=sys.stderr)
    sys.exit(2)


USAGE = ("usage: sst_select.py STANDARD_DIR SWEEP_DIR... | --choose-lr SEED_DIR RATE... | "
         "--may-be-chosen RUN STANDARD_DIR SWEEP_DIR...")


def main():
    args = sys.argv[1:]
    known = {"--choose-lr": 2, "--may-be-chosen": 3}
    if not args or (args[0].startswith("-") and (args[0] not in known or len(args) < known[args[0]] + 1)):
        fail(USAGE)
    if sys.argv[1] == "--choose-lr":
        print(choose_lr(sys.argv[2], sys.argv[3:]))
        return
    if sys.argv[1] == "--may-be-chosen":
        run, std_dir, sweep = sys.argv[2], sys.argv[3], sys.argv[4:]
        sys.exit(0 if may_be_chosen(run, std_dir, sweep) else 1)
    std_dir, sweep = sys.argv[1], sys.argv[2:]
    std, rows = sweep_rows(std_dir, sweep)
    chosen, closest = {}, {}
    rows.sort(key=order)
    for kind in sorted({r["masking"] for r in rows}):
        pick = next(r for r in rows if r["masking"] == kind and unbeaten(r, rows))
        chosen[kind] = pick["dir"] if pick["eligible"] else None
        if not pick["eligible"]:
            closest[kind] = pick["dir"]
    lines = ["| masking | threshold | ξ | λ | epoch | val accuracy % | val faithful % | val size % | chosen |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['masking']} | {'straight-through' if r['straight_through'] else 'hard'} | {r['xi']:g} | "
                     f"{r['lambda']:g} | {r['epoch']} | {100 * r['val_accuracy']:.2f}{'' if r['eligible'] else ' (out)'} | "
                     f"{100 * r['val_faithfulness']:.1f} | {100 * r['val_size']:.2f} | "
                     f"{'**yes**' if chosen.get(r['masking']) == r['dir'] else ''}"
                     f"{'closest (none within a point)' if closest.get(r['masking']) == r['dir'] else ''} |")
    json.dump({"standard": {"dir": std_dir, "val_accuracy": std["val_accuracy"]}, "runs": rows, "chosen": chosen,
               "closest": closest,
               "table": "\n".join(lines) + "\n"}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    try:
        main()
    except FileNotFoundError as e:  # a run without its records: one line naming the file
        fail(f"sst_select.py: {e.filename}: no such file")
