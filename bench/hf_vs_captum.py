"""salient against what a user would otherwise run on a real pre-trained model, on the same checkpoint
(one fine-tuned from the packaged MiniLM encoder: 6 layers x 12 heads, hidden 384) and the same
inputs. salient runs in this process; each peer stack runs bench/peer_side.py in a process of its
own, started with that stack's Python (--peer, repeatable: PyPI's current torch / transformers /
Captum in .venv-bench, scripts/bench_env.sh; Debian's torch 1.13 with transformers 4.44 and Captum
0.8 in .venv-ref, scripts/reference_env.sh), so no library is shared between the sides. Rounds are
interleaved (salient, then each peer, per measurement) so that every side sees the same machine;
each side times its own calls.

- IG (50 Gauss-Legendre points): Captum's LayerIntegratedGradients on Hugging Face's
  BertForSequenceClassification (all 50 points in one batch);
- LIME and KernelSHAP at equal budgets (the same number of model evaluations per input, one token
  per feature, removal by [MASK]): Captum's Lime (ridge surrogate, as salient's) and KernelShap at
  their best batching (perturbations_per_eval 64);
- AttAttr over all layers at 128 tokens (m = 20, left Riemann rule, the authors' definition):
  the straightforward method on HF (per layer, the 20 scaled copies of the layer's attention in one
  batch, full forward + backward), as the authors' code runs it;
- predict throughput: HF eager inference, batches of 32;
- fine-tuning tokens/s: an HF/PyTorch eager loop (AdamW, linear schedule, clipping, dropout 0.1,
  batches of 32, dynamic padding) against `salient train` on the same 1,280 SST-2 sentences.

Every row also gets its FLOP floor: the multiply-adds its definition needs (forward:
2·L·(4H² + 2H·I) + 4·L²·H per layer; an input-gradient backward costs as much again, a training step
three times the forward), divided by the machine's best sgemm rate (torch.mm, n = 1536, measured
before and after in salient's process, whose LibTorch and OpenBLAS salient calls, and in each peer's,
whose BLAS may be another: PyPI's torch brings MKL). Every pair is checked to compute the same thing
first (IG and AttAttr to 1e-4 of the largest score). salient's side runs under Debian's python3 with
build/python (Captum's LIME surrogate in the peer needs scikit-learn):

  python3 bench/hf_vs_captum.py MODEL_DIR [--peer .venv-bench/bin/python] [--peer .venv-ref/bin/python]
      [--threads 2] [--rounds 3] [--examples 8] [--perturbation-examples 4] [--samples 1000]
      [--sections ig,lime,kernel_shap,attattr,predict,train]

Without --peer: every one of .venv-bench and .venv-ref that exists. Prints a markdown table (median
over rounds) with the speed-ups and time / floor ratios.
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

from blas_rate import sgemm_gflops  # noqa: E402

SHARED = Path(os.environ.get("SALIENT_SHARED", REPO.parent / "shared"))
ENCODER = REPO / "models" / "pretrained" / "all-minilm-l6-v2"
SECTIONS = ["ig", "lime", "kernel_shap", "attattr", "predict", "train"]


def glue_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


class Flops:
    def __init__(self, config):
        self.N, self.H, self.I = config["num_hidden_layers"], config["hidden_size"], config["intermediate_size"]

    def layer(self, L):
        return 2 * L * (4 * self.H ** 2 + 2 * self.H * self.I) + 4 * L * L * self.H

    def forward(self, L):
        return self.N * self.layer(L)


class Peer:
    """One peer stack: bench/peer_side.py under another Python, spoken to in JSON lines."""

    def __init__(self, python, setup):
        self.python = python
        self.proc = subprocess.Popen([python, str(REPO / "bench" / "peer_side.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=REPO)
        reply = self.ask({"setup": setup})
        self.versions, self.sgemm = reply["versions"], [reply["sgemm_gflops"]]
        v = self.versions
        self.name = f"torch {v['torch']} ({v['blas']}), transformers {v['transformers']}, Captum {v['captum']}"

    def ask(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"--peer {self.python}: bench/peer_side.py exited (rc {self.proc.wait()})")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def text_of_pieces(m, text, pieces):
    """The longest prefix of `text` that tokenizes to exactly `pieces` word pieces ([CLS], [SEP] included)."""
    offsets = m.tokenize([text])[0]["offsets"]
    for end in range(pieces - 2, 0, -1):
        prefix = text[: offsets[end][1]]
        if len(m.tokenize([prefix])[0]["ids"]) == pieces:
            return prefix
    sys.exit(f"no prefix of the review has {pieces} word pieces")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--peer", action="append", help="a Python with the peer stack (repeatable)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--examples", type=int, default=8, help="SST-2 dev sentences for IG")
    ap.add_argument("--perturbation-examples", type=int, default=4, help="SST-2 dev sentences for LIME and KernelSHAP")
    ap.add_argument("--samples", type=int, default=1000, help="LIME / KernelSHAP evaluations per input")
    ap.add_argument("--train-examples", type=int, default=1280)
    ap.add_argument("--sections", default=",".join(SECTIONS))
    a = ap.parse_args()
    sections = a.sections.split(",")
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        sys.exit(f"--sections: unknown {sorted(unknown)}")
    pythons = a.peer or [str(REPO / v / "bin" / "python") for v in (".venv-bench", ".venv-ref")
                         if (REPO / v / "bin" / "python").exists()]
    for py in pythons:
        if not Path(py).exists():
            sys.exit(f"--peer: {py} not found (scripts/bench_env.sh, scripts/reference_env.sh make them)")
    if not pythons:
        sys.exit("--peer: no peer stack (scripts/bench_env.sh makes .venv-bench)")
    torch.set_num_threads(a.threads)
    salient.set_threads(a.threads)
    dev = [r["sentence"] for r in glue_rows(SHARED / "data" / "sst2_glue" / "dev.tsv")]
    m = salient.load(a.model)
    flops = Flops(json.loads((Path(a.model) / "config.json").read_text()))
    sgemm = [sgemm_gflops()]

    def length(t):
        return len(m.tokenize([t])[0]["ids"])

    ig_texts = dev[: a.examples]
    pert_texts = dev[a.examples: a.examples + a.perturbation_examples]

    def shap_evaluations(t):  # salient enumerates every coalition up to exact_max = 10 tokens
        d = length(t) - 2
        return 2 ** d if d <= 10 else a.samples

    docs = SHARED / "data" / "eraser_movies" / "docs"
    text128 = text_of_pieces(m, (docs / sorted(os.listdir(docs))[0]).read_text(), 128)
    setup = {"model": str(Path(a.model).resolve()), "threads": a.threads, "sections": sections, "dev": dev,
             "ig_texts": ig_texts, "perturbation_texts": pert_texts, "samples": a.samples,
             "shap_budgets": [shap_evaluations(t) for t in pert_texts], "text128": text128}
    peers = [Peer(py, setup) for py in pythons]
    tmp = tempfile.TemporaryDirectory()

    def peer_call(peer, name, save=None):
        return lambda: peer.ask({"run": name, "save": save})["seconds"]

    def timed(fn):
        def run():
            t0 = time.perf_counter()
            fn()
            return time.perf_counter() - t0
        return run

    def agree(ours, name, differs, agrees):
        """Each peer's result of `name` within 1e-4 of salient's largest score, before any timing."""
        for i, p in enumerate(peers):
            path = f"{tmp.name}/{name}{i}.npy"
            peer_call(p, name, path)()
            ref = np.load(path)
            worst = np.abs(ours - ref).max() / np.abs(ref).max()
            assert worst < 1e-4, f"{differs} ({p.name}) by {worst:.3g} of the largest score"
            print(f"{agrees} ({p.name}) to {worst:.2g} of the largest score", file=sys.stderr)

    rows = {}   # name -> (salient fn, [peer fns], floor FLOPs, unit count, label); each fn returns seconds
    if "ig" in sections:
        def salient_ig():
            return np.concatenate([np.asarray(x.scores) for x in salient.explain(
                m, ig_texts, method="ig", steps=50, rule="gausslegendre", batch_size=1)])

        agree(salient_ig(), "ig", "IG differs from Captum's", "IG agrees with Captum's")
        floor = sum(50 * 2 * flops.forward(length(t)) for t in ig_texts)
        rows["ig"] = (timed(salient_ig), [peer_call(p, "ig") for p in peers], floor, len(ig_texts),
                      f"IG, 50 Gauss-Legendre points, s per SST-2 dev sentence ({len(ig_texts)})")
    if "lime" in sections:
        def salient_lime():
            salient.explain(m, pert_texts, method="lime", samples=a.samples, features="positions", batch_size=1)

        floor = sum(a.samples * flops.forward(length(t)) for t in pert_texts)
        rows["lime"] = (timed(salient_lime), [peer_call(p, "lime") for p in peers], floor, len(pert_texts),
                        f"LIME, {a.samples} samples, s per SST-2 dev sentence ({len(pert_texts)})")
    if "kernel_shap" in sections:
        def salient_shap():
            salient.explain(m, pert_texts, method="kernel_shap", samples=a.samples, batch_size=1)

        floor = sum(b * flops.forward(length(t)) for t, b in zip(pert_texts, setup["shap_budgets"]))
        rows["kernel_shap"] = (timed(salient_shap), [peer_call(p, "kernel_shap") for p in peers], floor,
                               len(pert_texts),
                               f"KernelSHAP, the same evaluations, s per SST-2 dev sentence ({len(pert_texts)})")
    if "attattr" in sections:
        steps = 20

        def salient_attattr():
            return np.asarray(salient.attattr.attribute(m, text128, m=steps, rule="left")["layers"])

        agree(salient_attattr(), "attattr", "AttAttr differs from the straightforward method on HF",
              "AttAttr agrees with the straightforward method on HF")
        floor = sum(steps * (flops.N - l) * 2 * flops.layer(128) for l in range(flops.N))  # layers below l reused
        rows["attattr"] = (timed(salient_attattr), [peer_call(p, "attattr") for p in peers], floor, 1,
                           f"AttAttr, all {flops.N} layers, m = {steps}, s per 128-token review")
    if "predict" in sections:
        def salient_predict():
            m.predict(dev, batch_size=32)

        floor = sum(flops.forward(length(t)) for t in dev)
        rows["predict"] = (timed(salient_predict), [peer_call(p, "predict") for p in peers], floor, len(dev),
                           f"predict, SST-2 dev sentences ({len(dev)}, batches of 32)")

    times = {k: [[] for _ in range(1 + len(peers))] for k in rows}
    for r in range(a.rounds):
        for name, (ours, refs, *_rest) in rows.items():
            for i, fn in enumerate([ours] + refs):
                times[name][i].append(fn())
        print(f"round {r + 1}: " + ", ".join(f"{k} " + "/".join(f"{x[-1]:.2f}" for x in v) + " s"
                                             for k, v in times.items()), file=sys.stderr)

    train_row = fine_tuning(a, m, peers, flops) if "train" in sections else None
    sgemm.append(sgemm_gflops())
    for p in peers:
        p.sgemm.append(p.ask({"sgemm": True})["sgemm_gflops"])
        p.close()
    peak = max(statistics.mean(x) for x in [sgemm] + [p.sgemm for p in peers])
    print(f"\n{a.threads} threads; median of {a.rounds} interleaved rounds; sgemm (n = 1536) GFLOP/s before/after: "
          f"salient's OpenBLAS ({salient._salient.openblas_core()} kernels) {sgemm[0]:.0f}/{sgemm[-1]:.0f}"
          + "".join(f"; peer {i + 1}'s {p.versions['blas']} {p.sgemm[0]:.0f}/{p.sgemm[-1]:.0f}"
                    for i, p in enumerate(peers))
          + f"; the floor uses the best, {peak:.0f}\n")
    for i, p in enumerate(peers):
        print(f"peer {i + 1}: {p.name} ({p.python})")
    print()
    head = " | ".join(f"peer {i + 1}" for i in range(len(peers)))
    print(f"| measurement | salient | {head} | speed-up | salient / FLOP floor | "
          + " | ".join(f"peer {i + 1} / floor" for i in range(len(peers))) + " |")
    print("|---" * (4 + 2 * len(peers)) + "|")
    for name, (_o, _r, floor, units, label) in rows.items():
        med = [statistics.median(v) for v in times[name]]
        floor_s = floor / (peak * 1e9)
        cells = [f"{units / t:.0f} /s" if name == "predict" else f"{t / units:.3f} s" for t in med]
        speed = " / ".join(f"{t / med[0]:.2f}x" for t in med[1:])
        print(f"| {label} | {' | '.join(cells)} | {speed} | " + " | ".join(f"{t / floor_s:.2f}" for t in med) + " |")
    if train_row:
        tokens, floor, seconds = train_row
        floor_s = floor / (peak * 1e9)
        cells = [f"{tokens / s:.0f} /s" for s in seconds]
        speed = " / ".join(f"{s / seconds[0]:.2f}x" for s in seconds[1:])
        print(f"| fine-tuning, tokens/s ({a.train_examples} SST-2 sentences, {tokens} tokens, batches of 32) | "
              f"{' | '.join(cells)} | {speed} | " + " | ".join(f"{s / floor_s:.2f}" for s in seconds) + " |")


def fine_tuning(a, m, peers, flops):
    """One epoch over the same sentences from the packaged encoder: salient train (a subprocess, its
    epoch's seconds from training.json) against each peer's HF eager loop with the same settings."""
    rows = glue_rows(SHARED / "data" / "sst2_glue" / "train.tsv")
    rng = np.random.default_rng(0)
    rows = [rows[i] for i in rng.choice(len(rows), a.train_examples, replace=False)]
    texts, labels = [r["sentence"] for r in rows], [int(r["label"]) for r in rows]
    lengths = [len(x["ids"]) for x in m.tokenize(texts, max_length=64)]
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
    order = [int(i) for i in rng.permutation(len(texts))]
    job = {"encoder": str(ENCODER), "seed": 1, "texts": texts, "labels": labels, "order": order}
    seconds = [ours_s] + [p.ask({"train": job})["seconds"] for p in peers]
    print("fine-tuning: salient {:.1f} s (its epoch, with an 8-sentence dev pass), ".format(ours_s)
          + ", ".join(f"peer {i + 1} {s:.1f} s" for i, s in enumerate(seconds[1:])), file=sys.stderr)
    return tokens, floor, seconds


if __name__ == "__main__":
    main()
