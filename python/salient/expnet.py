"""ExpNet (docs/expnet.md) from Python: train the MLP from attention features to token importance
on human rationales, measure its plausibility on a dataset, and explain with it.

    import salient
    r = salient.expnet.train({"sst2": "models/sst2", "hatexplain": "models/hatexplain"}, out="runs/expnet")
    salient.expnet.evaluate("runs/expnet", "models/eraser", "eraser:test")     # AUROC, AUPRC, F1, ...
    salient.expnet.explain("models/sst2", ["a gripping film"], "runs/expnet")  # = salient.explain(..., method="expnet")

    salient.expnet.leave_one_task_out({"sst2": ..., "hatexplain": ..., "eraser": ...}, out="runs/loto")

``leave_one_task_out`` is ``salient expnet evaluate --task ...``: ExpNet trained on all tasks but
one and tested on that one, against the post-hoc baselines.
"""
import os as _os

from . import _salient, explain as _explain

__all__ = ["train", "evaluate", "explain", "leave_one_task_out"]


def _task_specs(tasks):
    """{"sst2": "models/sst2"} or ["sst2=models/sst2,train=...", ...] → the CLI's NAME=DIR specs."""
    if isinstance(tasks, dict):
        return [f"{name}={_os.fspath(d)}" for name, d in tasks.items()]
    if isinstance(tasks, str):
        return [tasks]
    return [str(t) for t in tasks]


def _list_arg(value, name):
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    raise TypeError(f"{name}: expected a str or a list, got {type(value).__name__}")


def train(tasks, out, features=("cls_to_token", "token_to_cls"), layers="last", scale="length", head_pool="sorted",
          hidden=(64, 32), activation="relu", dropout=0.1, loss="focal", alpha=0.75, gamma=2.0, filter_correct=True,
          lr=1e-3, batch_size=512, epochs=40, patience=4, max_train=0, seed=0, data_dir=""):
    """Trains one ExpNet on rationale tasks and writes it to ``out`` (expnet.safetensors + expnet.json),
    as ``salient expnet train``.

    tasks: {name: classifier_dir} for the built-in tasks (sst2, hatexplain, eraser), or specs
      "NAME=DIR,train=SPEC[,val=SPEC]"; every classifier must have the same layers × heads.
    features: any of cls_to_token, token_to_cls, stats. layers: "last", "all" or indices
      ("0,-1" or a list). scale: "length" or "raw". head_pool: "sorted", "mean_max" or "none"
      (one feature per head, the paper). hidden: MLP sizes (() = logistic regression).
    loss "focal" (alpha, gamma) or "bce"; filter_correct: train only on correctly predicted inputs.
    Adam (lr), batch_size tokens per step, early stopping on the validation loss (patience).
    Returns the summary dict (best_epoch, best_val_loss, train_tokens, seconds, ...).
    """
    layers = _list_arg(layers, "layers") if not isinstance(layers, int) else str(layers)
    return _salient.expnet_train(_task_specs(tasks), _os.fspath(out), _os.fspath(data_dir), int(max_train), int(seed),
                                 _list_arg(features, "features"), layers, scale, head_pool, [int(h) for h in hidden],
                                 activation, float(dropout), loss, float(alpha), float(gamma), bool(filter_correct),
                                 float(lr), int(batch_size), int(epochs), int(patience))


def evaluate(expnet, model, data, threshold=0.5, max_test=0, data_dir=""):
    """Plausibility of a trained ExpNet on a dataset with rationales (``salient expnet evaluate
    --expnet``): token F1/precision/recall at ``threshold`` and of the top-|rationale| tokens, AUROC
    and AUPRC, averaged over the first ``max_test`` examples (0: all)."""
    model_dir = model.path if hasattr(model, "path") else _os.fspath(model)
    return _salient.expnet_evaluate(_os.fspath(expnet), model_dir, data, _os.fspath(data_dir), int(max_test),
                                    float(threshold))


def explain(model, texts, expnet, **kwargs):
    """ExpNet's token importance for texts: ``salient.explain(model, texts, method="expnet",
    expnet=DIR, ...)``."""
    return _explain(model, texts, method="expnet", expnet=_os.fspath(expnet), **kwargs)


def leave_one_task_out(tasks, out, seeds=(0, 1, 2), baselines="all", **options):
    """Leave-one-task-out over ``tasks`` (at least two, as for train) against the registered
    baselines ("all", "none" or a list of names), reports in ``out`` (report.md, report.csv,
    report.json), resumable (``salient expnet evaluate --task ...``). ``options``: those of train
    but seed, and max_test, tune_examples, baseline_budget (seconds), ablation. Returns the report."""
    if "features" in options:
        options["features"] = _list_arg(options["features"], "features")
    if "layers" in options and not isinstance(options["layers"], str):
        options["layers"] = _list_arg(options["layers"], "layers")
    if "hidden" in options:
        options["hidden"] = [int(h) for h in options["hidden"]]
    options.update(seeds=[int(s) for s in seeds], baselines=baselines if isinstance(baselines, str) else list(baselines))
    return _salient.expnet_cross_task(_task_specs(tasks), _os.fspath(out), options)
