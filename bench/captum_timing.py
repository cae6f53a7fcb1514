#!/usr/bin/python3
"""Time Captum 0.8 on the same model and inputs as bench_explain, for docs/results/explainers.md.

The BERT classifier is re-implemented here in plain PyTorch (the HF-format model directory is read
from config.json + model.safetensors; no transformers needed), with the word embeddings as an
nn.Embedding so Captum's LayerIntegratedGradients can hook it. Inputs are token ids (JSON lines with
"ids", e.g. from `salient tokenize --model DIR`).

  PYTHONPATH=/path/to/captum /usr/bin/python3 bench/captum_timing.py MODEL_DIR ids.jsonl [--threads N]
      [--methods ig,lime,kernel_shap] [--repeats N] [--check]

--check prints the largest difference of IG token scores against `salient explain` output read from
$SALIENT_IG_JSONL (same inputs), as a sanity check that both compute the same thing.
"""
import argparse
import json
import math
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", info["dtype"]
        b, e = info["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[b:e], dtype=np.float32).copy()).view(info["shape"])
    return out


class Bert(torch.nn.Module):
    def __init__(self, model_dir):
        super().__init__()
        self.c = json.load(open(model_dir + "/config.json"))
        w = load_safetensors(model_dir + "/model.safetensors")
        self.w = {k[5:] if k.startswith("bert.") else k: v for k, v in w.items()}
        self.word_embeddings = torch.nn.Embedding.from_pretrained(self.w["embeddings.word_embeddings.weight"], freeze=True)

    def forward(self, input_ids, token_type_ids, attention_mask, target=None):
        c, w = self.c, self.w
        B, L = input_ids.shape
        H = c["num_attention_heads"]
        D = c["hidden_size"] // H
        eps = c["layer_norm_eps"]
        x = self.word_embeddings(input_ids)
        x = x + w["embeddings.position_embeddings.weight"][:L].unsqueeze(0)
        x = x + F.embedding(token_type_ids, w["embeddings.token_type_embeddings.weight"])
        x = F.layer_norm(x, (x.shape[-1],), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for i in range(c["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            lin = lambda t, n: F.linear(t, w[p + n + ".weight"], w[p + n + ".bias"])
            heads = lambda t: t.view(t.shape[0], L, H, D).transpose(1, 2)
            q, k, v = heads(lin(x, "attention.self.query")), heads(lin(x, "attention.self.key")), heads(lin(x, "attention.self.value"))
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D) + ext, -1)
            ctx = (a @ v).transpose(1, 2).reshape(x.shape[0], L, H * D)
            h1 = F.layer_norm(lin(ctx, "attention.output.dense") + x, (H * D,), w[p + "attention.output.LayerNorm.weight"],
                              w[p + "attention.output.LayerNorm.bias"], eps)
            ff = lin(F.gelu(lin(h1, "intermediate.dense")), "output.dense")
            x = F.layer_norm(ff + h1, (H * D,), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        pooled = torch.tanh(F.linear(x[:, 0], w["pooler.dense.weight"], w["pooler.dense.bias"]))
        return torch.softmax(F.linear(pooled, w["classifier.weight"], w["classifier.bias"]), -1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("ids")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--methods", default="ig,lime,kernel_shap")
    ap.add_argument("--lime-samples", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=1, help="passes over the inputs; prints the median and min")
    ap.add_argument("--batch", type=int, default=64, help="best-batching setting (internal_batch_size / perturbations_per_eval)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    import captum
    from captum.attr import KernelShap, LayerIntegratedGradients, Lime
    from captum._utils.models.linear_model import SkLearnRidge

    model = Bert(args.model).eval()
    rows = [json.loads(l) for l in open(args.ids) if l.strip()]
    inputs = []
    for r in rows:
        ids = torch.tensor([r["ids"]])
        types = torch.tensor([r.get("type_ids") or [0] * len(r["ids"])])
        mask = torch.ones_like(ids)
        inputs.append((ids, types, mask))
    specials = {101, 102}
    print(f"captum {captum.__version__}, torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"{len(inputs)} examples, mean {np.mean([x[0].shape[1] for x in inputs]):.1f} tokens")

    def run(name, fn):
        fn(inputs[0])  # warm-up
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            for x in inputs:
                fn(x)
            times.append(1000 * (time.perf_counter() - t) / len(inputs))
        if args.repeats == 1:
            print(f"| {name} | {times[0]:.2f} |", flush=True)
        else:
            print(f"| {name} | median {np.median(times):.2f} | min {min(times):.2f} |", flush=True)

    with torch.no_grad():
        preds = [int(model(*x).argmax(-1)) for x in inputs]
    target_of = {id(x): p for x, p in zip(inputs, preds)}
    methods = args.methods.split(",")
    if "ig" in methods:
        lig = LayerIntegratedGradients(model, model.word_embeddings)

        def ig(x, ibs):
            ids, types, mask = x
            base = torch.where(torch.isin(ids, torch.tensor(list(specials))), ids, torch.zeros_like(ids))
            lig.attribute(ids, baselines=base, additional_forward_args=(types, mask), target=target_of[id(x)],
                          n_steps=50, method="riemann_trapezoid", internal_batch_size=ibs, return_convergence_delta=True)

        run("captum ig (50 steps, one batch of 50)", lambda x: ig(x, None))
    mask_id = 103

    def perturb_args(x):
        ids, types, mask = x
        fm = torch.arange(ids.shape[1]).unsqueeze(0)
        return dict(inputs=ids, baselines=torch.full_like(ids, mask_id), additional_forward_args=(types, mask),
                    target=target_of[id(x)], feature_mask=fm)

    if "lime" in methods:
        lime = Lime(model, interpretable_model=SkLearnRidge(alpha=1.0))
        for ppe in (1, args.batch):
            run(f"captum lime ({args.lime_samples} samples, perturbations_per_eval {ppe})",
                lambda x: lime.attribute(**perturb_args(x), n_samples=args.lime_samples, perturbations_per_eval=ppe))
    if "kernel_shap" in methods:
        ks = KernelShap(model)

        def evals(x):  # the number of evaluations salient's kernel_shap makes for this input
            d = x[0].shape[1] - 2
            return 2 ** d if d <= 10 else 2 * d + 2048

        for ppe in (1, args.batch):
            run(f"captum kernel_shap (salient's budget, perturbations_per_eval {ppe})",
                lambda x: ks.attribute(**perturb_args(x), n_samples=evals(x), perturbations_per_eval=ppe))


if __name__ == "__main__":
    main()
