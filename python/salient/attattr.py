"""Self-Attention Attribution (Hao et al., AAAI 2021) from Python: the numbers of
``salient attattr attribute | tree | heads`` (docs/attattr.md), with matrices as NumPy arrays.

    import salient
    m = salient.load("models/sst2")
    a = salient.attattr.attribute(m, "a charming and moving journey", m=20)
    a["layers"].shape                  # (layers, heads, L, L): attribution of every attention edge
    salient.attattr.tree(m, "a charming and moving journey")["edges"]
    salient.attattr.heads(m, "sst2:dev", limit=100)["attattr"]   # (layers, heads) importance
"""
from . import _core_of, _check_return_tensors, _array, _target_arg

__all__ = ["attribute", "tree", "heads"]

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
