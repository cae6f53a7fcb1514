"""Learning to Scaffold (Fernandes et al., NeurIPS 2022; docs/smat.md) from Python: meta-train
SMaT's per-head coefficients for a teacher, and measure how well a student simulates the teacher
with a given teacher explainer.

    import salient
    r = salient.smat.train("models/sst2", pool="runs/split/pool.jsonl", out="runs/smat", size=500)
    salient.smat.evaluate("models/sst2", pool="runs/split/pool.jsonl", explainer="smat", smat=r["explainer"])
    salient.smat.explain("models/sst2", ["a gripping film"], r["explainer"])   # the learned explainer

Options (keyword arguments, the CLI's flags with underscores; ``salient smat evaluate --help``):
student_init, student_dropout, test_pool, valid_pool, data_dir, test_size, valid_size, max_length,
split_seed (the setup); normalizer, optimizer, early_stopping, beta, lr, clip, weight_decay,
batch_size, patience, max_epochs, meta_lr (the student); ig_steps and the *_temperature options
(static explainers).
The study over explainers × sizes × seeds is ``salient smat study``.
"""
import os as _os

from . import _salient, explain as _explain

__all__ = ["train", "evaluate", "explain", "options"]


def _path(p):
    return p.path if hasattr(p, "path") else _os.fspath(p)


def train(teacher, pool, out, size=500, seed=0, **options):
    """Meta-trains SMaT's head coefficients for ``teacher`` with a student of ``size`` pool
    examples in the loop (``salient smat train``) and writes the learned explainer to ``out`` (a
    .json file, or a directory for smat_explainer.json). Returns the file, the coefficients, the
    meta-student's simulability and the cost of a meta step against a student step."""
    options.update(teacher=_path(teacher), pool=_os.fspath(pool))
    return _salient.smat_train(options, int(size), int(seed), _os.fspath(out))


def evaluate(teacher, pool, explainer="none", size=500, seed=0, smat=None, **options):
    """Trains one student of ``size`` examples with the teacher explainer ``explainer`` (none,
    saliency, grad_x_input, ig, attention_all, attention_last, smat with the file ``smat``, or any
    registered method) and returns its simulability on the held-out test split with its run
    (``salient smat evaluate``)."""
    options.update(teacher=_path(teacher), pool=_os.fspath(pool))
    return _salient.smat_evaluate(options, explainer, _os.fspath(smat) if smat is not None else "", int(size), int(seed))


def explain(model, texts, smat, **kwargs):
    """Token importance from a learned SMaT explainer: ``salient.explain(model, texts,
    method="smat", smat=FILE, ...)``."""
    return _explain(model, texts, method="smat", smat=_os.fspath(smat), **kwargs)


def options():
    """The keyword options train and evaluate take."""
    return _salient.option_names("smat")
