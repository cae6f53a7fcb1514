#!/usr/bin/python3
"""Freeze reference values of salient's explainers, computed by the authors' own published code.

Writes a small JSON test-data file (tests/data/explainer_reference.json) with, for the 24 inputs of the
shared reference-bert fixture, the token scores of: raw_attention, rollout, attention_gradcam, gae, cam,
attcat, lrp_partial, lrp_full, transformer_attribution, mgae (+ mgae_all_heads), attention_mean and
attention_mean_last; plus Captum 0.8 LayerIntegratedGradients on inputs containing [UNK] ("unk_ig"),
LIME surrogate fits by lime's own LimeBase ("lime") and brute-force Shapley values ("shapley").
Everything definitional that was found in the reference code is written to the JSON's "notes".

None of the reference code is part of this repository. Extract each repository's snapshot somewhere
(a temp dir) and point the script at it, e.g. with bare mirrors under $MIRRORS:

  REF_ROOT=$(mktemp -d)
  for r in hila-chefer+Transformer-Explainability hila-chefer+Transformer-MM-Explainability \\
           qiangyao1988+AttCAT LinxinS97+Mask-LRP pytorch+captum marcotcr+lime; do
    g=$MIRRORS/$r/repo; mkdir -p $REF_ROOT/$r
    # (only the .py sources are needed; large notebooks / binaries may be absent from a snapshot, and
    # git archive may then print 'invalid object' errors for them: harmless)
    git --git-dir=$g ls-tree -r --name-only HEAD | grep '\\.py$' | \\
      xargs git --git-dir=$g archive HEAD | tar -x -C $REF_ROOT/$r
    git --git-dir=$g rev-parse HEAD > $REF_ROOT/$r/.commit
  done
  REF_ROOT=$REF_ROOT /usr/bin/python3 bench/reference_explainers.py --out tests/data/explainer_reference.json

REF_ROOT/<owner>+<name> is the default location of each repository; each can be overridden:
  CHEFER_DIR   hila-chefer/Transformer-Explainability   (contains BERT_explainability/)
  MM_DIR       hila-chefer/Transformer-MM-Explainability (contains VisualBERT/)
  ATTCAT_DIR   qiangyao1988/AttCAT                       (contains BERT_explainability/)
  MASKLRP_DIR  LinxinS97/Mask-LRP                        (contains Transformer_Explanation/)
  CAPTUM_DIR   pytorch/captum (0.8.x)                    (contains captum/)
  LIME_DIR     marcotcr/lime                             (contains lime/)
The commit of each is read from <DIR>/.commit (or <NAME>_COMMIT, e.g. CHEFER_COMMIT) and recorded in
the JSON's "sources" together with the sha256 of the reference files actually executed.

The references import `transformers`; a minimal shim providing just the names they use is written to a
temporary directory (TRANSFORMERS_SHIM=DIR to keep it). Optional display-only imports of the references
(tqdm, matplotlib, mpl_toolkits, cv2) are stubbed when they are not installed. Runs on CPU in float64
(torch default dtype set to float64 so that tensors the references create themselves, e.g. torch.eye in
the rollouts, are float64 too); one thread.
"""
import argparse
import hashlib
import importlib.abc
import importlib.util
import json
import math
import os
import struct
import sys
import tempfile
import types

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
# The fixture as salient finds it: $SALIENT_SHARED, else the shared/ beside the checkout.
FIXTURE = os.environ.get("SALIENT_REFERENCE_BERT") or os.path.join(
    os.environ.get("SALIENT_SHARED") or os.path.join(HERE, "..", "..", "shared"), "fixtures", "reference-bert")

REPOS = {  # env name -> GitHub repository
    "CHEFER": "hila-chefer/Transformer-Explainability",
    "MM": "hila-chefer/Transformer-MM-Explainability",
    "ATTCAT": "qiangyao1988/AttCAT",
    "MASKLRP": "LinxinS97/Mask-LRP",
    "CAPTUM": "pytorch/captum",
    "LIME": "marcotcr/lime",
}
# The reference files whose code is executed (hashed into "sources").
USED_FILES = {
    "CHEFER": ["BERT_explainability/modules/BERT/ExplanationGenerator.py",
               "BERT_explainability/modules/BERT/BERT.py",
               "BERT_explainability/modules/BERT/BertForSequenceClassification.py",
               "BERT_explainability/modules/layers_ours.py"],
    "MM": ["VisualBERT/mmf/models/transformers/backends/ExplanationGenerator.py"],
    "ATTCAT": ["BERT_explainability/modules/BERT/ExplanationGenerator.py",
               "BERT_explainability/modules/BERT/BERT.py",
               "BERT_explainability/modules/BERT/BertForSequenceClassification.py",
               "BERT_explainability/modules/layers_ours.py"],
    "MASKLRP": ["Transformer_Explanation/ExplanationGenerator.py",
                "Transformer_Explanation/modules/BERT/BERT.py",
                "Transformer_Explanation/modules/BERT/BertForTask.py",
                "Transformer_Explanation/modules/layers_ours.py"],
    "CAPTUM": ["captum/__init__.py", "captum/attr/_core/layer/layer_integrated_gradients.py",
               "captum/attr/_core/integrated_gradients.py"],
    "LIME": ["lime/lime_base.py", "lime/lime_text.py"],
}

MGAE_HEADS = [(0, 1), (1, 2)]  # (layer, head), 0-based: the explicit head set of the "mgae" entry

# ----------------------------------------------------------------------------------------------------
# Environment: reference locations, transformers shim, stubs for display-only dependencies
# ----------------------------------------------------------------------------------------------------


def ref_dir(name):
    d = os.environ.get(f"{name}_DIR")
    if not d and os.environ.get("REF_ROOT"):
        d = os.path.join(os.environ["REF_ROOT"], REPOS[name].replace("/", "+"))
    if not d or not os.path.isdir(d):
        sys.exit(f"set {name}_DIR (or REF_ROOT) to an extracted snapshot of {REPOS[name]}")
    return d


def source_info(name, d):
    commit = os.environ.get(f"{name}_COMMIT")
    if not commit and os.path.isfile(os.path.join(d, ".commit")):
        commit = open(os.path.join(d, ".commit")).read().strip()
    files = {}
    for rel in USED_FILES[name]:
        with open(os.path.join(d, rel), "rb") as f:
            files[rel] = hashlib.sha256(f.read()).hexdigest()
    return {"repo": REPOS[name], "commit": commit or "unknown", "files_sha256": files}


SHIM = {
    "transformers/__init__.py": '''
import torch
from torch import nn


class BertConfig:
    def __init__(self, **kw):
        self.output_attentions = False
        self.output_hidden_states = False
        self.use_return_dict = False
        self.return_dict = False
        self.is_decoder = False
        self.gradient_checkpointing = False
        self.hidden_act = "gelu"
        self.layer_norm_eps = 1e-12
        self.pad_token_id = 0
        for k, v in kw.items():
            setattr(self, k, v)
        self.num_labels = len(getattr(self, "id2label", None) or {}) or kw.get("num_labels", 2)


class PreTrainedModel(nn.Module):
    def __init__(self, config, *args, **kwargs):
        super().__init__()
        self.config = config

    def init_weights(self):
        pass

    def post_init(self):
        pass

    @property
    def dtype(self):
        return next(self.parameters()).dtype

    @property
    def device(self):
        return next(self.parameters()).device

    def get_extended_attention_mask(self, attention_mask, input_shape, device=None):
        ext = attention_mask[:, None, None, :].to(dtype=self.dtype)
        return (1.0 - ext) * -10000.0

    def get_head_mask(self, head_mask, num_hidden_layers, is_attention_chunked=False):
        # as transformers 4.x: [layers, heads] -> [layers, 1, heads, 1, 1] in the model dtype
        if head_mask is None:
            return [None] * num_hidden_layers
        if head_mask.dim() == 1:
            head_mask = head_mask[None, None, :, None, None].expand(num_hidden_layers, -1, -1, -1, -1)
        elif head_mask.dim() == 2:
            head_mask = head_mask[:, None, :, None, None]
        return head_mask.to(dtype=self.dtype)


class BertPreTrainedModel(PreTrainedModel):
    pass
''',
    "transformers/modeling_outputs.py": '''
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class BaseModelOutput:
    last_hidden_state: Any = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class BaseModelOutputWithPooling:
    last_hidden_state: Any = None
    pooler_output: Any = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None


@dataclass
class SequenceClassifierOutput:
    loss: Optional[Any] = None
    logits: Any = None
    hidden_states: Optional[Any] = None
    attentions: Optional[Any] = None
''',
    "transformers/utils/__init__.py": "from . import logging\n",
    "transformers/utils/logging.py": "import logging as _l\n\ndef get_logger(name=None):\n    return _l.getLogger(name)\n",
}


def write_shim(root):
    for rel, text in SHIM.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text.lstrip("\n"))


class _Anything:
    """Stands in for any class/function of a stubbed display-only module."""

    def __init__(self, *a, **k):
        self._it = a[0] if a else None

    def __call__(self, *a, **k):
        return _Anything(*a, **k)

    def __iter__(self):
        return iter(self._it if self._it is not None else [])

    def __getattr__(self, name):
        return _Anything()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last-resort finder: only used for these roots when the real package is not installed (the
    references import them for progress bars / plots / image I/O, which are never used here)."""
    ROOTS = {"tqdm", "matplotlib", "mpl_toolkits", "cv2"}

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.ROOTS:
            return importlib.util.spec_from_loader(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return _StubModule(spec.name)

    def exec_module(self, module):
        pass


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F32": np.float32, "F64": np.float64, "F16": np.float16}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        arr = np.frombuffer(data[b:e], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
        out[name] = torch.from_numpy(arr.astype(np.float64))  # widened from float32, exactly
    return out


def load_file_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_weights(model, state, what):
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        sys.exit(f"{what}: weights do not match: missing {missing}, unexpected {unexpected}")
    model.eval()
    return model


def make_token_type_wrapper(base):
    """Chefer's / AttCAT's Generators call model(input_ids=, attention_mask=) without token_type_ids;
    the wrapper feeds each case's token_type_ids (sentence pairs would be wrong otherwise)."""

    class WithTokenTypes(base):
        token_type_ids = None

        def forward(self, input_ids=None, attention_mask=None, **kw):
            if kw.get("token_type_ids") is None:
                kw["token_type_ids"] = self.token_type_ids
            return super().forward(input_ids=input_ids, attention_mask=attention_mask, **kw)

    return WithTokenTypes


# ----------------------------------------------------------------------------------------------------
# Minimal plain-torch BERT (for Captum): independent of every reference's model code
# ----------------------------------------------------------------------------------------------------


class PlainBert(torch.nn.Module):
    """Post-LN BERT classifier, exact (erf) GELU, additive -10000 mask, pooler tanh on [CLS]. It has an
    `embeddings.word_embeddings` submodule so that LayerIntegratedGradients can hook the word embeddings
    only (position and token-type embeddings untouched, as in the fixture's captum field)."""

    def __init__(self, state, cfg):
        super().__init__()
        self.cfg = cfg
        self.w = {k: v for k, v in state.items()}
        self.embeddings = torch.nn.Module()
        self.embeddings.word_embeddings = torch.nn.Embedding.from_pretrained(
            state["bert.embeddings.word_embeddings.weight"], freeze=False)
        self.attentions = None

    def forward(self, input_ids, token_type_ids, attention_mask=None):
        w, cfg = self.w, self.cfg
        eps, H = cfg["layer_norm_eps"], cfg["num_attention_heads"]
        B, L = input_ids.shape
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        ln = lambda x, p: torch.nn.functional.layer_norm(x, (x.shape[-1],), w[p + ".weight"], w[p + ".bias"], eps)
        lin = lambda x, p: x @ w[p + ".weight"].T + w[p + ".bias"]
        x = self.embeddings.word_embeddings(input_ids) + w["bert.embeddings.token_type_embeddings.weight"][token_type_ids]
        x = x + w["bert.embeddings.position_embeddings.weight"][:L][None]
        x = ln(x, "bert.embeddings.LayerNorm")
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        atts = []
        for i in range(cfg["num_hidden_layers"]):
            p = f"bert.encoder.layer.{i}."
            split = lambda t: t.view(B, L, H, -1).permute(0, 2, 1, 3)
            q, k, v = (split(lin(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
            s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + ext
            a = s.softmax(-1)
            atts.append(a)
            ctx = (a @ v).permute(0, 2, 1, 3).reshape(B, L, -1)
            x = ln(lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = torch.nn.functional.gelu(lin(x, p + "intermediate.dense"))
            x = ln(lin(h, p + "output.dense") + x, p + "output.LayerNorm")
        self.attentions = atts
        pooled = torch.tanh(lin(x[:, 0], "bert.pooler.dense"))
        return lin(pooled, "classifier")


# ----------------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------------


def r10(x):
    """Round to 10 significant digits (recursively) for a compact, stable JSON."""
    if isinstance(x, (list, tuple)):
        return [r10(v) for v in x]
    if isinstance(x, np.ndarray):
        return r10(x.tolist())
    if isinstance(x, torch.Tensor):
        return r10(x.detach().cpu().double().numpy().tolist())
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if math.isnan(x):
            return None  # JSON has no NaN (attention_gradcam's 0/0, see notes)
        return 0.0 if x == 0 else float(f"{x:.10g}")
    if isinstance(x, (np.integer,)):
        return int(x)
    return x


def vec(x):
    """A reference's per-token output (tensor or array, maybe with a batch dim) -> 1-D float64 array."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().double().numpy()
    x = np.asarray(x, np.float64)
    while x.ndim > 1:
        assert x.shape[0] == 1, x.shape
        x = x[0]
    return x


def rel_err(a, b):
    """max|a - b| / max|b|; NaNs must sit at the same places (inf otherwise) and are skipped."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return math.inf
    ok = ~np.isnan(b)
    if not ok.any():
        return 0.0
    return float(np.abs(a[ok] - b[ok]).max() / max(np.abs(b[ok]).max(), 1e-300))


# ----------------------------------------------------------------------------------------------------
# Sections
# ----------------------------------------------------------------------------------------------------


def explainer_section(args, dirs, state, cfg, cases, checks):
    shim_dir = os.environ.get("TRANSFORMERS_SHIM") or tempfile.mkdtemp(prefix="transformers_shim_")
    write_shim(shim_dir)
    sys.path.insert(0, shim_dir)
    # Chefer's BertForSequenceClassification imports PaddedSequence (for a wrapper not used here); the
    # real module needs gensim, so stub it.
    for name in ["BERT_rationale_benchmark", "BERT_rationale_benchmark.models",
                 "BERT_rationale_benchmark.models.model_utils"]:
        sys.modules[name] = types.ModuleType(name)
    sys.modules["BERT_rationale_benchmark.models.model_utils"].PaddedSequence = None
    if not torch.cuda.is_available():
        torch.Tensor.cuda = lambda self, *a, **k: self  # the references' one_hot.cuda()

    from transformers import BertConfig
    config = BertConfig(**cfg)

    # --- Chefer (Transformer-Explainability) model + Generator
    sys.path.insert(0, dirs["CHEFER"])
    from BERT_explainability.modules.BERT.BertForSequenceClassification import \
        BertForSequenceClassification as CheferBert
    from BERT_explainability.modules.BERT.ExplanationGenerator import Generator as CheferGenerator
    chefer = load_weights(make_token_type_wrapper(CheferBert)(config).double(), state, "Chefer model")
    gen = CheferGenerator(chefer)

    # --- AttCAT: its BERT model files are Chefer's (checked below), so its Generator (loaded from its
    # own file, under another module name: both repos call their package BERT_explainability) runs on
    # the Chefer model.
    def norm(path, drop_import=False):
        lines = open(path, encoding="utf-8").read().replace("\r\n", "\n").split("\n")
        if drop_import:
            lines = [l for l in lines if l.strip() != "from transformers.modeling_outputs import SequenceClassifierOutput"]
        return "\n".join(lines).strip()
    for rel in ["BERT_explainability/modules/BERT/BERT.py", "BERT_explainability/modules/layers_ours.py",
                "BERT_explainability/modules/BERT/BertForSequenceClassification.py"]:
        if norm(os.path.join(dirs["ATTCAT"], rel), True) != norm(os.path.join(dirs["CHEFER"], rel), True):
            sys.exit(f"AttCAT's {rel} differs from Chefer's: run AttCAT's own model instead")
    attcat_gen = load_file_module(
        "attcat_ExplanationGenerator",
        os.path.join(dirs["ATTCAT"], "BERT_explainability/modules/BERT/ExplanationGenerator.py")).Generator(chefer)

    # --- GAE: Transformer-MM-Explainability's VisualBERT SelfAttentionGenerator.generate_ours, run on the
    # Chefer model through an adapter (same get_attn / get_attn_gradients API).
    mm = load_file_module("mm_ExplanationGenerator", os.path.join(
        dirs["MM"], "VisualBERT/mmf/models/transformers/backends/ExplanationGenerator.py"))

    class VisualBertAdapter:
        def __init__(self, m):
            self.m = m
            self.model = types.SimpleNamespace(bert=m.bert)

        def __call__(self, inp):
            return {"scores": self.m(input_ids=inp["input_ids"], attention_mask=inp["attention_mask"])[0]}

        def eval(self):
            self.m.eval()

        def zero_grad(self):
            self.m.zero_grad()

    mm_gen = mm.SelfAttentionGenerator(VisualBertAdapter(chefer))

    # --- Mask-LRP model + Generator (its own package name, no clash)
    sys.path.insert(0, dirs["MASKLRP"])
    from Transformer_Explanation.modules.BERT.BertForTask import BertForSequenceClassification as MaskBert
    from Transformer_Explanation.ExplanationGenerator import Generator as MaskGenerator
    mask_model = load_weights(MaskBert(config).double(), state, "Mask-LRP model")
    mgen = MaskGenerator(mask_model, model_name="bert")

    nl, nh = cfg["num_hidden_layers"], cfg["num_attention_heads"]
    head_mask = torch.zeros(nl, nh)
    for l, h in MGAE_HEADS:
        head_mask[l, h] = 1.0
    all_heads = torch.ones(nl, nh)

    worst = {}

    def check(name, a, b):
        e = rel_err(a, b)
        worst[name] = max(worst.get(name, 0.0), e)

    out_cases = []
    nan_gradcam = []
    for ci, c in enumerate(cases):
        ids = torch.tensor([c["input_ids"]])
        tt = torch.tensor([c["token_type_ids"]])
        am = torch.ones_like(ids)
        target = int(c["pred"])
        chefer.token_type_ids = tt
        L = ids.shape[1]

        logits = chefer(input_ids=ids, attention_mask=am)[0].detach()[0]
        check("chefer_logits_vs_fixture", logits.numpy(), c["logits"])
        fx_att = np.asarray(c["attentions"])  # [layer][head][q][k]
        ref_att = np.stack([b.attention.self.get_attn()[0].detach().numpy() for b in chefer.bert.encoder.layer])
        check("chefer_attentions_vs_fixture", ref_att, fx_att)
        if int(logits.argmax()) != target:
            sys.exit(f"case {ci}: reference argmax {int(logits.argmax())} != fixture pred {target}")

        m = {}
        m["raw_attention"] = vec(gen.generate_attn_last_layer(ids, am, index=target))
        m["rollout"] = vec(gen.generate_rollout(ids, am, start_layer=0, index=target))
        m["attention_gradcam"] = vec(gen.generate_attn_gradcam(ids, am, index=target))

        inp = {"input_ids": ids, "attention_mask": am, "input_mask": torch.ones(1, 2, dtype=torch.long)}
        # input_mask only sets generate_ours' row index: input_mask.sum(1) - 2 = 0, the [CLS] row.
        m["gae"] = vec(mm_gen.generate_ours(inp, index=target))

        m["cam"] = vec(mgen.generate_gradcam(ids, am, index=target, token_type_ids=tt)[0])
        m["attcat"] = vec(attcat_gen.generate_TransCAM(ids, am, index=target))
        m["lrp_partial"] = vec(gen.generate_LRP_last_layer(ids, am, index=target))
        m["lrp_full"] = vec(gen.generate_full_lrp(ids, am, index=target))
        m["transformer_attribution"] = vec(gen.generate_LRP(ids, am, index=target, start_layer=0))
        m["mgae"] = vec(mgen.MGAE(ids, am, index=target, start_layer=0, head_mask=head_mask, token_type_ids=tt)[0])
        m["mgae_all_heads"] = vec(mgen.MGAE(ids, am, index=target, start_layer=0, head_mask=all_heads,
                                            token_type_ids=tt)[0])

        # plain formulas on the fixture's attention probabilities
        att = torch.tensor(fx_att)  # [layers, heads, q, k]
        m["attention_mean"] = att.mean(dim=(0, 1, 2)).numpy()
        m["attention_mean_last"] = att[-1].mean(dim=(0, 1)).numpy()

        # ---- cross-checks (not stored per case; the worst value goes to "checks")
        mask_logits = mask_model(input_ids=ids, attention_mask=am, token_type_ids=tt)[0].detach()[0]
        check("masklrp_logits_vs_fixture", mask_logits.numpy(), c["logits"])
        mg_none = vec(mgen.MGAE(ids, am, index=target, start_layer=0, head_mask=None, token_type_ids=tt)[0])
        check("masklrp_MGAE_no_mask_vs_chefer_generate_LRP_excl_cls", mg_none[1:], m["transformer_attribution"][1:])
        check("masklrp_GAE_vs_chefer_generate_LRP_excl_cls",
              vec(mgen.GAE(ids, am, index=target, token_type_ids=tt)[0])[1:], m["transformer_attribution"][1:])
        check("masklrp_AttCAT_vs_attcat_generate_TransCAM",
              vec(mgen.AttCAT(ids, am, index=target, token_type_ids=tt)), m["attcat"])
        check("masklrp_attn_gradcam_vs_chefer",
              vec(mgen.generate_attn_gradcam(ids, am, index=target, token_type_ids=tt)[0]), m["attention_gradcam"])
        check("masklrp_rollout_vs_chefer", vec(mgen.generate_rollout(ids, am, token_type_ids=tt)[0]), m["rollout"])
        check("masklrp_LRP_last_layer_vs_chefer",
              vec(mgen.generate_LRP_last_layer(ids, am, index=target, token_type_ids=tt)[0]), m["lrp_partial"])
        check("masklrp_full_lrp_vs_chefer",
              vec(mgen.generate_full_lrp(ids, am, index=target, token_type_ids=tt)[0]), m["lrp_full"])
        check("attcat_generate_LRP_vs_chefer_excl_cls",
              vec(attcat_gen.generate_LRP(ids, am, index=target, start_layer=0))[1:], m["transformer_attribution"][1:])

        # explicit formulas, recomputed from scratch with autograd on the plain model
        logits_p, hs_list, atts = plain_forward_with_hidden(args.plain, ids, tt)
        for a in atts:
            a.retain_grad()
        for h in hs_list:
            h.retain_grad()
        logits_p[0, target].backward()
        A = [a[0].detach() for a in atts]
        G = [a.grad[0] for a in atts]
        # GAE (MM-Explainability self-attention rule)
        R = torch.eye(L)
        for a, g in zip(A, G):
            R = R + (g * a).clamp(min=0).mean(0) @ R
        gae = R[0].clone()
        gae[0] = 0
        check("gae_formula_vs_mm_generate_ours", gae.numpy(), m["gae"])
        # AttCAT
        cat = sum(((hs_list[b].grad[0] * hs_list[b][0].detach()).sum(-1) * A[b].mean(0).mean(0)) for b in range(nl))
        check("attcat_formula_vs_generate_TransCAM", cat.numpy(), m["attcat"])
        # cam (Mask-LRP generate_gradcam)
        cam = G[-1].mean(dim=(0, 1)).clamp(min=0)
        cam[0] = 0
        check("cam_formula_vs_masklrp_generate_gradcam", cam.numpy(), m["cam"])
        # attention GradCAM: the reference divides by (max - min) of the clamped L x L map, 0/0 = NaN when
        # that map is all zero (every head's mean gradient <= 0 where A > 0)
        gc = (A[-1] * G[-1].mean(dim=(1, 2), keepdim=True)).mean(0).clamp(min=0)
        if np.isnan(m["attention_gradcam"]).any():
            assert float(gc.max()) == 0.0, "NaN attention_gradcam with a non-zero map"
            nan_gradcam.append(ci)
        else:
            gc = (gc - gc.min()) / (gc.max() - gc.min())
            gc[0, 0] = 0
            check("attention_gradcam_formula_vs_chefer", gc[0].numpy(), m["attention_gradcam"])
        worst["info_mgae_all_heads_vs_transformer_attribution_excl_cls"] = max(
            worst.get("info_mgae_all_heads_vs_transformer_attribution_excl_cls", 0.0),
            rel_err(m["mgae_all_heads"][1:], m["transformer_attribution"][1:]))

        out_cases.append({
            "index": ci,
            "input_ids": c["input_ids"],
            "token_type_ids": c["token_type_ids"],
            "target": target,
            "methods": {k: r10(v) for k, v in m.items()},
        })
        for k, v in m.items():
            assert v.shape == (L,), (k, v.shape)
    checks.update(worst)
    checks["attention_gradcam_nan_cases"] = nan_gradcam
    return out_cases


def plain_forward_with_hidden(pb, ids, tt):
    """PlainBert forward that also returns each block's input hidden state (hs[0] = embeddings output)."""
    w, cfg = pb.w, pb.cfg
    eps, H = cfg["layer_norm_eps"], cfg["num_attention_heads"]
    B, L = ids.shape
    ln = lambda x, p: torch.nn.functional.layer_norm(x, (x.shape[-1],), w[p + ".weight"], w[p + ".bias"], eps)
    lin = lambda x, p: x @ w[p + ".weight"].T + w[p + ".bias"]
    x = w["bert.embeddings.word_embeddings.weight"][ids].clone().requires_grad_(True)  # a leaf, so that
    x = x + w["bert.embeddings.token_type_embeddings.weight"][tt]                      # everything has grads
    x = ln(x + w["bert.embeddings.position_embeddings.weight"][:L][None], "bert.embeddings.LayerNorm")
    hs, atts = [], []
    for i in range(cfg["num_hidden_layers"]):
        hs.append(x)
        p = f"bert.encoder.layer.{i}."
        split = lambda t: t.view(B, L, H, -1).permute(0, 2, 1, 3)
        q, k, v = (split(lin(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
        a = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).softmax(-1)
        atts.append(a)
        ctx = (a @ v).permute(0, 2, 1, 3).reshape(B, L, -1)
        x = ln(lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        x = ln(lin(torch.nn.functional.gelu(lin(x, p + "intermediate.dense")), p + "output.dense") + x,
               p + "output.LayerNorm")
    logits = lin(torch.tanh(lin(x[:, 0], "bert.pooler.dense")), "classifier")
    return logits, hs, atts


def ig_baseline(ids):
    return [t if t in (101, 102) else 0 for t in ids]


def unk_ig_section(plain, cases, checks):
    # Captum is run as users run it, with torch's default dtype float32 (the model itself is float64):
    # its Riemann alphas are torch.linspace(...) in the default dtype, so they are float32-rounded
    # (float64 alphas move the Riemann results by ~3e-8 relative and no longer match the fixture's
    # captum field). Its quadrature weights are always cast to float32 (torch.tensor(step_sizes).float()).
    saved = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        return _unk_ig_section(plain, cases, checks)
    finally:
        torch.set_default_dtype(saved)


def _unk_ig_section(plain, cases, checks):
    from captum.attr import LayerIntegratedGradients

    def prob_forward(input_ids, token_type_ids):
        return plain(input_ids, token_type_ids).softmax(-1)

    lig = LayerIntegratedGradients(prob_forward, plain.embeddings.word_embeddings)
    methods = ["riemann_trapezoid", "gausslegendre"]

    def run(ids, tt, target):
        ids_t, tt_t = torch.tensor([ids]), torch.tensor([tt])
        out = {}
        for meth in methods:
            attr, delta = lig.attribute(ids_t, baselines=torch.tensor([ig_baseline(ids)]), target=target,
                                        additional_forward_args=(tt_t,), n_steps=50, method=meth,
                                        return_convergence_delta=True)
            out[meth] = {"token_scores": attr.sum(-1)[0].detach().numpy(), "delta": float(delta[0])}
        return out

    # First reproduce the fixture's own Captum IG (same definitions) to validate this setup.
    worst = 0.0
    for c in cases:
        ref = c["captum"]["ig"]
        got = run(c["input_ids"], c["token_type_ids"], int(c["captum"]["target"]))
        for meth in methods:
            worst = max(worst, rel_err(got[meth]["token_scores"], ref[meth]["token_scores"]))
    checks["captum_lig_setup_vs_fixture_captum_ig"] = worst

    # [UNK] (id 100) inputs built from fixture cases: (case index, positions replaced by [UNK]).
    # Positions are never [CLS]/[SEP]; one input has two [UNK] in a row; one is a sentence pair with an
    # [UNK] in each segment.
    specs = [(2, [4]), (8, [3, 4]), (20, [1, 5, 7]), (0, [5, 14])]
    out = []
    for ci, pos in specs:
        c = cases[ci]
        ids = list(c["input_ids"])
        for p in pos:
            assert ids[p] not in (0, 100, 101, 102), (ci, p)
            ids[p] = 100
        tt = c["token_type_ids"]
        with torch.no_grad():
            logits = plain(torch.tensor([ids]), torch.tensor([tt]))[0]
        pred = int(logits.argmax())
        res = run(ids, tt, pred)
        out.append({
            "source_case": ci, "unk_positions": pos,
            "input_ids": ids, "token_type_ids": tt, "baseline_ids": ig_baseline(ids),
            "pred": pred, "logits": r10(logits.numpy()), "probs": r10(logits.softmax(-1).numpy()),
            **{meth: {"token_scores": r10(res[meth]["token_scores"]), "delta": r10(res[meth]["delta"])}
               for meth in methods},
        })
    return {
        "description": "Captum LayerIntegratedGradients on bert.embeddings.word_embeddings (position and "
                       "token-type embeddings untouched); F = softmax probability of the predicted class "
                       "`pred` of the [UNK] input; baseline = input ids with every token except [CLS] (101) "
                       "and [SEP] (102) replaced by [PAD] (0) -- [UNK] (100) is replaced too; n_steps 50; "
                       "internal_batch_size None (one batch); torch default dtype float32 as in stock use, so "
                       "Captum's Riemann alphas are float32 linspace values and all its quadrature weights "
                       "float32 (the model and the attributions are float64); token_scores = attribution "
                       "summed over the "
                       "hidden dimension; delta = Captum's convergence delta (sum of attributions minus "
                       "(F(input) - F(baseline))).",
        "n_steps": 50,
        "methods": methods,
        "cases": out,
    }


def lime_section(checks):
    from lime.lime_base import LimeBase
    import scipy.sparse
    import sklearn.metrics

    def kernel(d, kernel_width=25):  # LimeTextExplainer's default kernel
        return np.sqrt(np.exp(-(d ** 2) / kernel_width ** 2))

    out = []
    for d, seed, two_col in [(4, 11, True), (7, 12, False), (12, 13, True)]:
        n = 60
        rs = np.random.RandomState(seed)
        # Neighbourhood exactly as LimeTextExplainer.__data_labels_distances draws it (random_state calls in
        # the same order): sizes = randint(1, d+1, n-1); each row removes `size` distinct features.
        sample = rs.randint(1, d + 1, n - 1)
        data = np.ones((n, d))
        for i, size in enumerate(sample, start=1):
            data[i, rs.choice(range(d), size, replace=False)] = 0
        # A fixed nonlinear black box on the binary rows.
        wv = rs.normal(size=d)
        y = 1.0 / (1.0 + np.exp(-(data @ wv + 0.3))) + 0.25 * data[:, 0] * data[:, 1] - 0.1 * data[:, d - 1] * data[:, 2]
        y = np.array(r10(y))  # what the JSON holds is exactly what is fitted

        distances = sklearn.metrics.pairwise.pairwise_distances(
            scipy.sparse.csr_matrix(data), scipy.sparse.csr_matrix(data)[0], metric="cosine").ravel() * 100
        labels = np.stack([1 - y, y], axis=1) if two_col else y[:, None]
        label = 1 if two_col else 0
        base = LimeBase(kernel_fn=kernel, verbose=False, random_state=np.random.RandomState(seed))
        intercept, exp, score, local_pred = base.explain_instance_with_data(
            data, labels, distances, label, num_features=d, feature_selection="none")
        coef = np.zeros(d)
        for f, wgt in exp:
            coef[f] = wgt
        out.append({
            "d": d, "n": n, "seed": seed, "labels_columns": labels.shape[1], "label": label,
            "z": data.astype(int).tolist(), "y": r10(y), "distances": r10(distances),
            "weights": r10(kernel(distances)), "coef": r10(coef), "intercept": r10(float(intercept)),
            "score": r10(float(score)), "local_pred": r10(float(np.ravel(local_pred)[0])),
        })
    return {
        "description": "lime.lime_base.LimeBase(kernel_fn=lambda d: sqrt(exp(-d^2/25^2))).explain_instance_with_data("
                       "z, labels, distances, label, num_features=d, feature_selection='none') with its default "
                       "Ridge(alpha=1, fit_intercept=True) weighted by the kernel; distances = sklearn cosine "
                       "distance of each row to row 0 (all ones) * 100, as LimeTextExplainer computes them "
                       "(an all-zero row has distance 100: sklearn treats its norm as 1, similarity 0). "
                       "labels = [1-y, y] (label 1) when labels_columns == 2, else [y] (label 0). "
                       "coef is in feature order; score is the weighted R^2 LimeBase returns; local_pred the "
                       "surrogate at row 0.",
        "cases": out,
    }


def shapley_section():
    out = []
    for d, seed in [(3, 21), (5, 22), (8, 23)]:
        rs = np.random.RandomState(seed)
        v = np.array(r10(rs.normal(size=2 ** d)))
        phi = np.zeros(d)
        for j in range(d):
            for mask in range(2 ** d):
                if mask >> j & 1:
                    continue
                s = bin(mask).count("1")
                wgt = math.factorial(s) * math.factorial(d - s - 1) / math.factorial(d)
                phi[j] += wgt * (v[mask | (1 << j)] - v[mask])
        assert abs(phi.sum() - (v[-1] - v[0])) < 1e-12
        out.append({"d": d, "seed": seed, "values_by_mask": r10(v), "phi": r10(phi)})
    return {
        "description": "Exact Shapley values: values_by_mask[m] = v(S) with bit j of m set iff feature j in S; "
                       "phi_j = sum_{S not containing j} |S|! (d-|S|-1)! / d! * (v(S u {j}) - v(S)); "
                       "sum(phi) = v(all) - v(empty).",
        "cases": out,
    }


# ----------------------------------------------------------------------------------------------------

NOTES = [
    # general
    "All models run in float64 (float32 weights widened exactly), eval mode, no padding, additive mask "
    "-10000; torch default dtype float64 so that tensors the references create (torch.eye in rollouts, "
    "GAE's R) are float64. Gradient-weighted methods back-propagate the target logit (one_hot . logits), "
    "target = the fixture case's pred (equal to the reference model's argmax for every case).",
    "Chefer's and AttCAT's Generators call the model without token_type_ids; a wrapper passes each case's "
    "token_type_ids (8 cases are sentence pairs). Mask-LRP's Generator methods take token_type_ids and are "
    "given them -- but Mask-LRP's own evaluate_explanability.py sets token_type_ids = None before calling "
    "them (pairs then run as single-segment inputs there); not copied here.",
    # raw attention / rollout / gradcam
    "raw_attention = Chefer generate_attn_last_layer: last layer, mean over heads, [CLS] row, [CLS]->[CLS] "
    "set to 0.",
    "rollout = Chefer generate_rollout(start_layer=0): per layer mean over heads + I, rows renormalised "
    "to sum 1, product layer_L ... layer_0 (later layer on the left), [CLS] row, [CLS]->[CLS] set to 0.",
    "attention_gradcam = Chefer generate_attn_gradcam: last layer; per head the gradient of the target "
    "logit w.r.t. the attention probabilities averaged over ALL (query, key) entries (a scalar per head) "
    "times A; mean over heads; clamp >= 0; min-max normalised over the WHOLE LxL map (not the row); then "
    "[CLS]->[CLS] = 0; [CLS] row. So the row need not reach 0 or 1. When the clamped map is all zero (every head's mean "
    "gradient <= 0) the reference computes 0/0: the row is [0, NaN, ..., NaN] ([CLS] set to 0 after the "
    "division). On this fixture that happens for every case whose target is class 1 (listed in checks."
    "attention_gradcam_nan_cases); NaN is written as null. A case can also have a non-zero map whose "
    "[CLS] row is all zero.",
    # transformer attribution
    "transformer_attribution = Chefer (Transformer-Explainability) generate_LRP(start_layer=0): per layer "
    "(LRP relevance of the attention probabilities, as saved by relprop AFTER the '/2' split of the "
    "matmul relevance) * (gradient of the target logit w.r.t. the probabilities), clamp >= 0, mean over "
    "heads, then compute_rollout_attention (+I, rows renormalised, product). The [CLS]->[CLS] entry is "
    "set to rollout[:, 0].min() (the row minimum, including the [CLS] entry itself) in "
    "Transformer-Explainability, whereas AttCAT's copy of generate_LRP and Mask-LRP's MGAE/GAE set it to 0 "
    "(the other entries are identical, see checks).",
    "lrp_partial = generate_LRP_last_layer: last layer's saved LRP relevance of the attention probs, clamp "
    ">= 0, mean over heads, [CLS]->[CLS] = 0, [CLS] row. lrp_full = generate_full_lrp: relevance at the "
    "embedding OUTPUT (model.relprop stops at the encoder input; the embeddings' LayerNorm is not "
    "propagated through), summed over the hidden dim, then position 0 ([CLS]) set to 0.",
    # GAE
    "gae = Transformer-MM-Explainability VisualBERT SelfAttentionGenerator.generate_ours run verbatim on the "
    "Chefer BERT via an adapter: R = I; for each layer R += mean_heads((dlogit/dA * A).clamp(min=0)) @ R; "
    "A = softmax attention probabilities; returns R[cls_index] with R[cls_index, cls_index] = 0. So GAE "
    "zeroes [CLS]->[CLS] (also LXMERT's generator: R_t_t[0,0] = 0). The ViT notebook instead returns "
    "R[0, 1:] (drops [CLS]). No row normalisation, no rollout renormalisation.",
    "Mask-LRP has a method named GAE, but it is NOT the MM-Explainability rule: it is Chefer's transformer "
    "attribution (LRP relevance of A, not A itself, times grad, clamp, head mean, compute_rollout_attention "
    "with +I and row renormalisation), with [CLS]->[CLS] = 0. It is identical to its MGAE without a head "
    "mask. Its signature also lacks head_mask, so Mask-LRP's evaluate script (which passes head_mask to "
    "every method) cannot call it.",
    # cam
    "cam = Mask-LRP generate_gradcam: only the GRADIENT of the target logit w.r.t. the LAST layer's "
    "attention probabilities, averaged over heads and over query rows (mean(dim=[0,1]) of [H, L, L]), "
    "clamp >= 0, and the [CLS] (key 0) entry set to 0. The attention values themselves are not used (no "
    "grad * A), nothing is min-max normalised, and relprop is run but unused.",
    # AttCAT
    "attcat = AttCAT generate_TransCAM (qiangyao1988/AttCAT, run verbatim; its BERT model files equal "
    "Chefer's, checked at run time): forward with output_hidden_states=True; hs = hidden_states tuple; for "
    "block b in 0..N-1, hs[b] = input of block b (hs[0] = embeddings output after LayerNorm; the final "
    "encoder output hs[N] is not used); retain_grad on hs[b]; backward of the target logit; "
    "cat_b = (hs[b].grad * hs[b]).sum(-1) * att_b, att_b = attention probabilities of block b averaged "
    "over heads then over query rows (attention each key token receives); AttCAT = sum_b cat_b, signed, "
    "no clamp, no normalisation, [CLS]/[SEP] not zeroed. Note hs[b].grad is the TOTAL gradient at the "
    "block input (residual path included), not only through the attention. Mask-LRP's AttCAT is "
    "identical (checked).",
    # MGAE
    "mgae = Mask-LRP Generator.MGAE(start_layer=0, head_mask=M) with M[layer, head] = 1 only for "
    "(0,1) and (1,2). The head mask acts ONLY in relprop (the forward head masking is commented out, so "
    "logits, attention probabilities and their gradients are those of the full model). In each layer's "
    "BertSelfAttention.relprop the relevance arriving at the context layer is multiplied per head by M "
    "before the matmul(A, V) relprop; the relevances passed on (via Q, K and V) come from that masked "
    "split (and are halved); but the relevance saved as the layer's attention cam is a SECOND, unmasked "
    "relprop of the same incoming relevance, and it is NOT halved (without a head mask the saved cam is the "
    "halved one). Relevance still reaches lower layers through the residual (skip) branches, which are not "
    "masked. Per layer: cam = (grad * saved cam).clamp(min=0).mean over ALL heads (masked heads are not "
    "excluded from the mean), then compute_rollout_attention (+I, row renormalisation), [CLS]->[CLS] = 0, "
    "[CLS] row. Consequences (verified numerically): with any head mask the last layer's saved cam is "
    "exactly 2x the no-mask one (and with M = all ones every layer's is), which changes the result because "
    "of the +I row renormalisation: mgae_all_heads (M = all ones) differs from transformer_attribution "
    "(= MGAE without head mask, [CLS] aside) by ~100% relative (checks); the kept-head set only changes the "
    "relevance reaching the layers below the last.",
    "Mask-LRP head selection (utils/preprocess.py generate_head_mask, attn_head_stats.py): positional "
    "heads: for every head, over the dataset (batch of 1, punctuation tokens renamed [MASK] only for the "
    "syntactic matching), the argmax key of every query row (all rows, [CLS]/[SEP] included) gives a "
    "relative offset argmax - query; counts per offset k >= 0 (rel_ppos, includes 0 = self) and per -k "
    "(rel_npos, k > 0) are accumulated; frequencies are divided by the total count of layer 0 head 0 "
    "(= number of query rows); a head is kept if any offset's frequency is > pos_thres (default 0.8, "
    "strict). Syntactic heads: per dependency relation (nsubj, obj, amod, advmod) the accuracy "
    "hit/(hit+miss) of the head's argmax word being the dependency head word, kept if > synt_thres "
    "(per relation). mask_type 'synt_pos' = union; kept heads get 1, all others 0 (mask_type 'orig' = no "
    "mask).",
    # attention mean
    "attention_mean = mean of the softmax attention probabilities over layers, heads and query rows "
    "(score per key token); attention_mean_last = the same for the last layer only. Computed from the "
    "fixture's attentions; nothing zeroed.",
    "Captum 0.8 LayerIntegratedGradients (unk_ig): with torch's default dtype float32 (stock), the "
    "Riemann alphas are torch.linspace(0, 1, n) (trapezoid) / linspace(0, 1-1/n, n) (left) rounded to "
    "float32, and every rule's step sizes (1/n, halved at both ends for trapezoid; Gauss-Legendre weights "
    "from numpy) are cast to float32 by torch.tensor(step_sizes).float(); the gradients and attributions "
    "themselves stay float64. Exact float64 alphas change riemann_* results by ~1e-8..3e-8 relative (Gauss-"
    "Legendre only by rounding, since its alphas come from numpy in float64). With the stock setting, "
    "this script reproduces the fixture's cases.jsonl captum.ig to ~1e-15 (see checks).",
    # layers_ours difference
    "Mask-LRP's layers_ours.Linear.relprop returns only the activator term (no alpha/beta), Chefer's "
    "returns alpha*act - beta*inh with beta = alpha - 1 = 0: identical for alpha = 1.",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "tests", "data", "explainer_reference.json"))
    ap.add_argument("--model-dir", default=os.path.join(FIXTURE, "model"))
    ap.add_argument("--cases", default=os.path.join(FIXTURE, "cases.jsonl"))
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    dirs = {k: ref_dir(k) for k in REPOS}
    sources = {k.lower(): source_info(k, d) for k, d in dirs.items()}
    sys.meta_path.append(_StubFinder())
    sys.path.insert(0, dirs["CAPTUM"])
    sys.path.insert(0, dirs["LIME"])
    import captum
    if not captum.__version__.startswith("0.8"):
        sys.exit(f"captum {captum.__version__} found; 0.8.x is the target")
    sources["captum"]["version"] = captum.__version__

    with open(os.path.join(args.model_dir, "config.json")) as f:
        cfg = json.load(f)
    state = load_safetensors(os.path.join(args.model_dir, "model.safetensors"))
    with open(args.cases) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    for c in cases:
        c.setdefault("token_type_ids", [0] * len(c["input_ids"]))

    plain = PlainBert(state, cfg).eval()
    args.plain = plain
    checks = {}
    worst_logit = 0.0
    with torch.no_grad():
        for c in cases:
            lg = plain(torch.tensor([c["input_ids"]]), torch.tensor([c["token_type_ids"]]))[0]
            worst_logit = max(worst_logit, float((lg - torch.tensor(c["logits"])).abs().max()))
    if worst_logit > 1e-6:
        sys.exit(f"plain BERT forward does not reproduce the fixture's logits: {worst_logit:.2e}")
    checks["plain_forward_logits_vs_fixture_maxabs"] = worst_logit

    out_cases = explainer_section(args, dirs, state, cfg, cases, checks)
    result = {
        "format": "salient explainer reference v1",
        "generated_by": "bench/reference_explainers.py",
        "fixture": {"model": "reference-bert/model", "cases": "reference-bert/cases.jsonl"},
        "sources": sources,
        "notes": NOTES,
        "mgae_heads": [list(h) for h in MGAE_HEADS],
        "methods": {
            "raw_attention": "Chefer Generator.generate_attn_last_layer",
            "rollout": "Chefer Generator.generate_rollout(start_layer=0)",
            "attention_gradcam": "Chefer Generator.generate_attn_gradcam",
            "gae": "Transformer-MM-Explainability VisualBERT SelfAttentionGenerator.generate_ours ([CLS] row)",
            "cam": "Mask-LRP Generator.generate_gradcam",
            "attcat": "AttCAT Generator.generate_TransCAM",
            "lrp_partial": "Chefer Generator.generate_LRP_last_layer",
            "lrp_full": "Chefer Generator.generate_full_lrp",
            "transformer_attribution": "Chefer Generator.generate_LRP(start_layer=0) ([CLS] entry = row min)",
            "mgae": "Mask-LRP Generator.MGAE(start_layer=0, head_mask = 1 at mgae_heads, 0 elsewhere)",
            "mgae_all_heads": "Mask-LRP Generator.MGAE(start_layer=0, head_mask = all ones)",
            "attention_mean": "mean of attention probs over layers, heads, query rows",
            "attention_mean_last": "mean of last-layer attention probs over heads, query rows",
        },
        "cases": out_cases,
        "unk_ig": unk_ig_section(plain, cases, checks),
        "lime": lime_section(checks),
        "shapley": shapley_section(),
    }
    result["checks"] = {
        "description": "max relative error (max|a-b| / max|b| per case, worst over cases) of cross-checks "
                       "run while generating; logits/attentions vs the fixture's own values",
        **{k: (float(f"{v:.3g}") if isinstance(v, float) else v) for k, v in checks.items()},
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes)")
    for k, v in result["checks"].items():
        if k != "description":
            print(f"  {k:60s} {v}")


if __name__ == "__main__":
    main()
