"""salient.vit against the CLI: a tiny ViT trained on MNIST through both gives the same model,
the same accuracy and the same patch scores; bad arguments are one-line errors."""
import json

import pytest

import salient

TINY = {"hidden": 16, "layers": 1, "heads": 2, "intermediate": 16, "epochs": 1, "max_train_examples": 256}
TINY_FLAGS = ["--hidden", "16", "--layers", "1", "--heads", "2", "--intermediate", "16", "--epochs", "1",
              "--max-train-examples", "256"]


@pytest.fixture(scope="module")
def mnist_dir(shared):
    path = shared / "data"
    if not (path / "mnist").is_dir():
        pytest.skip(f"{path / 'mnist'}: the MNIST images are missing")
    return str(path)


def test_vit_train_evaluate_explain_equal_the_cli(mnist_dir, run_cli, tmp_path):
    got = salient.vit.train("mnist:train", "mnist:val", tmp_path / "py", data_dir=mnist_dir, **TINY)
    want = json.loads(run_cli(["vit", "train", "--data", "mnist:train", "--dev", "mnist:val", "-o", str(tmp_path / "cli"),
                               "--data-dir", mnist_dir, *TINY_FLAGS]))
    assert got["best_epoch"] == want["best_epoch"] == 1
    assert got["best_dev_accuracy"] == want["best_dev_accuracy"]
    assert (tmp_path / "py" / "model.safetensors").read_bytes() == (tmp_path / "cli" / "model.safetensors").read_bytes()

    model = str(tmp_path / "cli")
    acc = salient.vit.evaluate(model, "mnist:test", limit=50, data_dir=mnist_dir)
    assert acc == json.loads(run_cli(["vit", "evaluate", "--model", model, "--data", "mnist:test", "--limit", "50",
                                      "--data-dir", mnist_dir]))
    assert acc["examples"] == 50

    images = salient.vit.explain(model, "mnist:test", method="ig", limit=2, steps=8, png_dir=tmp_path / "views",
                                 data_dir=mnist_dir)
    cli = run_cli(["vit", "explain", "--model", model, "--data", "mnist:test", "--method", "ig", "--limit", "2",
                   "--steps", "8", "-o", str(tmp_path / "cli-views"), "--data-dir", mnist_dir])
    assert cli == ""  # with -o the lines go to explanations.jsonl
    lines = [json.loads(x) for x in (tmp_path / "cli-views" / "explanations.jsonl").read_text().splitlines()]
    assert images == lines
    assert len(images) == 2 and images[0]["steps"] == 8 and len(images[0]["patch_scores"]) == 4
    assert (tmp_path / "views" / images[0]["png"]).read_bytes() == (tmp_path / "cli-views" / images[0]["png"]).read_bytes()

    with pytest.raises(ValueError, match="--limit"):
        salient.vit.explain(model, "mnist:test", limit=0, data_dir=mnist_dir)
    with pytest.raises(ValueError, match="--smat"):
        salient.vit.explain(model, "mnist:test", method="smat", data_dir=mnist_dir)
    with pytest.raises(TypeError):
        salient.vit.train("mnist:train", "mnist:val", tmp_path / "x", learning_rate=0.1)
