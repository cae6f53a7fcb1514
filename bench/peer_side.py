"""The reference side of bench/hf_vs_captum.py: Hugging Face transformers and Captum, run in a
process of their own so that the peer stack is whatever the Python running this file has installed
(PyPI's current torch in .venv-bench, scripts/bench_env.sh; Debian's torch 1.13 in .venv-ref) and
no library of salient's process (its LibTorch, its OpenBLAS) is shared. The environment is: a peer on
Debian's OpenBLAS gets the kernels `import salient` chose ($OPENBLAS_CORETYPE), as salient does. Not run by hand: the benchmark
starts it and speaks JSON lines over stdin / stdout.

  {"setup": {...}}             -> {"versions": ..., "sgemm_gflops": ...}
  {"run": NAME, "save": PATH}  -> {"seconds": s}   (the call's result saved to PATH.npy when asked)
  {"train": {...}}             -> {"seconds": s}
  {"sgemm": true}              -> {"sgemm_gflops": ...}
"""
import json
import sys
import time

import numpy as np
import torch
import transformers

from blas_rate import sgemm_gflops


class Peer:
    def __init__(self, s):
        torch.set_num_threads(s["threads"])
        self.s = s
        self.hf = transformers.BertForSequenceClassification.from_pretrained(
            s["model"], attn_implementation="eager").eval()
        self.tok = transformers.AutoTokenizer.from_pretrained(s["model"])
        self.calls = {"ig": self.ig, "lime": self.lime, "kernel_shap": self.kernel_shap, "attattr": self.attattr,
                      "predict": self.predict}
        if "lime" in s["sections"]:
            from captum._utils.models.linear_model import SkLearnRidge
            from captum.attr import Lime
            self.lime_ = Lime(self.prob, interpretable_model=SkLearnRidge(alpha=1.0))
        if "kernel_shap" in s["sections"]:
            from captum.attr import KernelShap
            self.kernel_shap_ = KernelShap(self.prob)
        if "ig" in s["sections"]:
            from captum.attr import LayerIntegratedGradients
            self.lig = LayerIntegratedGradients(self.prob, self.hf.bert.embeddings.word_embeddings)

    def versions(self):
        import captum
        return {"torch": torch.__version__, "transformers": transformers.__version__, "captum": captum.__version__,
                "blas": "MKL" if torch.backends.mkl.is_available() else "OpenBLAS"}

    def encode(self, t):
        e = self.tok(t, return_tensors="pt")
        return e["input_ids"], e["token_type_ids"], e["attention_mask"]

    def prob(self, ids, types, mask):
        return self.hf(input_ids=ids, token_type_ids=types, attention_mask=mask).logits.softmax(-1)

    def target_of(self, ids, types, mask):
        with torch.no_grad():
            return int(self.prob(ids, types, mask).argmax())

    def ig(self):
        out = []
        for t in self.s["ig_texts"]:
            ids, types, mask = self.encode(t)
            base = torch.where((ids == self.tok.cls_token_id) | (ids == self.tok.sep_token_id), ids,
                               torch.full_like(ids, self.tok.pad_token_id))
            attr = self.lig.attribute(ids, baselines=base, target=self.target_of(ids, types, mask),
                                      additional_forward_args=(types, mask), n_steps=50, method="gausslegendre",
                                      internal_batch_size=50)
            out.append(attr.sum(-1)[0].detach().numpy())
        return np.concatenate(out)

    def perturbation_args(self, t):
        ids, types, mask = self.encode(t)
        return dict(inputs=ids, baselines=torch.full_like(ids, self.tok.mask_token_id),
                    additional_forward_args=(types, mask), target=self.target_of(ids, types, mask),
                    feature_mask=torch.arange(ids.shape[1]).unsqueeze(0))

    def lime(self):
        for t in self.s["perturbation_texts"]:
            self.lime_.attribute(**self.perturbation_args(t), n_samples=self.s["samples"], perturbations_per_eval=64)

    def kernel_shap(self):
        for t, budget in zip(self.s["perturbation_texts"], self.s["shap_budgets"]):
            self.kernel_shap_.attribute(**self.perturbation_args(t), n_samples=budget, perturbations_per_eval=64)

    def predict(self):
        dev = self.s["dev"]
        with torch.no_grad():
            for s in range(0, len(dev), 32):
                self.hf(**self.tok(dev[s:s + 32], padding=True, return_tensors="pt"))

    def attattr(self):
        """AttAttr the straightforward way (the authors' code's): per layer, the m scaled copies of the
        layer's attention in one batch, a full forward and backward, left Riemann points."""
        steps = 20
        ids, types, mask = self.encode(self.s["text128"])
        target = self.target_of(ids, types, mask)
        with torch.no_grad():
            full = self.hf(input_ids=ids, token_type_ids=types, attention_mask=mask, output_attentions=True).attentions
        alphas = torch.arange(steps, dtype=torch.float32) / steps
        batch = [x.repeat(steps, 1) for x in (ids, types, mask)]
        out = []
        for l, layer in enumerate(self.hf.bert.encoder.layer):
            held = {}

            def scale(probs):
                s = (alphas.view(-1, 1, 1, 1) * probs.detach()).requires_grad_(True)
                held["s"] = s
                return s

            with scaled_attention(layer, scale):
                self.prob(*batch)[:, target].sum().backward()
            out.append((full[l][0] * held["s"].grad.sum(0) / steps).numpy())
        return np.stack(out)

    def train(self, t):
        """One epoch of an eager PyTorch loop on HF's model, the settings of `salient train`."""
        torch.manual_seed(t["seed"])
        model = transformers.BertForSequenceClassification.from_pretrained(
            t["encoder"], num_labels=2, attn_implementation="eager").train()
        decay = [p for n, p in model.named_parameters() if not n.endswith("bias") and "LayerNorm" not in n]
        rest = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                                lr=1e-4)
        texts, labels = t["texts"], t["labels"]
        batches = [t["order"][s:s + 32] for s in range(0, len(texts), 32)]
        sched = transformers.get_linear_schedule_with_warmup(opt, int(0.06 * len(batches)), len(batches))
        encoded = [(self.tok([texts[i] for i in b], truncation=True, max_length=64, padding=True,
                             return_tensors="pt"), torch.tensor([labels[i] for i in b])) for b in batches]
        t0 = time.perf_counter()
        for enc, y in encoded:
            loss = model(**enc, labels=y).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
        return time.perf_counter() - t0


class scaled_attention:
    """Within the block, `fn` replaces one BERT layer's attention probabilities (after softmax, before
    the product with the values). transformers 4.x applies them through the self-attention's dropout
    module (a forward hook there); 5.x calls a module-level attention function, wrapped here for the
    one layer's self-attention module."""

    def __init__(self, layer, fn):
        self.self_attn, self.fn = layer.attention.self, fn

    def __enter__(self):
        from transformers.models.bert import modeling_bert
        self.module = modeling_bert
        if not hasattr(modeling_bert, "eager_attention_forward"):  # transformers 4.x
            self.handle = self.self_attn.dropout.register_forward_hook(lambda _m, _i, out: self.fn(out))
            return self
        self.original = modeling_bert.eager_attention_forward
        target, fn = self.self_attn, self.fn

        def patched(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
            if module is not target:
                return self.original(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout,
                                     **kwargs)
            if scaling is None:
                scaling = query.size(-1) ** -0.5
            weights = torch.matmul(query, key.transpose(2, 3)) * scaling
            if attention_mask is not None:
                weights = weights + attention_mask
            probs = fn(torch.nn.functional.softmax(weights, dim=-1))
            return torch.matmul(probs, value).transpose(1, 2).contiguous(), probs

        modeling_bert.eager_attention_forward = patched
        self.handle = None
        return self

    def __exit__(self, *exc):
        if self.handle is not None:
            self.handle.remove()
        else:
            self.module.eager_attention_forward = self.original


def main():
    peer = None
    for line in sys.stdin:
        msg = json.loads(line)
        if "setup" in msg:
            peer = Peer(msg["setup"])
            reply = {"versions": peer.versions(), "sgemm_gflops": sgemm_gflops()}
        elif "run" in msg:
            t0 = time.perf_counter()
            result = peer.calls[msg["run"]]()
            reply = {"seconds": time.perf_counter() - t0}
            if msg.get("save"):
                np.save(msg["save"], result)
        elif "train" in msg:
            reply = {"seconds": peer.train(msg["train"])}
        elif "sgemm" in msg:
            reply = {"sgemm_gflops": sgemm_gflops()}
        else:
            raise SystemExit(f"peer_side: unknown message {sorted(msg)}")
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
