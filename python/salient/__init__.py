"""salient: explain transformer predictions, from Python.

A thin layer over salient's C++ library (the same code the ``salient`` command runs)::

    import salient
    m = salient.load("models/sst2")
    m.predict(["a gripping, funny film"])              # -> [Prediction(label='positive', ...)]
    ex = salient.explain(m, ["a gripping, funny film"], method="ig", steps=50)
    ex[0].tokens, ex[0].scores                         # list of str, numpy array
    salient.methods()                                  # every explainer and its parameters

Errors are salient's one-line messages: ``ValueError`` for a bad argument or file content,
``FileNotFoundError`` for a missing file or directory. The C++ work runs without the GIL.
See docs/python.md.
"""

import json as _json
import os as _os
import sys as _sys
import tempfile as _tempfile
import warnings as _warnings


def _cpu_openblas_core():
    """The OpenBLAS kernels this CPU can run by its flags: the salient binary's rule
    (util/runtime.h, openblas_core_for_cpu)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())
    except OSError:
        return ""
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return ""


# OpenBLAS picks its kernels once, when numpy, torch or salient first loads it; 0.3.21 (Debian 12)
# gives a CPU newer than its tables its generic ones, 3-4x slower. Asked before anything loads it,
# it runs the CPU's, as the salient binary does (util/runtime.h).
# A choice made before salient was imported ($OPENBLAS_CORETYPE) stays.
_openblas_user_choice = _os.environ.get("OPENBLAS_CORETYPE")
if "OPENBLAS_CORETYPE" not in _os.environ and not {"numpy", "torch", "scipy"} & set(_sys.modules):
    _core = _cpu_openblas_core()
    if _core:
        _os.environ["OPENBLAS_CORETYPE"] = _core

import numpy as _np  # noqa: E402

from . import _salient  # noqa: E402

__version__ = _salient.__version__  # the C++ library's (include/salient/version.h)

_better, _loaded = _salient.better_openblas_core(), _salient.openblas_core()
if _better and _loaded.lower() in {"prescott", "core2", "penryn", "nehalem", "sandybridge", "atom", "barcelona"}:
    _warnings.warn(f"OpenBLAS runs its generic {_loaded} kernels (numpy or torch loaded it before salient): import "
                   f"salient first, or set OPENBLAS_CORETYPE={_better}, for 3-4x faster matrix products",
                   RuntimeWarning, stacklevel=2)

__all__ = ["__version__", "set_threads", "threads", "retain_freed_memory", "load", "Model", "Prediction", "Explanation", "MethodInfo", "explain", "methods", "method",
           "metrics", "evaluate", "faithfulness", "plausibility", "benchmark", "attattr", "expnet", "sst", "smat", "vit"]


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _array(values, as_tensor=False):
    a = _np.asarray(values, dtype=_np.float64)
    if as_tensor:
        torch = _torch()
        if torch is None:
            raise ValueError("return_tensors='pt': PyTorch is not installed (Debian: python3-torch)")
        return torch.from_numpy(a)
    return a


def _numbers(values, where, ndim=1):
    """Numbers given as a list, a NumPy array or a torch.Tensor (any device or dtype, detached here)
    → nested lists of floats with ``ndim`` dimensions; a ValueError naming ``where`` otherwise."""
    if hasattr(values, "detach") and hasattr(values, "cpu"):  # a torch.Tensor, without importing torch
        values = values.detach().cpu().double().numpy()
    try:
        a = _np.asarray(values, dtype=_np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: expected numbers (a list, NumPy array or torch.Tensor)") from None
    if a.ndim != ndim:
        raise ValueError(f"{where}: expected {ndim} dimension(s), got shape {a.shape}")
    if not _np.all(_np.isfinite(a)):
        raise ValueError(f"{where}: contains NaN or infinity")
    return a.tolist()


def _check_return_tensors(value):
    if value not in ("np", "pt"):
        raise ValueError(f"return_tensors: must be 'np' or 'pt', got {value!r}")
    return value == "pt"


def _target_arg(target):
    """"pred", a class index or a label name, as the C++ side takes it (a string)."""
    if isinstance(target, (int, _np.integer)) and not isinstance(target, bool):
        return str(int(target))
    if not isinstance(target, str):
        raise TypeError(f"target: expected 'pred', a class index or a label name, got {target!r}")
    return target


def _texts(texts):
    """A str, a (text, pair) tuple, or a sequence of them (NumPy string arrays too)."""
    if isinstance(texts, (str, tuple)):
        return [texts]
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, (str, tuple)):
            raise TypeError(f"texts[{i}]: expected a str or a (text, text_pair) tuple, got {type(t).__name__}")
    return out


def set_threads(n=0):
    """Threads of salient's C++ work, as the CLI's --threads (0: $SALIENT_THREADS, else every core,
    the default set at import). Returns the count in use."""
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"set_threads: expected an integer >= 0, got {n!r}")
    return _salient.set_threads(n)


def threads():
    """Threads salient's C++ work uses now."""
    return _salient.threads()


def retain_freed_memory():
    """Keep memory freed by large tensors in this process for the next ones, as the CLI does
    (glibc otherwise returns it to the kernel and the next large tensor faults in fresh pages:
    up to 2.9x slower on long batched inputs, docs/PERFORMANCE.md). Process-wide, so not done at
    import; the process's resident size then stays at its peak. $SALIENT_RETAIN_MEMORY=0 turns it
    off. Returns whether it is on."""
    return _salient.retain_freed_memory()


set_threads(0)


class Prediction:
    """One prediction: ``label``, ``label_id``, ``probs`` and ``logits`` (NumPy), or ``value`` for a
    regression model; ``truncated`` when the input was cut to the model's length."""

    __slots__ = ("label", "label_id", "probs", "logits", "value", "truncated", "windows")

    def __init__(self, d, as_tensor=False):
        self.label = d.get("label")
        self.label_id = d.get("label_id")
        self.probs = _array(d["probs"], as_tensor) if "probs" in d else None
        self.logits = _array(d["logits"], as_tensor) if "logits" in d else None
        self.value = d.get("value")
        self.truncated = bool(d.get("truncated", False))
        self.windows = d.get("windows", 0)  # how many windows read the input (windows=True), else 0

    def to_dict(self):
        """The fields ``salient predict`` writes."""
        if self.value is not None:
            d = {"value": self.value}
        else:
            d = {"label": self.label, "label_id": self.label_id,
                 "logits": [float(x) for x in self.logits], "probs": [float(x) for x in self.probs]}
        if self.truncated:
            d["truncated"] = True
        if self.windows:
            d["windows"] = self.windows
        return d

    def __repr__(self):
        if self.value is not None:
            return f"Prediction(value={self.value:.4f})"
        return f"Prediction(label={self.label!r}, prob={float(self.probs[self.label_id]):.4f})"


class Explanation:
    """One explanation, in salient's explanation schema (docs/explanation.schema.json).

    Attributes: ``method``, ``params``, ``output`` ("prob" or "logit"), ``target`` and
    ``target_label``, ``tokens`` (word pieces with the special tokens), ``scores`` (one per token,
    NumPy), ``words`` and ``word_scores`` (whitespace words, NumPy), ``extras`` (e.g. IG's
    ``delta``), ``truncated``. ``to_dict()`` gives the JSON object ``salient explain`` writes.
    """

    __slots__ = ("_d", "scores", "word_scores", "input")

    def __init__(self, d, as_tensor=False, text_input=None):
        self._d = d
        self.input = text_input  # the text (or (text, pair)) explained, for salient.evaluate
        self.scores = _array(d["token_scores"], as_tensor)
        self.word_scores = _array(d["word_scores"], as_tensor) if "word_scores" in d else None

    method = property(lambda self: self._d["method"])
    params = property(lambda self: self._d["params"])
    output = property(lambda self: self._d["output"])
    target = property(lambda self: self._d["target"])
    target_label = property(lambda self: self._d["target_label"])
    tokens = property(lambda self: self._d["tokens"])
    words = property(lambda self: self._d.get("words"))
    extras = property(lambda self: self._d["extras"])
    truncated = property(lambda self: bool(self._d.get("truncated", False)))

    def to_dict(self):
        return _json.loads(_json.dumps(self._d))  # a deep copy

    def __repr__(self):
        top = sorted(zip(self.tokens, self.scores.tolist()), key=lambda p: -abs(p[1]))[:3]
        shown = ", ".join(f"{t}={s:+.3f}" for t, s in top)
        return f"Explanation({self.method}, target={self.target_label!r}, top: {shown})"


class Model:
    """A model directory (Hugging Face layout: config.json, model.safetensors, vocab.txt).

    Load with :func:`salient.load`. ``labels`` lists the class names, ``config`` the config.json
    fields.
    """

    def __init__(self, core, path):
        self._core = core
        self.path = path

    @property
    def labels(self):
        return self._core.labels

    @property
    def config(self):
        return self._core.config

    def tokenize(self, texts, max_length=0):
        """Word pieces of each text (or (text, pair)): dicts with ids, tokens, type_ids, offsets,
        word_ids and truncated. ``max_length`` 0: the model's limit."""
        return self._core.tokenize(_texts(texts), max_length)

    @property
    def has_task_head(self):
        """False for a base encoder (Hugging Face ``BertModel``, a sentence-transformers folder): it
        has hidden states and attentions (:meth:`forward`) but no predictions until fine-tuned
        (``salient train --init DIR``)."""
        return self._core.has_task_head

    def forward(self, texts, output_hidden_states=True, output_attentions=True, max_length=0, batch_size=32):
        """The encoder's outputs for a text, a (text, pair) tuple or a list of them, as Hugging
        Face's ``output_hidden_states`` / ``output_attentions`` give them: a dict of NumPy arrays
        padded to the longest input, ``input_ids``, ``token_type_ids``, ``attention_mask`` [B, L],
        ``logits`` [B, C] (None for a base encoder), ``hidden_states`` (a tuple of num_layers + 1
        arrays [B, L, hidden]: the embeddings, then each layer) and ``attentions`` (num_layers arrays
        [B, heads, L, L], rows are queries)."""
        return self._core.forward(_texts(texts), output_hidden_states, output_attentions, max_length, batch_size)

    def predict(self, texts, batch_size=32, return_tensors="np", windows=False, stride=0):
        """Predictions for a text, a (text, pair) tuple or a list of them. ``windows=True`` reads a
        text longer than the model's positions whole, as overlapping windows ``stride`` word pieces
        apart (0: half a window) whose logits are averaged; else it is cut (``truncated``)."""
        as_tensor = _check_return_tensors(return_tensors)
        return [Prediction(d, as_tensor) for d in self._core.predict(_texts(texts), batch_size, windows, stride)]

    def memory_estimate(self, tokens, method, max_batch_tokens=4096, **params):
        """Memory one ``explain`` call with ``method`` (and its parameters) needs on one input of
        ``tokens`` word pieces, known before it runs: ``{"weight_bytes", "request_bytes"}``, the
        weights (held once) and the most bytes the call's tensors hold at once (an upper bound)."""
        return self._core.memory_estimate(int(tokens), method, params, int(max_batch_tokens))

    def __repr__(self):
        c = self.config
        return (f"salient.Model({self.path!r}, {c.get('model_type')}, {c.get('num_hidden_layers')} layers × "
                f"{c.get('num_attention_heads')} heads, labels={self.labels})")


def load(path):
    """Loads a model directory. FileNotFoundError if it does not exist, ValueError if it is not a
    model salient reads."""
    return Model(_salient.Model.load(_os.fspath(path)), _os.fspath(path))


def _core_of(model):
    if isinstance(model, Model):
        return model._core
    if isinstance(model, (str, _os.PathLike)):
        return load(model)._core
    raise TypeError(f"model: expected a salient.Model or a model directory, got {type(model).__name__}")


def explain(model, texts, method="ig", target="pred", output=None, batch_size=8, seed=0, return_tensors="np",
            windows=False, stride=0, max_batch_tokens=4096, **params):
    """Explains the model's prediction (or ``target``) for each text.

    method: a registered explainer (``salient.methods()``); its parameters as keyword arguments
      (``steps=50``), checked like the CLI's flags: an unknown name or a value out of range is a
      ValueError naming it.
    target: "pred", a class index or a label name. output: "prob" or "logit" (default: the
      method's own). seed: for the sampling methods. return_tensors: "np" or "pt" (torch.Tensor).
    windows: a text longer than the model's positions is read whole, as overlapping windows
      ``stride`` word pieces apart (0: half a window), each explained for the whole text's class and
      the scores averaged where windows overlap (``extras["windows"]``); else it is cut.
    max_batch_tokens: token positions (rows × padded length) per internal forward pass (IG's
      points, the perturbations): it bounds memory; the scores do not depend on it.
    Returns a list of :class:`Explanation`.
    """
    as_tensor = _check_return_tensors(return_tensors)
    core = _core_of(model)
    inputs = _texts(texts)
    result = core.explain(inputs, method, params, _target_arg(target), output or "", batch_size, seed, windows, stride,
                          int(max_batch_tokens))
    return [Explanation(d, as_tensor, x) for d, x in zip(result, inputs)]


class MethodInfo:
    """A registered explainer: ``name``, ``family``, ``summary`` and ``params`` (dicts with name,
    type, default, min, max, choices, doc)."""

    def __init__(self, d):
        self.name, self.family, self.summary, self.params = d["name"], d["family"], d["summary"], d["params"]
        # help(salient.method("ig")) shows this: generated from the registry's declarations.
        lines = [f"{self.name} ({self.family}): {self.summary}", ""]
        if self.params:
            lines.append("Parameters (keyword arguments of salient.explain):")
            lines += [f"    {p['describe']}" for p in self.params]
        else:
            lines.append("No parameters.")
        self.__doc__ = "\n".join(lines)

    def __call__(self, model, texts, **kwargs):
        """Shorthand for salient.explain(model, texts, method=<this>, **kwargs)."""
        return explain(model, texts, method=self.name, **kwargs)

    def __repr__(self):
        return f"MethodInfo({self.name!r}, family={self.family!r}, params={[p['name'] for p in self.params]})"


def methods():
    """Every registered explainer, in the registry's order (``salient explain --list``)."""
    return [MethodInfo(d) for d in _salient.methods()]


def method(name):
    """The registered explainer ``name`` (ValueError listing the names if there is none); calling
    it explains: ``salient.method("ig")(m, texts, steps=32)``; ``help()`` shows its parameters."""
    for info in methods():
        if info.name == name:
            return info
    raise ValueError(f"method: unknown explainer '{name}' (valid: {', '.join(i.name for i in methods())})")


def metrics():
    """The benchmark's metrics: dicts with name, family, higher_is_better, summary."""
    return _salient.metrics()


def evaluate(model, data, rationales=None, data_dir="", batch_size=64, max_length=0, output="prob", removal="mask",
             k=0):
    """Metrics, of the model or of explanations.

    ``data`` a dataset spec such as "sst2:dev" or a CSV/JSONL file: the model's accuracy, macro-F1
    and MCC (Pearson and MSE for a regression model); ``data_dir`` empty: the shared data.

    ``data`` a list of :class:`Explanation` (from salient.explain): one dict per explanation with
    its faithfulness on its own input (ERASER's comprehensiveness and sufficiency of the top k
    tokens, k 0: 20% of them; their AOPCs; deletion and insertion AUCs; measured on ``output``
    "prob" or "logit", tokens removed by "mask" or "delete") and, given ``rationales`` (one list
    of 0/1 per whitespace word per explanation), the plausibility of its word scores: AUROC, AUPRC,
    and F1 and IoU of the top-|rationale| words — as ``salient benchmark`` computes them.
    """
    core = _core_of(model)
    if isinstance(data, (str, _os.PathLike)):
        return core.evaluate(_os.fspath(data), _os.fspath(data_dir), batch_size, max_length)
    explanations = list(data)
    if rationales is not None and len(rationales) != len(explanations):
        raise ValueError(f"rationales: {len(rationales)} for {len(explanations)} explanations")
    out = []
    for i, e in enumerate(explanations):
        if not isinstance(e, Explanation) or e.input is None:
            raise TypeError(f"data[{i}]: expected an Explanation from salient.explain or a dataset spec")
        row = {"method": e.method, "target": e.target}
        # An explanation of a text read whole (explain(windows=True)) is scored whole, as it was made.
        windowed = "windows" in e.extras
        row.update(core.faithfulness(e.input, _numbers(e.scores, f"data[{i}].scores"), e.target, output, k, removal,
                                     windowed, e.extras.get("stride", 0) if windowed else 0))
        if rationales is not None:
            plaus = plausibility(e.word_scores, rationales[i], where=f"rationales[{i}]")
            row.update({"word_" + name: v for name, v in plaus.items()})
        out.append(row)
    return out


def faithfulness(model, text, scores, target="pred", output="prob", removal="mask", k=0, windows=False, stride=0,
                 aopc_bins="deciles"):
    """Faithfulness of any token scores for one text (or (text, pair)), e.g. attributions from
    Captum: one score per token of ``model.tokenize(text)`` (special tokens included), as a list,
    NumPy array or torch.Tensor. ERASER's comprehensiveness and sufficiency of the top k tokens
    (k 0: 20%), their AOPCs, deletion and insertion AUCs, for ``target`` ("pred", a class index or
    a label name), measured on ``output`` "prob" or "logit", tokens removed by "mask" or "delete".
    ``windows``: the scores cover the whole text (salient.explain(..., windows=True)) and every
    perturbed text is scored whole, as its windows' mean logits ``stride`` pieces apart.
    ``aopc_bins``: "deciles" (AOPC over 10%…100% of the tokens, as the benchmark, and the curves)
    or "eraser" (ERASER's bins 1, 5, 10, 20, 50%, no curves: about a third of the passes)."""
    core = _core_of(model)
    if isinstance(target, str) and target == "pred":
        target = core.predict([text], 1, windows, stride)[0]["label_id"]
    elif isinstance(target, str):
        if target not in core.labels:
            raise ValueError(f"target: '{target}' is not one of the model's labels {core.labels}")
        target = core.labels.index(target)
    elif not isinstance(target, (int, _np.integer)) or isinstance(target, bool):
        raise TypeError(f"target: expected 'pred', a class index or a label name, got {target!r}")
    return core.faithfulness(text, _numbers(scores, "scores"), int(target), output, k, removal, windows, stride,
                             aopc_bins)


def plausibility(scores, rationale, where="rationale"):
    """Agreement of scores with a 0/1 human rationale of the same length (lists, NumPy arrays or
    torch.Tensors): AUROC, AUPRC (average precision; ``auprc_trapezoid``: the trapezoid area
    ferret reports), and F1 and IoU of the top-|rationale| items, as the benchmark computes them.
    Rationale values >= 0.5 count as 1."""
    gold = [1 if v >= 0.5 else 0 for v in _numbers(rationale, where)]
    return _salient.plausibility(_numbers(scores, "scores"), gold)


def benchmark(model, data, methods, metrics=None, out=None, limit=100, batch_size=8, bootstrap=1000, seed=0,
              data_dir="", method_params=None, windows=False, stride=0, removal="mask", max_batch_tokens=4096,
              positive_only=False, aopc_distinct=False):
    """Every method × metric over the first ``limit`` examples of ``data`` (ferret-style).

    Writes the benchmark's files to ``out`` (a temporary directory if None; a rerun with the same
    ``out`` resumes) and returns its summary table: a pandas DataFrame when pandas is installed,
    else a list of dicts. ``method_params``: {method: {param: value}}. ``windows``: read inputs
    longer than the model's positions whole, as overlapping windows ``stride`` pieces apart (0:
    half a window), as ``salient benchmark --windows``. ``removal``: how the faithfulness metrics
    remove tokens, ``"mask"`` (ERASER's) or ``"delete"`` (``--metric-removal``); a method's own
    ``removal`` parameter goes in ``method_params``. ``max_batch_tokens``: token positions per
    internal forward pass (``--max-batch-tokens``; bounds memory, not the results).
    ``positive_only`` and ``aopc_distinct``: ferret's conventions (``--positive-only``,
    ``--aopc-distinct``): every top k from positive scores only and AUPRC over max(score, 0); AOPC
    over each distinct top-k set once.
    """
    path = model.path if isinstance(model, Model) else _os.fspath(model)
    if isinstance(methods, str):
        methods = [m.strip() for m in methods.split(",") if m.strip()]
    if metrics is None:
        metrics = []  # the default: plausibility where the data has rationales, and faithfulness
    elif isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    out = _os.fspath(out) if out is not None else _tempfile.mkdtemp(prefix="salient_benchmark_")
    _salient.benchmark(path, data, list(methods), list(metrics), out, method_params or {}, _os.fspath(data_dir),
                       limit, batch_size, bootstrap, seed, bool(windows), int(stride), removal, int(max_batch_tokens),
                       bool(positive_only), bool(aopc_distinct))
    with open(_os.path.join(out, "summary.json"), encoding="utf-8") as f:
        summary = _json.load(f)
    # One row per (method, metric), as OUT/summary.csv.
    rows = []
    for method_name, by_metric in summary["methods"].items():
        for metric_name, v in by_metric.items():
            lo, hi = v["ci95"]
            rows.append({"method": method_name, "metric": metric_name, "mean": v["mean"], "std": v["std"],
                         "ci95_low": lo, "ci95_high": hi, "n": v["n"]})
    try:
        import pandas
        return pandas.DataFrame(rows)
    except ImportError:
        return rows


# salient.explain's help lists every registered method with its parameters.
explain.__doc__ += "\n    Methods (salient.method(NAME) for one):\n" + "\n".join(
    f"      {d['name']}: {d['summary']}" + "".join(f"\n          {p['describe']}" for p in d["params"])
    for d in _salient.methods())

from . import attattr  # noqa: E402  (salient.attattr.attribute | tree | heads | prune)
from . import expnet  # noqa: E402  (salient.expnet.train | evaluate | explain)
from . import smat  # noqa: E402  (salient.smat.train | evaluate | explain)
from . import sst  # noqa: E402  (salient.sst.train | evaluate | explain)
from . import vit  # noqa: E402  (salient.vit.train | evaluate | explain)
