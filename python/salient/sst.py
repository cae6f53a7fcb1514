"""Sufficient Subset Training (Bassan et al., ICLR 2025; docs/sst.md) from Python: train a model
that outputs a prediction and a sufficient subset, and compare it with post-hoc sufficient-subset
searches. CPU only, as the CLI.

    import salient
    salient.sst.train("sst2:train", "sst2:dev", "runs/sst", init="models/sst2", masking="robust", epochs=2)
    salient.sst.evaluate("sst2:dev", "runs/sst-eval", model="runs/sst", standard="models/sst2", limit=50)
    salient.sst.explain("runs/sst", ["a gripping film"])     # the subset the model outputs

Options are the CLI's flags with underscores (``lambda_`` for --lambda); ``salient.sst.options()``
lists them.
"""
import os as _os

from . import _salient, explain as _explain

__all__ = ["train", "evaluate", "explain", "options"]


def train(train, dev, out, masking="baseline", **options):
    """Trains a dual-head model (``salient sst train``): ``masking`` none (standard training),
    baseline, probabilistic or robust; options arch, init, vocab, hidden_size, layers, heads,
    intermediate_size, max_length, windows (texts read whole, as windows), max_windows (at most N
    windows through the model at once, gradients summed over a batch's parts), dropout, hidden, lambda_, xi, tau, straight_through, epsilon,
    pgd_step, pgd_steps, noise ("sax", the authors' fill, or "domain"), epochs, patience, batch_size, lr, weight_decay, limit,
    limit_random (the limit's examples drawn at random with the seed), seed, max_minutes,
    resume, data_dir. Writes the best epoch to ``out``; returns best_epoch, train_seconds and the
    per-epoch history (validation loss, accuracy, faithfulness, subset size)."""
    options["masking"] = masking
    return _salient.sst_train(train, dev, _os.fspath(out), options)


def evaluate(data, out, **options):
    """SST against the post-hoc searches (``salient sst evaluate``): options model (the SST model),
    standard (the standard model for sis, anchors, gradient), methods (list), limit, limit_random
    (the examples explained drawn at random with the seed), accuracy_limit, time_limit, search_batch, search_tokens, samples, ranking, ig_steps, precision, beam, max_length, windows, views,
    seed, epsilon, pgd_step, pgd_steps, noise, sis_criterion, sis_threshold, data_dir. Writes table.md/csv/json and report.html to
    ``out`` (resumable); returns one row per method: accuracy, subset size, seconds, time-outs
    and the three faithfulness rates, as a pandas DataFrame when pandas is installed."""
    if "methods" in options and isinstance(options["methods"], str):
        options["methods"] = [m.strip() for m in options["methods"].split(",") if m.strip()]
    for key in ("model", "standard"):
        if key in options:
            options[key] = _os.fspath(options[key])
    rows = _salient.sst_evaluate(data, _os.fspath(out), options)
    try:
        import pandas
        return pandas.DataFrame(rows)
    except ImportError:
        return rows


def explain(model, texts, sst=None, **kwargs):
    """The subset an SST model outputs for texts, as an explanation: ``salient.explain(model,
    texts, method="sst", ...)``; ``model`` is the SST model directory, or the classifier explained
    with the SST model ``sst``."""
    if sst is not None:
        kwargs["sst"] = _os.fspath(sst)
    return _explain(model, texts, method="sst", **kwargs)


def options(command="train"):
    """The keyword options of train ("train") or evaluate ("evaluate")."""
    return _salient.option_names("sst." + command)
