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
The study over explainers × sizes × seeds, the plausibility table, the pool split and the report
are ``study``, ``plausibility``, ``split`` and ``report`` (``salient smat study | plausibility |
split | report``).
"""
import json as _json
import os as _os

from . import _salient, explain as _explain

__all__ = ["train", "evaluate", "explain", "study", "plausibility", "split", "report", "options"]


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


def _list(value):
    return value if isinstance(value, str) else [v if isinstance(v, str) else int(v) for v in value]


def study(teacher, pool, out, sizes=(500, 1000, 2000), seeds=(0, 9, 11, 30, 69),
          explainers=("none", "saliency", "grad_x_input", "ig", "attention_all", "attention_last", "smat"), **options):
    """Every (explainer, size, seed) student run not yet in ``out`` (resumable), then the report
    (``salient smat study``): returns the summary (OUT/summary.json: median and IQR per explainer
    and size); OUT/report.md is the table. ``options`` as for evaluate."""
    options.update(teacher=_path(teacher), pool=_os.fspath(pool), sizes=_list(sizes), seeds=_list(seeds),
                   explainers=_list(explainers))
    _salient.smat_study(_os.fspath(out), options)
    with open(_os.path.join(_os.fspath(out), "summary.json"), encoding="utf-8") as f:
        return _json.load(f)


def report(study):
    """Rewrites a study's report from its run files (``salient smat report``); returns the summary."""
    _salient.smat_report(_os.fspath(study))
    with open(_os.path.join(_os.fspath(study), "summary.json"), encoding="utf-8") as f:
        return _json.load(f)


def plausibility(teacher, data, out, smat=(), **options):
    """AUROC and AUPRC of each teacher explainer against the human rationales of ``data``, with the
    oracle rows (``salient smat plausibility``; options limit, max_length, unit ("word" or "token"),
    data_dir and the static explainers'); ``smat``: learned explainers, a row each. Returns
    OUT/plausibility.json."""
    options.update(smat=[_os.fspath(f) for f in ([smat] if isinstance(smat, (str, _os.PathLike)) else smat)])
    _salient.smat_plausibility(_path(teacher), str(data), _os.fspath(out), options)
    with open(_os.path.join(_os.fspath(out), "plausibility.json"), encoding="utf-8") as f:
        return _json.load(f)


def split(out, data="sst2:train", pool_size=6000, min_words=6, seed=2022, data_dir=""):
    """The teacher's texts and a disjoint student pool of ``pool_size`` texts of at least
    ``min_words`` words (``salient smat split``): OUT/teacher.jsonl, pool.jsonl, split.json;
    returns the split's report."""
    options = {"data": str(data), "pool_size": int(pool_size), "min_words": int(min_words), "seed": int(seed)}
    if data_dir:
        options["data_dir"] = _os.fspath(data_dir)
    return _salient.smat_split(_os.fspath(out), options)


def options(command="smat"):
    """The keyword options train and evaluate take ("smat"), or those of "smat.study",
    "smat.plausibility", "smat.split"."""
    return _salient.option_names(command)
