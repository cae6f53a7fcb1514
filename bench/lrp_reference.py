#!/usr/bin/python3
"""Check salient's LRP explainers against the reference implementation of Chefer et al. (2021).

The reference (hila-chefer/Transformer-Explainability, BERT_explainability/) is NOT part of this
repository: check it out somewhere else and point CHEFER_DIR at the directory that contains
BERT_explainability/, e.g.

  git -C /path/to/Transformer-Explainability.git archive HEAD BERT_explainability | tar -x -C /tmp/chefer
  CHEFER_DIR=/tmp/chefer /usr/bin/python3 bench/lrp_reference.py MODEL_DIR cases.jsonl [-n N]
      [--salient build/salient]

MODEL_DIR is an HF-format BERT classifier directory (config.json + model.safetensors, read here with
json + numpy); cases.jsonl has one input a line with "input_ids" and optionally "token_type_ids".
The reference imports `transformers`; only the few names it needs are provided by a minimal shim
that this script writes into a temporary directory (or set TRANSFORMERS_SHIM=DIR to write/keep it
there). Its `BERT_rationale_benchmark` import (PaddedSequence, unused here) is stubbed as well.
The reference calls `.cuda()`; without CUDA that call is made a no-op. The reference model runs in
float64 (as salient's LRP) and eval mode; the reference Generator passes no token_type_ids, so the
model is wrapped to pass each case's token_type_ids.

For each case, salient picks the class (--target pred); the reference is run for the same class
(a disagreement with the reference's own argmax is reported). Compared, per case with
rel = max|salient - ref| / max|ref|, worst case printed:
  lrp_partial             vs Generator.generate_LRP_last_layer
  lrp_full                vs Generator.generate_full_lrp
  transformer_attribution vs Generator.generate_LRP(start_layer=0), [CLS]->[CLS] excluded
                          (salient: row min over real tokens; reference: rollout[:, 0].min(), which
                          for a single unpadded input is the same; also printed with it included)
  mgae with --heads = every head, vs the same generate_LRP map.
salient runs with --output logit --batch-size 1.

--f32-embeddings feeds the reference the embedding output computed in float32 and then widened, as
salient's lrp() once did. The LRP rules divide by pre-activations that can be near 0, so float32
rounding of the embeddings alone moved the maps by up to ~1e-3 relative; salient now sums and
normalises the embeddings in float64, and this option is kept to show that effect.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import types

import numpy as np
import torch

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

    @property
    def dtype(self):
        return next(self.parameters()).dtype

    def get_extended_attention_mask(self, attention_mask, input_shape, device):
        ext = attention_mask[:, None, None, :].to(dtype=self.dtype)
        return (1.0 - ext) * -10000.0

    def get_head_mask(self, head_mask, num_hidden_layers):
        assert head_mask is None
        return [None] * num_hidden_layers


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
        out[name] = torch.from_numpy(arr.astype(np.float64))
    return out


def load_reference(chefer_dir, shim_dir, model_dir, f32_embeddings=False):
    sys.path.insert(0, shim_dir)
    sys.path.insert(0, chefer_dir)
    # BertForSequenceClassification.py imports PaddedSequence (for a wrapper not used here); the real
    # module needs gensim, so stub it.
    for name in ["BERT_rationale_benchmark", "BERT_rationale_benchmark.models",
                 "BERT_rationale_benchmark.models.model_utils"]:
        sys.modules[name] = types.ModuleType(name)
    sys.modules["BERT_rationale_benchmark.models.model_utils"].PaddedSequence = None
    if not torch.cuda.is_available():
        torch.Tensor.cuda = lambda self, *a, **k: self  # the reference's one_hot.cuda()
    from transformers import BertConfig
    from BERT_explainability.modules.BERT.BertForSequenceClassification import BertForSequenceClassification
    from BERT_explainability.modules.BERT.ExplanationGenerator import Generator

    class WithTokenTypes(BertForSequenceClassification):
        """The Generator calls model(input_ids=, attention_mask=); pass the case's token_type_ids."""
        token_type_ids = None

        def forward(self, input_ids=None, attention_mask=None, **kw):
            kw.setdefault("token_type_ids", self.token_type_ids)
            self.last_input_ids = input_ids
            return super().forward(input_ids=input_ids, attention_mask=attention_mask, **kw)

    with open(os.path.join(model_dir, "config.json")) as f:
        config = BertConfig(**json.load(f))
    model = WithTokenTypes(config).double()
    state = load_safetensors(os.path.join(model_dir, "model.safetensors"))
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        sys.exit(f"weights do not match the reference model: missing {missing}, unexpected {unexpected}")
    model.eval()
    if f32_embeddings:
        emb = {k[len("bert.embeddings."):]: v.float() for k, v in state.items() if k.startswith("bert.embeddings.")}

        def embed_f32(module, inputs, output):
            ids, tt = model.last_input_ids, model.token_type_ids
            x = emb["word_embeddings.weight"][ids] + emb["position_embeddings.weight"][:ids.shape[1]][None]
            x = x + emb["token_type_embeddings.weight"][tt]
            x = torch.nn.functional.layer_norm(x, (x.shape[-1],), emb["LayerNorm.weight"], emb["LayerNorm.bias"],
                                               config.layer_norm_eps)
            return x.to(output.dtype)

        model.bert.embeddings.register_forward_hook(embed_f32)
    return model, Generator(model), config


def run_salient(salient, model_dir, cases, method, extra=()):
    stdin = "".join(json.dumps({"input_ids": c["input_ids"], "token_type_ids": c["token_type_ids"]}) + "\n"
                    for c in cases)
    cmd = [salient, "--quiet", "explain", "--model", model_dir, "--method", method, "--output", "logit",
           "--batch-size", "1", *extra]
    res = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{res.stderr}")
    out = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    assert len(out) == len(cases), (len(out), len(cases))
    return out


def rel_err(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("cases")
    ap.add_argument("-n", type=int, default=0, help="first N cases (default all)")
    ap.add_argument("--salient", default=os.path.join(here, "..", "build", "salient"))
    ap.add_argument("--f32-embeddings", action="store_true",
                    help="give the reference float32 embeddings, as salient (see above)")
    ap.add_argument("--verbose", action="store_true", help="print the per-case errors")
    args = ap.parse_args()
    chefer = os.environ.get("CHEFER_DIR")
    if not chefer or not os.path.isdir(os.path.join(chefer, "BERT_explainability")):
        sys.exit("set CHEFER_DIR to a directory containing the reference's BERT_explainability/")
    torch.set_num_threads(1)

    shim_dir = os.environ.get("TRANSFORMERS_SHIM") or tempfile.mkdtemp(prefix="transformers_shim_")
    write_shim(shim_dir)
    model, gen, config = load_reference(chefer, shim_dir, args.model_dir, args.f32_embeddings)

    with open(args.cases) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    if args.n > 0:
        cases = cases[:args.n]
    for c in cases:
        c.setdefault("token_type_ids", [0] * len(c["input_ids"]))

    all_heads = ",".join(f"{l}.{h}" for l in range(config.num_hidden_layers)
                         for h in range(config.num_attention_heads))
    sal = {m: run_salient(args.salient, args.model_dir, cases, m)
           for m in ["lrp_partial", "lrp_full", "transformer_attribution"]}
    sal["mgae"] = run_salient(args.salient, args.model_dir, cases, "mgae", ["--heads", all_heads])

    worst = {k: (0.0, -1) for k in ["lrp_partial", "lrp_full", "transformer_attribution",
                                    "transformer_attribution_with_cls", "mgae", "mgae_vs_ta_salient"]}
    pred_disagree, logit_err = 0, 0.0
    for i, c in enumerate(cases):
        ids = torch.tensor([c["input_ids"]])
        mask = torch.ones_like(ids)
        model.token_type_ids = torch.tensor([c["token_type_ids"]])
        target = sal["lrp_partial"][i]["target"]
        assert all(sal[m][i]["target"] == target for m in sal)
        logits = model(input_ids=ids, attention_mask=mask)[0].detach()  # (it hooks attention grads)
        pred_disagree += int(logits.argmax(-1).item() != target)
        if "logits" in c:  # the fixture's own logits: checks the weights were loaded right
            logit_err = max(logit_err, float((logits[0] - torch.tensor(c["logits"], dtype=logits.dtype)).abs().max()))
        ref = {
            "lrp_partial": gen.generate_LRP_last_layer(ids, mask, index=target)[0],
            "lrp_full": gen.generate_full_lrp(ids, mask, index=target)[0],
            "transformer_attribution": gen.generate_LRP(ids, mask, index=target, start_layer=0)[0],
        }
        ref = {k: v.detach().double().numpy() for k, v in ref.items()}
        s = {m: np.asarray(sal[m][i]["scores"], np.float64) for m in sal}
        errs = {
            "lrp_partial": rel_err(s["lrp_partial"], ref["lrp_partial"]),
            "lrp_full": rel_err(s["lrp_full"], ref["lrp_full"]),
            "transformer_attribution": rel_err(s["transformer_attribution"][1:], ref["transformer_attribution"][1:]),
            "transformer_attribution_with_cls": rel_err(s["transformer_attribution"], ref["transformer_attribution"]),
            "mgae": rel_err(s["mgae"][1:], ref["transformer_attribution"][1:]),
            "mgae_vs_ta_salient": rel_err(s["mgae"], s["transformer_attribution"]),
        }
        if args.verbose:
            print(i, len(c["input_ids"]), target, " ".join(f"{k}={v:.3e}" for k, v in errs.items()))
        for k, v in errs.items():
            if v > worst[k][0] or worst[k][1] < 0:
                worst[k] = (v, i)

    print(f"cases: {len(cases)}; reference argmax != salient target: {pred_disagree}; "
          f"max |reference logits - cases' logits|: {logit_err:.1e}")
    print("max relative error (max|salient-ref| / max|ref| per case, worst case):")
    for k, (v, i) in worst.items():
        print(f"  {k:34s} {v:.3e}  (case {i})")


if __name__ == "__main__":
    main()
