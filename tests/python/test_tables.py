"""The table scripts that turn runs into the docs' opening tables (scripts/*_table.py), on small
hand-made inputs whose answers are worked out here."""
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
