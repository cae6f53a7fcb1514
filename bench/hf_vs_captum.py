"""salient against what a user would otherwise run on a real pre-trained model, on the same checkpoint
(one fine-tuned from the packaged MiniLM encoder: 6 layers x 12 heads, hidden 384) and the same
inputs, in one process, rounds interleaved so that every side sees the same machine:

- IG (50 Gauss-Legendre points): Captum 0.8 LayerIntegratedGradients on Hugging Face's
  BertForSequenceClassification (all 50 points in one batch);
- LIME and KernelSHAP at equal budgets (the same number of model evaluations per input, one token
  per feature, removal by [MASK]): Captum's Lime (ridge surrogate, as salient's) and KernelShap at
  their best batching (perturbations_per_eval 64);
- AttAttr over all layers at 128 tokens (m = 20, left Riemann rule, the authors' definition):
  the straightforward method on HF (per layer, the 20 scaled copies of the layer's attention in one
  batch through a forward hook, full forward + backward), as the authors' code runs it;
- predict throughput: HF eager inference, batches of 32;
- fine-tuning tokens/s: an HF/PyTorch eager loop (AdamW, linear schedule, clipping, dropout 0.1,
  batches of 32, dynamic padding) against `salient train` on the same 1,280 SST-2 sentences.

Every explainer row also gets its FLOP floor: the multiply-adds its definition needs (forward:
2·L·(4H² + 2H·I) + 4·L²·H per layer; an input-gradient backward costs as much again, a training step
three times the forward), divided by the sgemm rate measured in this process before and after
(torch.mm, n = 1536: the same LibTorch and OpenBLAS salient calls). Every pair is checked to compute
the same thing first (IG and AttAttr to 1e-4 of the largest score). Run in .venv-ref (Captum's LIME and
KernelSHAP surrogates need scikit-learn: apt install python3-sklearn):

  .venv-ref/bin/python bench/hf_vs_captum.py MODEL_DIR [--threads 2] [--rounds 3] [--examples 8]
      [--perturbation-examples 4] [--samples 1000] [--sections ig,lime,kernel_shap,attattr,predict,train]

Prints a markdown table (median over rounds) with the speed-ups and time / floor ratios.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build" / "python"))
# First: salient asks OpenBLAS for this CPU's kernels before numpy or torch loads it, so both sides
# run the same, best ones (salient/__init__.py).
import salient  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

SHARED = Path(os.environ.get("SALIENT_SHARED", REPO.parent / "shared"))
ENCODER = REPO / "models" / "pretrained" / "all-minilm-l6-v2"


def glue_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def sgemm_gflops(n=1536):
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(2):
        torch.mm(a, b)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - t0)
    return 2.0 * n ** 3 / statistics.median(times) / 1e9


class Flops:
    def __init__(self, config):
        self.N, self.H, self.I = config.num_hidden_layers, config.hidden_size, config.intermediate_size

    def layer(self, L):
        return 2 * L * (4 * self.H ** 2 + 2 * self.H * self.I) + 4 * L * L * self.H

    def forward(self, L):
        return self.N * self.layer(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--examples", type=int, default=8, help="SST-2 dev sentences for IG")
    ap.add_argument("--perturbation-examples", type=int, default=4, help="SST-2 dev sentences for LIME and KernelSHAP")
    ap.add_argument("--samples", type=int, default=1000, help="LIME / KernelSHAP evaluations per input")
    ap.add_argument("--train-examples", type=int, default=1280)
    ap.add_argument("--sections", default="ig,lime,kernel_shap,attattr,predict,train")
    a = ap.parse_args()
    sections = a.sections.split(",")
    unknown = set(sections) - {"ig", "lime", "kernel_shap", "attattr", "predict", "train"}
    if unknown:
        sys.exit(f"--sections: unknown {sorted(unknown)}")
    torch.set_num_threads(a.threads)
    salient.set_threads(a.threads)
    dev = [r["sentence"] for r in glue_rows(SHARED / "data" / "sst2_glue" / "dev.tsv")]
    m = salient.load(a.model)
    hf = transformers.BertForSequenceClassification.from_pretrained(a.model, attn_implementation="eager").eval()
    tok = transformers.BertTokenizerFast.from_pretrained(a.model)
    flops = Flops(hf.config)
    peaks = [sgemm_gflops()]

    def encode(t):
        e = tok(t, return_tensors="pt")
        return e["input_ids"], e["token_type_ids"], e["attention_mask"]

    def prob(ids, types, mask):
        return hf(input_ids=ids, token_type_ids=types, attention_mask=mask).logits.softmax(-1)

    def target_of(ids, types, mask):
        with torch.no_grad():
            return int(prob(ids, types, mask).argmax())

    pairs = {}   # name -> (salient fn, reference fn, floor FLOPs per call, unit count, unit)
    ig_texts = dev[: a.examples]
    pert_texts = dev[a.examples: a.examples + a.perturbation_examples]
    if "ig" in sections:
        from captum.attr import LayerIntegratedGradients
        lig = LayerIntegratedGradients(prob, hf.bert.embeddings.word_embeddings)

        def captum_ig():
            out = []
            for t in ig_texts:
                ids, types, mask = encode(t)
                base = torch.where((ids == tok.cls_token_id) | (ids == tok.sep_token_id), ids,
                                   torch.full_like(ids, tok.pad_token_id))
                attr = lig.attribute(ids, baselines=base, target=target_of(ids, types, mask),
                                     additional_forward_args=(types, mask), n_steps=50, method="gausslegendre",
                                     internal_batch_size=50)
                out.append(attr.sum(-1)[0].detach().numpy())
            return out

        def salient_ig():
            return [np.asarray(x.scores) for x in salient.explain(m, ig_texts, method="ig", steps=50,
                                                                  rule="gausslegendre", batch_size=1)]

        worst = max(np.abs(x - y).max() / np.abs(y).max() for x, y in zip(salient_ig(), captum_ig()))
        assert worst < 1e-4, f"IG differs from Captum's by {worst:.3g} of the largest score"
        print(f"IG agrees with Captum's to {worst:.2g} of the largest score", file=sys.stderr)
        floor = sum(50 * 2 * flops.forward(encode(t)[0].shape[1]) for t in ig_texts)
        pairs["ig"] = (salient_ig, captum_ig, floor, len(ig_texts),
                       f"IG, 50 Gauss-Legendre points, s per SST-2 dev sentence ({len(ig_texts)})")

    def perturbation_args(t):
        ids, types, mask = encode(t)
        return dict(inputs=ids, baselines=torch.full_like(ids, tok.mask_token_id), additional_forward_args=(types, mask),
                    target=target_of(ids, types, mask), feature_mask=torch.arange(ids.shape[1]).unsqueeze(0))

    if "lime" in sections:
        from captum._utils.models.linear_model import SkLearnRidge
        from captum.attr import Lime
        lime = Lime(prob, interpretable_model=SkLearnRidge(alpha=1.0))

        def captum_lime():
            for t in pert_texts:
                lime.attribute(**perturbation_args(t), n_samples=a.samples, perturbations_per_eval=64)

        def salient_lime():
            salient.explain(m, pert_texts, method="lime", samples=a.samples, features="positions", batch_size=1)

        floor = sum(a.samples * flops.forward(encode(t)[0].shape[1]) for t in pert_texts)
        pairs["lime"] = (salient_lime, captum_lime, floor, len(pert_texts),
                         f"LIME, {a.samples} samples, s per SST-2 dev sentence ({len(pert_texts)})")
    if "kernel_shap" in sections:
        from captum.attr import KernelShap
        ks = KernelShap(prob)

        def evaluations(t):  # salient enumerates every coalition up to exact_max = 10 tokens
            d = encode(t)[0].shape[1] - 2
            return 2 ** d if d <= 10 else a.samples

        budgets = {t: evaluations(t) for t in pert_texts}  # outside the timed calls

        def captum_shap():
            for t in pert_texts:
                ks.attribute(**perturbation_args(t), n_samples=budgets[t], perturbations_per_eval=64)

        def salient_shap():
            salient.explain(m, pert_texts, method="kernel_shap", samples=a.samples, batch_size=1)

        floor = sum(budgets[t] * flops.forward(encode(t)[0].shape[1]) for t in pert_texts)
        pairs["kernel_shap"] = (salient_shap, captum_shap, floor, len(pert_texts),
                                f"KernelSHAP, the same evaluations, s per SST-2 dev sentence ({len(pert_texts)})")
    if "attattr" in sections:
        # A movie review cut to 128 word pieces (126 and [CLS], [SEP]).
        review = (SHARED / "data" / "eraser_movies" / "docs" / sorted(os.listdir(SHARED / "data" / "eraser_movies" / "docs"))[0]).read_text()
        ids = tok(review, truncation=True, max_length=128)["input_ids"]
        text128 = tok.decode(ids[1:-1])
        assert len(tok(text128)["input_ids"]) == 128
        layers = hf.bert.encoder.layer
        steps = 20

        def hf_attattr():
            ids, types, mask = encode(text128)
            target = target_of(ids, types, mask)
            with torch.no_grad():
                full = hf(input_ids=ids, token_type_ids=types, attention_mask=mask, output_attentions=True).attentions
            out = []
            alphas = torch.arange(steps, dtype=torch.float32) / steps  # the authors' left Riemann points
            batch = [x.repeat(steps, 1) for x in (ids, types, mask)]
            for l, layer in enumerate(layers):
                held = {}

                def scale(_module, _inputs, output):
                    s = (alphas.view(-1, 1, 1, 1) * output.detach()).requires_grad_(True)
                    held["s"] = s
                    return s

                handle = layer.attention.self.dropout.register_forward_hook(scale)
                try:
                    p = prob(*batch)[:, target].sum()
                    p.backward()
                finally:
                    handle.remove()
                out.append((full[l][0] * held["s"].grad.sum(0) / steps).numpy())
            return np.stack(out)

        def salient_attattr():
            return np.asarray(salient.attattr.attribute(m, text128, m=steps, rule="left")["layers"])

        ours, ref = salient_attattr(), hf_attattr()
        worst = np.abs(ours - ref).max() / np.abs(ref).max()
        assert worst < 1e-4, f"AttAttr differs from the straightforward method on HF by {worst:.3g} of the largest"
        print(f"AttAttr agrees with the straightforward method on HF to {worst:.2g} of the largest", file=sys.stderr)
        N = hf.config.num_hidden_layers
        floor = sum(steps * (N - l) * 2 * flops.layer(128) for l in range(N))  # layers below l reused
        pairs["attattr"] = (salient_attattr, hf_attattr, floor, 1,
                            "AttAttr, all 6 layers x 12 heads, m = 20, s per 128-token review")
    if "predict" in sections:
        def hf_predict():
            with torch.no_grad():
                for s in range(0, len(dev), 32):
                    hf(**tok(dev[s:s + 32], padding=True, return_tensors="pt"))

        def salient_predict():
            m.predict(dev, batch_size=32)

        floor = sum(flops.forward(len(x)) for x in tok(dev)["input_ids"])
        pairs["predict"] = (salient_predict, hf_predict, floor, len(dev),
                            f"predict, SST-2 dev sentences ({len(dev)}, batches of 32)")

    times = {k: ([], []) for k in pairs}
    for r in range(a.rounds):
        for name, (ours, ref, *_rest) in pairs.items():
            for i, fn in enumerate((ours, ref)):
                t0 = time.perf_counter()
                fn()
                times[name][i].append(time.perf_counter() - t0)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[0][-1]:.2f}/{v[1][-1]:.2f} s" for k, v in times.items()),
              file=sys.stderr)

    train_row = None
    if "train" in sections:
        train_row = fine_tuning(a, tok, flops)
    peaks.append(sgemm_gflops())
    peak = statistics.mean(peaks)
    print(f"\n{a.threads} threads; OpenBLAS {salient._salient.openblas_core()} kernels, sgemm {peaks[0]:.1f} GFLOP/s before, "
          f"{peaks[-1]:.1f} after; torch {torch.__version__}, "
          f"transformers {transformers.__version__}; median of {a.rounds} interleaved rounds\n")
    print("| measurement | salient | Captum / HF eager | speed-up | salient / FLOP floor | reference / floor |")
    print("|---|---|---|---|---|---|")
    for name, (_o, _r, floor, units, label) in pairs.items():
        ours, ref = (statistics.median(v) for v in times[name])
        floor_s = floor / (peak * 1e9)
        if name == "predict":
            cells = f"{units / ours:.0f} /s | {units / ref:.0f} /s"
        else:
            cells = f"{ours / units:.3f} s | {ref / units:.3f} s"
        print(f"| {label} | {cells} | {ref / ours:.2f}x | {ours / floor_s:.2f} | {ref / floor_s:.2f} |")
    if train_row:
        ours_tps, ref_tps, tokens, floor = train_row
        floor_tps = tokens / (floor / (peak * 1e9))
        print(f"| fine-tuning, tokens/s ({a.train_examples} SST-2 sentences, {tokens} tokens, batches of 32) | "
              f"{ours_tps:.0f} /s | {ref_tps:.0f} /s | {ours_tps / ref_tps:.2f}x | {floor_tps / ours_tps:.2f} | "
              f"{floor_tps / ref_tps:.2f} |")


def fine_tuning(a, tok, flops):
    """One epoch over the same sentences from the packaged encoder: salient train (a subprocess, its
    epoch's seconds from training.json) against an HF eager loop with the same settings."""
    rows = glue_rows(SHARED / "data" / "sst2_glue" / "train.tsv")
    rng = np.random.default_rng(0)
    rows = [rows[i] for i in rng.choice(len(rows), a.train_examples, replace=False)]
    texts, labels = [r["sentence"] for r in rows], [int(r["label"]) for r in rows]
    lengths = [len(x) for x in tok(texts, truncation=True, max_length=64)["input_ids"]]
    tokens = sum(lengths)
    floor = sum(3 * flops.forward(L) for L in lengths)
    with tempfile.TemporaryDirectory() as tmp:
        def write_jsonl(name, n):
            path = Path(tmp) / name
            path.write_text("".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in zip(texts[:n], labels[:n])))
            return path

        train, devf = write_jsonl("train.jsonl", len(texts)), write_jsonl("dev.jsonl", 8)
        subprocess.run([str(REPO / "build" / "salient"), "--quiet", "--threads", str(a.threads), "train", "--init",
                        str(ENCODER), "--train", str(train), "--dev", str(devf), "--epochs", "1", "--batch-size", "32",
                        "--max-length", "64", "--lr", "1e-4", "--seed", "1", "--out", str(Path(tmp) / "out")],
                       check=True, capture_output=True, text=True)
        ours_s = json.loads((Path(tmp) / "out" / "training.json").read_text())["history"][0]["seconds"]

    torch.manual_seed(1)
    model = transformers.BertForSequenceClassification.from_pretrained(str(ENCODER), num_labels=2,
                                                                       attn_implementation="eager").train()
    decay = [p for n, p in model.named_parameters() if not n.endswith("bias") and "LayerNorm" not in n]
    rest = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}], lr=1e-4)
    order = rng.permutation(len(texts))
    batches = [order[s:s + 32] for s in range(0, len(texts), 32)]
    sched = transformers.get_linear_schedule_with_warmup(opt, int(0.06 * len(batches)), len(batches))
    encoded = [(tok([texts[i] for i in b], truncation=True, max_length=64, padding=True, return_tensors="pt"),
                torch.tensor([labels[i] for i in b])) for b in batches]
    t0 = time.perf_counter()
    for enc, y in encoded:
        loss = model(**enc, labels=y).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
    ref_s = time.perf_counter() - t0
    print(f"fine-tuning: salient {ours_s:.1f} s (its epoch, with an 8-sentence dev pass), HF eager {ref_s:.1f} s",
          file=sys.stderr)
    return tokens / ours_s, tokens / ref_s, tokens, floor


if __name__ == "__main__":
    main()
