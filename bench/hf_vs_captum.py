"""salient against what a user would otherwise run on a real pre-trained model: Captum 0.8 on Hugging
Face's BertForSequenceClassification (IG, 50 points) and HF eager inference (predict throughput), on
the same checkpoint (one fine-tuned from the packaged MiniLM encoder) and the same inputs, in one
process, rounds interleaved so that both see the same machine. Run in .venv-ref:

  .venv-ref/bin/python bench/hf_vs_captum.py MODEL_DIR [--threads 2] [--rounds 3] [--examples 8]

Prints a markdown table of median seconds per example (IG) and sentences per second (predict), and
the ratios. Both sides run the same definition (checked: the scores agree to 1e-4 of the largest).
"""
import argparse
import csv
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
import transformers
from captum.attr import LayerIntegratedGradients

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build" / "python"))
import salient  # noqa: E402


def sst2_dev():
    shared = Path(os.environ.get("SALIENT_SHARED", REPO.parent / "shared"))
    with open(shared / "data" / "sst2_glue" / "dev.tsv", newline="") as f:
        return [r["sentence"] for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--examples", type=int, default=8)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    salient.set_threads(a.threads)
    texts = sst2_dev()
    ig_texts = texts[: a.examples]
    m = salient.load(a.model)
    hf = transformers.BertForSequenceClassification.from_pretrained(a.model, attn_implementation="eager").eval()
    tok = transformers.BertTokenizerFast.from_pretrained(a.model)

    def prob(ids, types, mask):
        return hf(input_ids=ids, token_type_ids=types, attention_mask=mask).logits.softmax(-1)

    lig = LayerIntegratedGradients(prob, hf.bert.embeddings.word_embeddings)

    def captum_ig():
        out = []
        for t in ig_texts:
            e = tok(t, return_tensors="pt")
            ids, types, mask = e["input_ids"], e["token_type_ids"], e["attention_mask"]
            base = torch.where((ids == tok.cls_token_id) | (ids == tok.sep_token_id), ids, torch.full_like(ids, tok.pad_token_id))
            with torch.no_grad():
                target = int(prob(ids, types, mask).argmax())
            attr = lig.attribute(ids, baselines=base, target=target, additional_forward_args=(types, mask), n_steps=50,
                                 method="gausslegendre", internal_batch_size=50)
            out.append(attr.sum(-1)[0].detach().numpy())
        return out

    def salient_ig():
        return [np.asarray(x.scores) for x in salient.explain(m, ig_texts, method="ig", steps=50, rule="gausslegendre",
                                                              batch_size=1)]

    def hf_predict():
        with torch.no_grad():
            for s in range(0, len(texts), 32):
                e = tok(texts[s:s + 32], padding=True, return_tensors="pt")
                hf(**e)

    def salient_predict():
        m.predict(texts, batch_size=32)

    a_scores, b_scores = salient_ig(), captum_ig()  # warm-up, and the same numbers
    worst = max(np.abs(x - y).max() / np.abs(y).max() for x, y in zip(a_scores, b_scores))
    assert worst < 1e-4, f"IG differs from Captum's by {worst:.3g} of the largest score"
    times = {k: [] for k in ("salient_ig", "captum_ig", "salient_predict", "hf_predict")}
    for r in range(a.rounds):
        for name, fn in (("salient_ig", salient_ig), ("captum_ig", captum_ig), ("salient_predict", salient_predict),
                         ("hf_predict", hf_predict)):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), file=sys.stderr)
    med = {k: statistics.median(v) for k, v in times.items()}
    n = len(ig_texts)
    print(f"| measurement ({a.threads} threads, median of {a.rounds} interleaved rounds) | salient | Captum / HF eager | speed-up |")
    print("|---|---|---|---|")
    print(f"| IG, 50 Gauss-Legendre points, s per SST-2 dev sentence ({n}) | {med['salient_ig'] / n:.3f} | "
          f"{med['captum_ig'] / n:.3f} | {med['captum_ig'] / med['salient_ig']:.2f}x |")
    print(f"| predict, SST-2 dev sentences per s ({len(texts)}, batches of 32) | {len(texts) / med['salient_predict']:.0f} | "
          f"{len(texts) / med['hf_predict']:.0f} | {med['hf_predict'] / med['salient_predict']:.2f}x |")
    print(f"IG scores agree with Captum's to {worst:.2g} of the largest", file=sys.stderr)


if __name__ == "__main__":
    main()
