"""The table scripts that turn runs into the docs' opening tables (scripts/*_table.py), on small
hand-made inputs whose answers are worked out here."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXPNET_TABLE = REPO / "scripts" / "expnet_table.py"


def write_report(directory, rows):
    """rows: (method, heldout, metric, mean, std, runs) of the main section of a report.csv."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = ["section,method,heldout,metric,mean,std,runs,examples"]
    lines += [f"main,{m},{t},{k},{mean},{std},{runs},200" for m, t, k, mean, std, runs in rows]
    lines.append("ablation,feat:cls_to_token,sst2,auroc,0.9,0,3,200")  # not a main row: ignored
    (directory / "report.csv").write_text("\n".join(lines) + "\n")


def table(*args):
    done = subprocess.run([sys.executable, str(EXPNET_TABLE), *map(str, args)], capture_output=True, text=True)
    return done


def row_of(text, metric_label):
    rows = [line for line in text.splitlines() if f"| {metric_label} |" in line]
    assert len(rows) == 1, text
    return [cell.strip() for cell in rows[0].strip("|").split("|")]


def test_expnet_table_one_run(tmp_path):
    write_report(tmp_path / "a", [("expnet", "sst2", "auroc", 0.70, 0.01, 3),
                                  ("ig", "sst2", "auroc", 0.73, 0, 1), ("random", "sst2", "auroc", 0.5, 0, 1)])
    done = table(tmp_path / "a")
    assert done.returncode == 0, done.stderr
    cells = row_of(done.stdout, "AUROC")
    assert cells[0] == "sst2" and cells[1] == "0.398 / 0.350"
    assert cells[3] == "0.700 ± 0.010 (3)"
    assert cells[4] == "2 of 3" and cells[5] == "ig 0.730"
    assert cells[6] == "-0.030 / 0.010 = -3.0"


def test_expnet_table_over_classifier_seeds(tmp_path):
    # Three classifiers. ExpNet 0.60 / 0.66 / 0.63; ig 0.62 / 0.62 / 0.62 (best by its mean 0.62);
    # occlusion is best on the second run only and dropped by the budget on the third: left out.
    runs = [(0.60, 0.62, 0.70), (0.66, 0.62, 0.50), (0.63, 0.62, None)]
    dirs = []
    for i, (e, ig, occ) in enumerate(runs):
        rows = [("expnet", "hatexplain", "f1_top_k", e, 0.02, 3), ("ig", "hatexplain", "f1_top_k", ig, 0, 1),
                ("random", "hatexplain", "f1_top_k", 0.4, 0, 1)]
        if occ is not None:
            rows.append(("occlusion", "hatexplain", "f1_top_k", occ, 0, 1))
        write_report(tmp_path / f"s{i}", rows)
        dirs.append(str(tmp_path / f"s{i}"))
    done = table(",".join(dirs))
    assert done.returncode == 0, done.stderr
    cells = row_of(done.stdout, "token F1, top-k")
    assert cells[0] == "hatexplain" and cells[1] == "0.473 / 0.396"
    assert cells[3] == "0.630 ± 0.030 (0.600, 0.660, 0.630)"   # mean 0.63, sample std 0.03
    assert cells[4] == "1 of 3" and cells[5] == "ig 0.620"      # occlusion is not kept by every run
    # leads -0.02, +0.04, +0.01: mean +0.01, sample std 0.03, s.e. 0.03 / sqrt(3) = 0.0173
    assert cells[6] == "+0.010 ± 0.017 (+0.6)"
    assert cells[7] == "2 of 3"
    # std over classifiers: ExpNet 0.030; the kept baselines but random: ig alone, 0.000
    assert cells[8] == "0.030 / 0.000"


def test_expnet_table_refuses_unmatched_variants_and_missing_runs(tmp_path):
    write_report(tmp_path / "a", [("expnet", "sst2", "auroc", 0.7, 0.01, 3), ("ig", "sst2", "auroc", 0.73, 0, 1)])
    done = table(f"{tmp_path / 'a'},{tmp_path / 'a'}", tmp_path / "a")
    assert done.returncode != 0 and "2 paper-configuration directories but 1 variant" in done.stderr
    done = table(f"{tmp_path / 'a'},{tmp_path / 'missing'}")
    assert done.returncode != 0 and "missing/report.csv" in done.stderr


SST_SELECT = REPO / "scripts" / "sst_select.py"


def write_sst_run(directory, masking, xi, accuracy, faithfulness, size):
    """An sst.json as `salient sst train` writes it: the objective and the kept epoch's validation."""
    import json
    directory.mkdir(parents=True)
    history = [{"val_accuracy": 0.1, "val_faithfulness": 0.0, "val_size": 1.0},  # epoch 1: not the kept one
               {"val_accuracy": accuracy, "val_faithfulness": faithfulness, "val_size": size}]
    objective = {"masking": masking, "xi": xi, "lambda": 1.0, "straight_through": False}
    (directory / "sst.json").write_text(json.dumps({"best_epoch": 2, "history": history, "objective": objective}))
    return directory


def test_sst_select_rule_and_closest(tmp_path):
    """Within a point of the standard model's accuracy: the smallest ≥ 95%-faithful subset, else the most
    faithful; a kind with no run within the point gets no choice and its most accurate run as closest."""
    import json
    std = write_sst_run(tmp_path / "standard", "none", 0, 0.850, 0, 0)
    runs = [write_sst_run(tmp_path / "b1", "baseline", 1e-4, 0.845, 0.96, 0.30),   # eligible, faithful
            write_sst_run(tmp_path / "b2", "baseline", 1e-5, 0.841, 0.97, 0.20),   # eligible, faithful, smaller
            write_sst_run(tmp_path / "b3", "baseline", 1e-6, 0.830, 0.99, 0.05),   # 2 points below: out
            write_sst_run(tmp_path / "p1", "probabilistic", 1e-4, 0.845, 0.90, 0.1),  # eligible, not ≥ 95%
            write_sst_run(tmp_path / "p2", "probabilistic", 1e-5, 0.842, 0.93, 0.4),  # eligible, most faithful
            write_sst_run(tmp_path / "r1", "robust", 1e-4, 0.820, 0.90, 0.1),      # none within a point:
            write_sst_run(tmp_path / "r2", "robust", 1e-5, 0.835, 0.80, 0.2),      # the most accurate is closest
            write_sst_run(tmp_path / "r3", "robust", 1e-6, 0.835, 0.70, 0.3)]      # (ties: the more faithful)
    done = subprocess.run([sys.executable, str(SST_SELECT), str(std), *map(str, runs)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["chosen"] == {"baseline": str(runs[1]), "probabilistic": str(runs[4]), "robust": None}
    assert out["closest"] == {"robust": str(runs[6])}
    assert "closest (none within a point)" in out["table"]
    # --may-be-chosen: the picks can be, a run a finished one beats cannot; with its rivals not yet
    # finished (b1 without b2), b1 still can; an unfinished standard model leaves every run possible
    def may(run, *sweep, standard=std):
        return subprocess.run([sys.executable, str(SST_SELECT), "--may-be-chosen", str(run), str(standard),
                               *map(str, sweep)], capture_output=True, text=True).returncode
    assert [may(r, *runs) for r in runs] == [1, 0, 1, 1, 0, 1, 0, 1]
    assert may(runs[0], runs[0], runs[2]) == 0 and may(runs[2], runs[0], runs[2]) == 1
    assert may(runs[7], runs[5], runs[7]) == 0  # r3 beats r1 until r2 (as accurate, more faithful) is in
    assert may(runs[2], *runs, standard=tmp_path / "unfinished") == 0
    # a tie in rank goes to the run first in the sweep's order (the larger ξ), as main() picks: ERASER's
    # probabilistic ξ = 1e-4 and 1e-5 both predict one class (50%, 100% "faithful"), and 1e-5 can no
    # longer be picked once 1e-4 is finished, whichever finished first
    t1 = write_sst_run(tmp_path / "t1", "probabilistic", 1e-4, 0.50, 1.0, 0.15)
    t2 = write_sst_run(tmp_path / "t2", "probabilistic", 1e-5, 0.50, 1.0, 0.16)
    assert may(t2, t2, t1) == 1 and may(t1, t2, t1) == 0 and may(t2, t2) == 0
    picked = json.loads(subprocess.run([sys.executable, str(SST_SELECT), str(std), str(t2), str(t1)],
                                       capture_output=True, text=True).stdout)
    assert picked["closest"] == {"probabilistic": str(t1)}


def test_sst_choose_lr_best_accuracy_then_lower_loss(tmp_path):
    """The text protocol's rate: the standard model with the best validation accuracy; a tie (ERASER's
    seed 15: all three at 50.0%) goes to the lower validation loss, a full tie to the rate first given."""
    import json

    def standard(rate, accuracy, loss, seed_dir=tmp_path / "s15"):
        d = seed_dir / f"lr{rate}" / "standard"
        d.mkdir(parents=True)
        history = [{"val_accuracy": 0.9, "val_loss": 0.1},  # epoch 1: not the kept one
                   {"val_accuracy": accuracy, "val_loss": loss}]
        (d / "sst.json").write_text(json.dumps({"best_epoch": 2, "history": history}))

    def choose(seed_dir, *rates):
        done = subprocess.run([sys.executable, str(SST_SELECT), "--choose-lr", str(seed_dir), *rates],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    for rate, loss in (("2e-5", 0.6931), ("3e-5", 0.6953), ("5e-5", 0.6913)):
        standard(rate, 0.5, loss)
    assert choose(tmp_path / "s15", "2e-5", "3e-5", "5e-5") == "5e-5"
    for rate, accuracy, loss in (("2e-5", 0.545, 0.60), ("3e-5", 0.70, 0.65), ("5e-5", 0.68, 0.55)):
        standard(rate, accuracy, loss, tmp_path / "s14")
    assert choose(tmp_path / "s14", "2e-5", "3e-5", "5e-5") == "3e-5"  # accuracy first, whatever the loss
    for rate in ("2e-5", "3e-5"):
        standard(rate, 0.5, 0.69, tmp_path / "tie")
    assert choose(tmp_path / "tie", "3e-5", "2e-5") == "3e-5"


def test_sst_select_bad_arguments_exit_2_with_one_line(tmp_path):
    """Exit 2, not 1 (--may-be-chosen's "cannot be chosen", which sst_experiments.sh acts on), with one
    line: no arguments, an unknown option, too few, and a standard model without its records."""
    for args in ([], ["--help"], ["--choose-lr", str(tmp_path)], ["--may-be-chosen", "a", "b"],
                 ["--choose-lr", str(tmp_path / "s15"), "2e-5", "3e-5"]):
        done = subprocess.run([sys.executable, str(SST_SELECT), *args], capture_output=True, text=True)
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
    assert "s15/lr3e-5/standard/sst.json" in done.stderr


SST_HISTORY = REPO / "scripts" / "sst_history.py"


def test_sst_history_every_epoch_and_the_kept_one(tmp_path):
    """One row per run and epoch, the attack's flips and λ from the objective, the kept epoch marked;
    a missing run fails naming it, before anything is printed."""
    import json
    run = tmp_path / "robust-hard-xi1e-4-flips1"
    run.mkdir()
    history = [{"epoch": 1, "val_accuracy": 0.5092, "val_faithfulness": 1.0, "val_size": 0.031, "val_loss": 1.053},
               {"epoch": 2, "val_accuracy": 0.6525, "val_faithfulness": 0.799, "val_size": 0.022, "val_loss": 1.158}]
    objective = {"masking": "robust", "xi": 1e-4, "lambda": 0.1, "straight_through": False, "fill": {"steps": 1}}
    (run / "sst.json").write_text(json.dumps({"best_epoch": 1, "history": history, "objective": objective}))
    done = subprocess.run([sys.executable, str(SST_HISTORY), str(run)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in done.stdout.splitlines()[2:]]
    assert rows == [["robust-hard-xi1e-4-flips1", "robust", "0.0001", "0.1", "1", "1", "50.92", "100.0", "3.10",
                     "1.053", "yes"],
                    ["robust-hard-xi1e-4-flips1", "robust", "0.0001", "0.1", "1", "2", "65.25", "79.9", "2.20",
                     "1.158", ""]]
    missing = subprocess.run([sys.executable, str(SST_HISTORY), str(run), str(tmp_path / "nope")],
                             capture_output=True, text=True)
    assert missing.returncode != 0 and missing.stdout == ""
    assert "nope/sst.json: not found" in missing.stderr


def write_posthoc(directory, accuracy, seconds):
    """One seed's post-hoc evaluation (eval-posthoc/table.json): a sis row, every example finished."""
    directory.mkdir(parents=True, exist_ok=True)
    row = {"method": "sis", "accuracy": accuracy, "explained": 10, "timed_out": 0, "size_percent": 3.0,
           "size_percent_std": 1.0, "seconds_per_explanation": seconds, "faithful_baseline": 100.0,
           "faithful_probabilistic": 50.0, "faithful_robust": 1.0}
    run = {"fill": {"noise": "sax", "epsilon": 0.12}, "time_limit": 10.0, "standard_model": "std"}
    (directory / "table.json").write_text(json.dumps({"rows": [row], "run": run}))


def test_sst_seeds_table_mean_over_the_seeds_evaluated(tmp_path):
    # s13 and s14 evaluated; s15's trainings under way (a folder, no evaluation): not a seed of the table
    write_posthoc(tmp_path / "s13" / "paper" / "eval-posthoc", 0.80, 2.0)
    write_posthoc(tmp_path / "s14" / "paper" / "eval-posthoc", 0.90, 4.0)
    (tmp_path / "s15" / "lr2e-5" / "standard").mkdir(parents=True)
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "sst_seeds_table.py"), str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Seeds: 13, 14. "), done.stdout
    cells = row_of(done.stdout, "sis (standard model)")
    assert cells[1] == "85.00 ± 7.07" and cells[3] == "3.00 s" and cells[8] == "10/10"
