"""Self-Attention Attribution (Hao et al., AAAI 2021) from Python: the numbers of
``salient attattr attribute | tree | heads`` (docs/attattr.md), with matrices as NumPy arrays.

    import salient
    m = salient.load("models/sst2")
    a = salient.attattr.attribute(m, "a charming and moving journey", m=20)
    a["layers"].shape                  # (layers, heads, L, L): attribution of every attention edge
    salient.attattr.tree(m, "a charming and moving journey")["edges"]
    salient.attattr.heads(m, "sst2:dev", limit=100)["attattr"]   # (layers, heads) importance
    salient.attattr.prune(m, "sst2:dev")["curves"]             # accuracy as heads are removed
"""
import json as _json
import os as _os

from . import _core_of, _check_return_tensors, _array, _target_arg, _numbers

__all__ = ["attribute", "tree", "heads", "prune"]

_MATRICES = ("layers", "head_importance", "token_out", "token_in", "word_out", "word_in", "probs")


def attribute(model, text, target="pred", layers=None, m=20, rule="left", max_batch_mb=2048, return_tensors="np"):
    """Attribution of every attention edge of every head, for one text (or (text, pair)).

    target: "pred", a class index or a label name. layers: the layers to attribute (default all).
    m and rule: the Riemann rule of the authors (left, m = 20) or another (right, midpoint,
    trapezoid, gauss). Returns the JSON of ``salient attattr attribute`` as a dict whose matrices
    (layers [L_layers, heads, L, L], head_importance, token/word flows, probs) are arrays;
    ``completeness`` gives per layer the sum, F(full) − F(zero) and their gap.
    """
    as_tensor = _check_return_tensors(return_tensors)
    d = _core_of(model).attattr(text, _target_arg(target), list(layers or []), m, rule, float(max_batch_mb))
    for key in _MATRICES:
        if key in d:
            d[key] = _array(d[key], as_tensor)
    return d


def tree(model, text, target="pred", tau=0.4, m=20, rule="left"):
    """The attribution tree of one text (``salient attattr tree``): nodes, edges with their layer and
    weight, the top layer."""
    return _core_of(model).attattr_tree(text, _target_arg(target), float(tau), m, rule)


def heads(model, data, limit=200, target="gold", m=20, rule="left", data_dir="", seed=0, return_tensors="np"):
    """Head importance over the first ``limit`` records of a labelled dataset (``salient attattr
    heads``): a dict from ordering (attattr, attention, taylor, taylor_michel, random) to a
    (layers, heads) array."""
    as_tensor = _check_return_tensors(return_tensors)
    d = _core_of(model).attattr_heads(data, limit, target, m, rule, str(data_dir), seed)
    return {name: _array(v, as_tensor) for name, v in d["scores"].items()}


def prune(model, eval_data="sst2:dev", heads=None, steps=10, layer=-1, data="sst2:dev", limit=200, target="gold", m=20,
          rule="left", data_dir="", seed=0, return_tensors="np"):
    """Pruning curves (Hao et al. §4.1, ``salient attattr prune``): heads removed lowest score first,
    at ``steps`` + 1 fractions of all heads, accuracy on the whole ``eval_data``.

    heads: the orderings to prune by: a dict from name to a (layers, heads) array (what
      :func:`heads` returns; NumPy arrays or torch.Tensors, your own orderings too), the JSON file
      ``salient attattr heads`` writes, or None to compute them here from ``data``, ``limit``,
      ``target``, ``m``, ``rule`` and ``seed``.
    layer >= 0: also the accuracy with the top-k heads of that layer removed, k = 0..heads.
    Returns a dict: ``curves`` (a pandas DataFrame with ordering, fraction, removed, accuracy, or a
    list of such dicts without pandas), ``layer_top_k`` ({ordering: array}, when layer >= 0),
    ``heads`` ({ordering: (layers, heads) array}), ``markdown`` (the CLI's table), ``eval_examples``.
    """
    as_tensor = _check_return_tensors(return_tensors)
    if heads is None:
        scores = None
    elif isinstance(heads, (str, _os.PathLike)):
        with open(heads, encoding="utf-8") as f:
            scores = _json.load(f)
    elif isinstance(heads, dict):
        named = heads.get("scores", heads)
        if not isinstance(named, dict):
            raise ValueError("heads: expected {ordering: (layers, heads) array}")
        scores = {"scores": {str(k): _numbers(v, f"heads[{k!r}]", ndim=2) for k, v in named.items()}}
    else:
        raise TypeError(f"heads: expected None, a dict of arrays or a JSON file, got {type(heads).__name__}")
    d = _core_of(model).attattr_prune(eval_data, scores, int(steps), int(layer), data, int(limit), target, int(m), rule,
                                      _os.fspath(data_dir), int(seed))
    rows = [{"ordering": name, **point} for name, points in d["curves"].items() for point in points]
    try:
        import pandas
        curves = pandas.DataFrame(rows)
    except ImportError:
        curves = rows
    out = {"curves": curves, "markdown": d["markdown"], "eval_data": d["eval_data"], "eval_examples": d["eval_examples"],
           "heads": {name: _array(v, as_tensor) for name, v in d["heads"]["scores"].items()}}
    if "layer_top_k" in d:
        out["layer"] = d["layer"]
        out["layer_top_k"] = {name: _array(v, as_tensor) for name, v in d["layer_top_k"].items()}
    return out
