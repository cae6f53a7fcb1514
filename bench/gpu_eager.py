#!/usr/bin/env python3
"""bench_gpu's work in PyTorch eager, on the same GPU, model and inputs, and the comparison.

The model is the BERT-base-shaped checkpoint that `bench_gpu --save-model DIR` wrote (Hugging Face
names and config). Two PyTorch references run it:
  eager  a plain PyTorch BERT written here (the same operations as salient's forward), which also
         runs Self-Attention Attribution with the same reuse (layers below once, m points batched
         at the attributed layer) and IG with the same rule and baseline;
  hf     transformers' BertForSequenceClassification (eager and sdpa attention), forward only.
Each time is the median of --repeats synchronised calls after 3 warm-ups, as bench_gpu's.
    gpu_eager.py --model DIR --salient bench_gpu.json [--repeats N] [--json OUT]
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

DEV = torch.device("cuda")


def timed(fn, repeats):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def peak_mib(fn):
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / 2**20


def token_ids(batch, length):
    ids = [[101 if t == 0 else 102 if t == length - 1 else 1000 + (t * 7919 + b * 104729) % 20000
            for t in range(length)] for b in range(batch)]
    return torch.tensor(ids, device=DEV)


class EagerBert:
    def __init__(self, model_dir):
        cfg = json.load(open(f"{model_dir}/config.json"))
        self.hidden, self.heads = cfg["hidden_size"], cfg["num_attention_heads"]
        self.n_layers, self.eps = cfg["num_hidden_layers"], cfg.get("layer_norm_eps", 1e-12)
        w = {k: v.to(DEV, torch.float32) for k, v in load_file(f"{model_dir}/model.safetensors").items()}
        e = "bert.embeddings."
        self.word, self.pos = w[e + "word_embeddings.weight"], w[e + "position_embeddings.weight"]
        self.type = w[e + "token_type_embeddings.weight"]
        self.ln = (w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"])
        self.layers = []
        for i in range(self.n_layers):
            p = f"bert.encoder.layer.{i}."
            g = lambda n: (w[p + n + ".weight"], w[p + n + ".bias"])
            self.layers.append(dict(q=g("attention.self.query"), k=g("attention.self.key"), v=g("attention.self.value"),
                                    o=g("attention.output.dense"), ln1=g("attention.output.LayerNorm"),
                                    i=g("intermediate.dense"), out=g("output.dense"), ln2=g("output.LayerNorm")))
        self.pool = (w["bert.pooler.dense.weight"], w["bert.pooler.dense.bias"])
        self.cls = (w["classifier.weight"], w["classifier.bias"])

    def embed(self, ids=None, words=None):
        x = self.word[ids] if words is None else words
        L = x.shape[1]
        x = x + self.pos[:L] + self.type[0]
        return F.layer_norm(x, (self.hidden,), *self.ln, self.eps)

    def heads_of(self, t):
        B, L, _ = t.shape
        return t.view(B, L, self.heads, -1).transpose(1, 2)

    def attention(self, i, h):
        l = self.layers[i]
        q, k, v = (self.heads_of(F.linear(h, *l[n])) for n in "qkv")
        p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1)
        return p, v

    def finish(self, i, h, p, v):
        l = self.layers[i]
        ctx = (p @ v).transpose(1, 2).reshape(p.shape[0], p.shape[2], self.hidden)
        h1 = F.layer_norm(F.linear(ctx, *l["o"]) + h, (self.hidden,), *l["ln1"], self.eps)
        ff = F.linear(F.gelu(F.linear(h1, *l["i"])), *l["out"])
        return F.layer_norm(ff + h1, (self.hidden,), *l["ln2"], self.eps)

    def layer(self, i, h):
        p, v = self.attention(i, h)
        return self.finish(i, h, p, v)

    def classify(self, h):
        return F.linear(torch.tanh(F.linear(h[:, 0], *self.pool)), *self.cls)

    def logits(self, ids=None, words=None):
        h = self.embed(ids, words)
        for i in range(self.n_layers):
            h = self.layer(i, h)
        return self.classify(h)

    def attattr(self, ids, m=20):
        """Every layer, left rule α_k = k/m (the authors'), F = softmax probability of the prediction."""
        with torch.no_grad():
            hs, atts, vs = [self.embed(ids)], [], []
            for i in range(self.n_layers):
                p, v = self.attention(i, hs[-1])
                atts.append(p)
                vs.append(v)
                hs.append(self.finish(i, hs[-1], p, v))
            target = int(self.classify(hs[-1]).argmax(-1)[0])
        alphas = torch.arange(m, device=DEV, dtype=torch.float32).view(m, 1, 1, 1) / m
        out = []
        for l in range(self.n_layers):
            scaled = (alphas * atts[l]).requires_grad_(True)
            h = self.finish(l, hs[l].expand(m, -1, -1), scaled, vs[l].expand(m, -1, -1, -1))
            for j in range(l + 1, self.n_layers):
                h = self.layer(j, h)
            f = torch.softmax(self.classify(h), -1)[:, target].sum()
            (g,) = torch.autograd.grad(f, scaled)
            out.append(atts[l][0] * g.sum(0) / m)
        return out, target

    def ig(self, ids, target, steps=50, pad_id=0):
        """Captum's riemann_trapezoid points and weights, [PAD] baseline on non-structural tokens,
        F = softmax probability of `target`; token score = Σ_e attribution."""
        x = self.word[ids]
        base_ids = ids.clone()
        base_ids[:, 1:-1] = pad_id
        b = self.word[base_ids]
        alphas = torch.linspace(0, 1, steps, device=DEV)
        w = torch.full((steps,), 1.0 / (steps - 1), device=DEV)
        w[0] = w[-1] = 0.5 / (steps - 1)
        pts = (b + alphas.view(-1, 1, 1) * (x - b)).requires_grad_(True)
        f = torch.softmax(self.logits(words=pts), -1)[:, target].sum()
        (g,) = torch.autograd.grad(f, pts)
        return ((g * w.view(-1, 1, 1)).sum(0, keepdim=True) * (x - b)).sum(-1)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--salient", required=True, help="bench_gpu --json output")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--json")
    a = ap.parse_args()
    sal = json.load(open(a.salient))
    model = EagerBert(a.model)
    hf = {}
    try:
        from transformers import BertForSequenceClassification
        for impl in ("eager", "sdpa"):
            hf[impl] = BertForSequenceClassification.from_pretrained(a.model, attn_implementation=impl).to(DEV).eval()
    except Exception as e:  # reported, the eager reference still runs
        print(f"transformers unavailable: {e}", file=sys.stderr)
    out, rows = {"torch": torch.__version__}, []
    for mode, prec in (("fp32", "highest"), ("tf32", "high")):
        torch.set_float32_matmul_precision(prec)
        s = sal[mode]
        for r in s["forward"]:
            ids = token_ids(r["batch"], r["length"])
            with torch.no_grad():
                t = timed(lambda: model.logits(ids), a.repeats)
                mib = peak_mib(lambda: model.logits(ids))
                hf_t = {k: timed(lambda: m(input_ids=ids).logits, a.repeats) for k, m in hf.items()}
            name = f"forward L={r['length']} B={r['batch']}"
            rows.append((mode, name, r["seconds"], t, hf_t.get("eager"), hf_t.get("sdpa"), r["peak_mib"], mib))
            out.setdefault(mode, {}).setdefault("forward", []).append(dict(r, eager_seconds=t, eager_peak_mib=mib,
                                                                           hf_seconds=hf_t))
        ids = token_ids(1, 128)
        ref = [x for x in s["attattr"] if x["max_batch_mb"] >= 2048][0]
        t = timed(lambda: model.attattr(ids), max(3, a.repeats // 2))
        mib = peak_mib(lambda: model.attattr(ids))
        att, target = model.attattr(ids)
        sums = [float(x.sum()) for x in att]
        diff = max(abs(x - y) / max(1e-12, abs(y)) for x, y in zip(ref["attribution_sums"], sums))
        rows.append((mode, "AttAttr 12 layers L=128 m=20", ref["seconds"], t, None, None, ref["peak_mib"], mib))
        out[mode]["attattr"] = dict(seconds=t, peak_mib=mib, sums=sums, target=target, max_rel_diff_of_sums=diff)
        print(f"{mode}: AttAttr layer sums, salient vs eager: worst relative difference {diff:.2e} "
              f"(targets {ref['target']} / {target})")
        ig_ref = [x for x in s["ig"] if x["internal_batch"] == 64][0]
        t = timed(lambda: model.ig(ids, 1), max(3, a.repeats // 2))
        mib = peak_mib(lambda: model.ig(ids, 1))
        ig_sum = float(model.ig(ids, 1).sum())
        rows.append((mode, "IG L=128 50 steps", ig_ref["seconds"], t, None, None, ig_ref["peak_mib"], mib))
        out[mode]["ig"] = dict(seconds=t, peak_mib=mib, score_sum=ig_sum)
        print(f"{mode}: IG score sums, salient {ig_ref['score_sum']:.6g} vs eager {ig_sum:.6g}")
    torch.set_float32_matmul_precision("highest")
    print("\n| precision | workload | salient s | PyTorch eager s | eager / salient | HF eager s | HF sdpa s "
          "| salient peak MiB | eager peak MiB |\n|---|---|---|---|---|---|---|---|---|")
    f = lambda v: "" if v is None else f"{v:.5f}"
    for mode, name, st, et, he, hs, sm, em in rows:
        print(f"| {mode} | {name} | {st:.5f} | {et:.5f} | {et / st:.2f} | {f(he)} | {f(hs)} | {sm:.0f} | {em:.0f} |")
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
