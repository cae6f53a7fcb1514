"""salient.sst and salient.smat against the CLI on the reference model: the same models, explainer
files and numbers through both; options checked by name."""
import json
import random

import numpy as np
import pytest

import salient

WORDS = ["charming", "bleak", "film", "plot", "gorgeous", "dull", "story", "actors", "funny", "slow"]


def write_pool(path, n, seed):
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"text": " ".join(rng.choice(WORDS) for _ in range(4 + i % 5))}) + "\n")
    return str(path)


SMAT = {"test_size": 12, "valid_size": 8, "optimizer": "adamw", "lr": 1e-3, "max_epochs": 2, "batch_size": 4}
SMAT_FLAGS = ["--test-size", "12", "--valid-size", "8", "--optimizer", "adamw", "--lr", "0.001", "--max-epochs", "2",
              "--batch-size", "4"]


def test_smat_train_and_evaluate_equal_the_cli(model_dir, run_cli, tmp_path):
    pool = write_pool(tmp_path / "pool.jsonl", 40, 5)
    got = salient.smat.train(model_dir, pool, tmp_path / "py", size=8, seed=3, **SMAT)
    want = json.loads(run_cli(["smat", "train", "--teacher", model_dir, "--pool", pool, "--size", "8", "--seed", "3",
                               "--out", str(tmp_path / "cli"), *SMAT_FLAGS]))
    assert got["coefficients"] == want["coefficients"]
    assert got["meta_student_simulability"] == want["meta_student_simulability"]
    assert got["explainer"] == str(tmp_path / "py" / "smat_explainer.json")

    ev = salient.smat.evaluate(model_dir, pool, explainer="smat", smat=got["explainer"], size=8, seed=1, **SMAT)
    cli = json.loads(run_cli(["smat", "evaluate", "--teacher", model_dir, "--pool", pool, "--explainer", "smat", "--smat",
                              want["explainer"], "--size", "8", "--seed", "1", *SMAT_FLAGS]))
    assert ev["run"]["simulability"] == cli["run"]["simulability"]
    assert ev["run"]["history"] == cli["run"]["history"]
    assert ev["beta"] == 5.0 and ev["explainer"] == "smat"
    assert 0.0 <= ev["run"]["simulability"] <= 1.0
    # student_dropout reaches the students: without dropout (the fixture has 0.1) they train otherwise.
    ev0 = salient.smat.evaluate(model_dir, pool, explainer="none", size=8, seed=1, student_dropout=0.0, **SMAT)
    cli0 = json.loads(run_cli(["smat", "evaluate", "--teacher", model_dir, "--pool", pool, "--explainer", "none",
                               "--size", "8", "--seed", "1", "--student-dropout", "0", *SMAT_FLAGS]))
    plain = salient.smat.evaluate(model_dir, pool, explainer="none", size=8, seed=1, **SMAT)
    assert ev0["run"]["history"] == cli0["run"]["history"]
    assert ev0["run"]["history"] != plain["run"]["history"]

    ex = salient.smat.explain(model_dir, ["a charming film"], got["explainer"])[0]
    assert ex.method == "smat" and ex.scores.sum() == pytest.approx(1.0, abs=1e-6)

    with pytest.raises(TypeError, match="unknown option 'learning_rate'"):
        salient.smat.evaluate(model_dir, pool, learning_rate=1.0)
    with pytest.raises(TypeError, match="'lr' has the wrong type"):
        salient.smat.evaluate(model_dir, pool, lr="fast")
    with pytest.raises(ValueError, match="normalizer"):
        salient.smat.evaluate(model_dir, pool, normalizer="relu")
    with pytest.raises(ValueError, match="smat"):
        salient.smat.evaluate(model_dir, pool, explainer="smat", size=8, **SMAT)
    with pytest.raises(ValueError, match="student-dropout"):
        salient.smat.evaluate(model_dir, pool, student_dropout=1.5)
    assert "meta_lr" in salient.smat.options() and "student_dropout" in salient.smat.options()


def test_sst_train_and_evaluate_equal_the_cli(model_dir, run_cli, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": "a great and charming film" if i % 2 else "a dull and awful film",
                                        "label": i % 2}) + "\n" for i in range(40)))
    common = dict(arch="transformer", init=model_dir, epochs=1, batch_size=8, straight_through=True, xi=0.5)
    got = salient.sst.train(str(data), str(data), tmp_path / "py", **common)
    run_cli(["sst", "train", "--train", str(data), "--dev", str(data), "--arch", "transformer", "--init", model_dir,
             "--epochs", "1", "--batch-size", "8", "--straight-through", "--xi", "0.5", "-o", str(tmp_path / "cli")])
    assert got["best_epoch"] == 1 and len(got["history"]) == 1
    assert (tmp_path / "py" / "model.safetensors").read_bytes() == (tmp_path / "cli" / "model.safetensors").read_bytes()

    ex = salient.sst.explain(tmp_path / "py", "a great film")[0]
    assert ex.method == "sst" and set(np.unique(ex.scores)) <= {0.0, 1.0}
    assert ex.scores[0] == 0.0 and ex.scores[-1] == 0.0

    rows = salient.sst.evaluate(str(data), tmp_path / "eval", model=tmp_path / "py", methods="sst", limit=3,
                                accuracy_limit=10, samples=3, views=1)
    table = json.loads((tmp_path / "eval" / "table.json").read_text())
    assert len(rows) == 1 and table["rows"][0]["explained"] == 3
    row = rows.iloc[0] if hasattr(rows, "iloc") else rows[0]
    assert row["explained"] == 3

    with pytest.raises(ValueError, match="tau"):
        salient.sst.train(str(data), str(data), tmp_path / "bad", tau=1.5, **common)
    with pytest.raises(ValueError, match="masking"):
        salient.sst.train(str(data), str(data), tmp_path / "bad", masking="noisy")
    with pytest.raises(TypeError, match="unknown option 'lambda'"):
        salient.sst.train(str(data), str(data), tmp_path / "bad", **{"lambda": 1.0})
    assert "lambda_" in salient.sst.options() and "time_limit" in salient.sst.options("evaluate")


def test_smat_split_study_and_report_equal_the_cli(model_dir, run_cli, tmp_path):
    rng = random.Random(7)
    data = str(tmp_path / "data.jsonl")
    with open(data, "w", encoding="utf-8") as f:  # labelled, as a task's data (the teacher relabels the pool)
        for i in range(60):
            f.write(json.dumps({"text": " ".join(rng.choice(WORDS) for _ in range(4 + i % 5)), "label": i % 2}) + "\n")
    got = salient.smat.split(tmp_path / "py-split", data=data, pool_size=30, min_words=4, seed=3)
    want = json.loads(run_cli(["smat", "split", "--data", data, "--pool-size", "30", "--min-words", "4", "--seed", "3",
                               "--out", str(tmp_path / "cli-split")]))
    assert got == want and got["pool"] == 30
    for name in ("teacher.jsonl", "pool.jsonl", "split.json"):
        assert (tmp_path / "py-split" / name).read_bytes() == (tmp_path / "cli-split" / name).read_bytes(), name

    pool = str(tmp_path / "py-split" / "pool.jsonl")
    summary = salient.smat.study(model_dir, pool, tmp_path / "py-study", sizes=[8], seeds=[0, 1],
                                 explainers=["none", "saliency"], **SMAT)
    run_cli(["smat", "study", "--teacher", model_dir, "--pool", pool, "--sizes", "8", "--seeds", "0,1",
             "--explainers", "none,saliency", *SMAT_FLAGS, "--out", str(tmp_path / "cli-study")])
    want = json.loads((tmp_path / "cli-study" / "summary.json").read_text())
    assert summary.keys() == want.keys()
    for key in summary.keys() - {"cost"}:  # the cost is measured
        assert summary[key] == want[key], key
    assert salient.smat.report(tmp_path / "py-study") == summary
    with pytest.raises(ValueError, match="--sizes"):
        salient.smat.study(model_dir, pool, tmp_path / "bad", sizes=[0], **SMAT)
