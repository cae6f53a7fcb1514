"""salient.expnet and salient.attattr.prune against the CLI on the reference model: the same files
and numbers through both; head orderings and scores accepted as NumPy arrays and torch.Tensors."""
import json
import random

import numpy as np
import pytest

import salient

PLANTED = ["excellent", "terrible"]
FILLER = ["the", "movie", "was", "a", "story", "about", "people", "who", "live", "in", "city", "and", "night"]


def write_planted(path, n, seed):
    """Rationale data whose rationale is the planted words (as tests/test_expnet.cpp)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            words = [rng.choice(FILLER) for _ in range(rng.randint(4, 9))]
            rationale = [0] * len(words)
            pos = rng.randint(0, len(words))
            words.insert(pos, rng.choice(PLANTED))
            rationale.insert(pos, 1)
            f.write(json.dumps({"id": i, "text": " ".join(words), "label": rng.randint(0, 1), "rationale": rationale}) + "\n")
    return str(path)


def test_expnet_train_evaluate_explain_equal_the_cli(model_dir, run_cli, tmp_path):
    train = write_planted(tmp_path / "train.jsonl", 80, 1)
    val = write_planted(tmp_path / "val.jsonl", 20, 2)
    test = write_planted(tmp_path / "test.jsonl", 30, 3)
    task = f"planted={model_dir},train={train},val={val}"
    got = salient.expnet.train([task], tmp_path / "py", hidden=[8], epochs=3, filter_correct=False, seed=5)
    run_cli(["expnet", "train", "--task", task, "--out", str(tmp_path / "cli"), "--hidden", "8", "--epochs", "3",
             "--filter", "off", "--seed", "5"])
    assert got["epochs_run"] == 3 and got["train_examples"] == 80
    # Same training, same bytes.
    for name in ("expnet.safetensors", "expnet.json"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name

    ev = salient.expnet.evaluate(tmp_path / "py", model_dir, test)
    want = json.loads(run_cli(["expnet", "evaluate", "--expnet", str(tmp_path / "py"), "--model", model_dir,
                               "--data", test]))
    assert ev == want and ev["examples"] == 30

    texts = ["the movie was excellent", "a terrible story"]
    ex = salient.expnet.explain(model_dir, texts, tmp_path / "py")
    cli = [json.loads(line) for line in run_cli(["explain", "--model", model_dir, "--method", "expnet", "--expnet",
                                                 str(tmp_path / "py")], "\n".join(texts) + "\n").splitlines()]
    for e, c in zip(ex, cli):
        np.testing.assert_allclose(e.scores, c["token_scores"], rtol=0, atol=1e-12)

    with pytest.raises(ValueError, match="features.*unknown feature 'nope'"):
        salient.expnet.train([task], tmp_path / "bad", features="nope")
    with pytest.raises(ValueError, match="--lr"):
        salient.expnet.train([task], tmp_path / "bad", lr=0)
    with pytest.raises(FileNotFoundError):
        salient.expnet.evaluate(tmp_path / "missing", model_dir, test)
    assert not (tmp_path / "bad").exists()


def test_prune_equals_the_cli_and_takes_arrays_and_tensors(model_dir, run_cli, tmp_path):
    pytest.importorskip("pandas")  # the curves as a DataFrame (a virtual environment may lack pandas)
    data = tmp_path / "data.jsonl"
    data.write_text('{"text": "a charming journey", "label": 1}\n{"text": "dull and bad", "label": 0}\n'
                    '{"text": "not good at all", "label": 0}\n{"text": "a fine film", "label": 1}\n')
    m = salient.load(model_dir)
    got = salient.attattr.prune(m, str(data), data=str(data), m=4, steps=4, layer=1)
    want = json.loads(run_cli(["attattr", "prune", "--model", model_dir, "--data", str(data), "--eval-data", str(data),
                               "--m", "4", "--prune-steps", "4", "--layer", "1"]))
    assert got["markdown"] == want["markdown"]
    for name, points in want["curves"].items():
        rows = got["curves"][got["curves"]["ordering"] == name]
        assert rows["accuracy"].tolist() == [p["accuracy"] for p in points]
        assert rows["removed"].tolist() == [p["removed"] for p in points]
        np.testing.assert_array_equal(got["layer_top_k"][name], want["layer_top_k"][name])
    # No head removed: the model's accuracy; all removed: every curve ends at the same point.
    acc = salient.evaluate(m, str(data))["accuracy"]
    first = got["curves"][got["curves"]["fraction"] == 0.0]["accuracy"].tolist()
    assert first == [pytest.approx(acc)] * len(want["curves"])

    # Your own ordering, as NumPy or torch, equals the CLI given the same scores in a file.
    mine = np.arange(8, dtype=float).reshape(2, 4)[::-1].copy()
    heads_file = tmp_path / "heads.json"
    heads_file.write_text(json.dumps({"scores": {"mine": mine.tolist()}}))
    want_mine = json.loads(run_cli(["attattr", "prune", "--model", model_dir, "--heads", str(heads_file),
                                    "--eval-data", str(data), "--prune-steps", "4"]))
    from_np = salient.attattr.prune(m, str(data), heads={"mine": mine}, steps=4)
    assert from_np["curves"]["accuracy"].tolist() == [p["accuracy"] for p in want_mine["curves"]["mine"]]
    assert salient.attattr.prune(m, str(data), heads=heads_file, steps=4)["markdown"] == want_mine["markdown"]
    torch = pytest.importorskip("torch")
    from_pt = salient.attattr.prune(m, str(data), heads={"mine": torch.tensor(mine)}, steps=4, return_tensors="pt")
    assert from_pt["markdown"] == from_np["markdown"] and isinstance(from_pt["heads"]["mine"], torch.Tensor)

    with pytest.raises(ValueError, match="expected 4 numbers per row"):
        salient.attattr.prune(m, str(data), heads={"mine": np.zeros((2, 3))})
    with pytest.raises(ValueError, match="2 dimension"):
        salient.attattr.prune(m, str(data), heads={"mine": np.zeros(8)})
    with pytest.raises(ValueError, match="layer"):
        salient.attattr.prune(m, str(data), heads={"mine": mine}, layer=2)


def test_faithfulness_and_plausibility_take_tensors_from_other_libraries(model_dir, run_cli, tmp_path):
    torch = pytest.importorskip("torch")
    m = salient.load(model_dir)
    text = "a charming and moving journey"
    ex = salient.explain(m, text, method="saliency")[0]
    want = salient.evaluate(m, [ex])[0]
    # Scores computed elsewhere (here: the same saliency) as a float32 tensor with grad, a NumPy array, a list.
    t = torch.tensor(ex.scores.tolist(), dtype=torch.float32, requires_grad=True)
    for scores in (t, ex.scores, ex.scores.tolist()):
        got = salient.faithfulness(m, text, scores, target=ex.target)
        tol = 1e-6 if scores is t else 0
        for key in ("comprehensiveness", "sufficiency"):
            assert got[key] == pytest.approx(want[key], abs=tol)
    assert salient.faithfulness(m, text, ex.scores) == salient.faithfulness(m, text, ex.scores, target=ex.target_label)
    with pytest.raises(ValueError, match="scores"):
        salient.faithfulness(m, text, [0.1, 0.2])
    with pytest.raises(ValueError, match="NaN"):
        salient.faithfulness(m, text, [float("nan")] * len(ex.tokens))
    p = salient.plausibility(torch.tensor([0.9, 0.1, 0.5]), torch.tensor([1, 0, 1]))
    assert p["auroc"] == 1.0 and p["f1"] == 1.0


def test_leave_one_task_out_equals_the_cli(model_dir, run_cli, tmp_path):
    tasks = []
    for t, name in enumerate(("alpha", "beta")):
        files = [write_planted(tmp_path / f"{name}_{split}.jsonl", n, 10 * k + t)
                 for k, (split, n) in enumerate((("train", 40), ("val", 12), ("test", 12)))]
        tasks.append(f"{name}={model_dir},train={files[0]},val={files[1]},test={files[2]}")
    got = salient.expnet.leave_one_task_out(tasks, tmp_path / "py", seeds=[0, 1], baselines=["random", "occlusion"],
                                            hidden=[8], epochs=3, filter_correct=False, tune_examples=4)
    run_cli(["expnet", "evaluate", *[a for t in tasks for a in ("--task", t)], "--seeds", "0,1", "--baselines",
             "random,occlusion", "--hidden", "8", "--epochs", "3", "--filter", "off", "--tune-examples", "4",
             "--out", str(tmp_path / "cli")])
    want = json.loads((tmp_path / "cli" / "report.json").read_text())

    def untimed(v):  # the report without its measured times
        if isinstance(v, dict):
            return {k: untimed(x) for k, x in v.items() if k != "seconds"}
        return [untimed(x) for x in v] if isinstance(v, list) else v
    assert got.keys() == want.keys()
    for key in ("tasks", "protocol", "results", "ablation"):
        assert untimed(got[key]) == untimed(want[key]), key
    with pytest.raises(TypeError, match="unknown option 'seed'"):
        salient.expnet.leave_one_task_out(tasks, tmp_path / "bad", seed=3)
