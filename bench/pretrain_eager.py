#!/usr/bin/env python3
"""MLM pre-training steps in PyTorch eager (Debian's python3-torch), the same work as
`salient pretrain` at the same shape: BERT encoder (post-LN, exact GELU, dropout 0.1), packed
sequences of --max-length pieces, 15% of the ordinary pieces predicted (80/10/10), the MLM head
(dense, GELU, LayerNorm, decoder tied to the word embeddings) only at the predicted positions,
AdamW (no decay on biases/LayerNorm), gradient clipping at 1.
Throughput (random ids; prints tokens/s over the timed steps):
    pretrain_eager.py [--layers 4 --hidden 256 --heads 8 --intermediate 1024 --max-length 128
                       --batch-size 32 --vocab-size 30522 --steps 30 --warmup 2 --threads 2]
Learning curve (an independent check of salient pretrain's training on the same text: lines of
whole-word pieces of --vocab, packed as [CLS] pieces [SEP]; 200 sequences held out with fixed
masking; 6% warmup then linear decay to --steps; prints step, held-out loss and accuracy):
    pretrain_eager.py --corpus FILE --vocab vocab.txt --steps 2000 --lr 1e-3 --eval-every 250 ...
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser()
    for name, default in (("layers", 4), ("hidden", 256), ("heads", 8), ("intermediate", 1024), ("max-length", 128),
                          ("batch-size", 32), ("vocab-size", 30522), ("steps", 30), ("warmup", 2), ("threads", 2),
                          ("eval-every", 250)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--corpus", help="learning-curve mode: a text file of whitespace-separated vocabulary pieces")
    ap.add_argument("--vocab", help="vocab.txt for --corpus")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    H, V, L, B, nh = a.hidden, a.vocab_size, a.max_length, a.batch_size, a.heads
    data = None
    if a.corpus:
        pieces = [line.rstrip("\n") for line in open(a.vocab, encoding="utf-8")]
        V = len(pieces)
        index = {p: i for i, p in enumerate(pieces)}
        ids = [index[w] for line in open(a.corpus, encoding="utf-8") for w in line.split()]
        data = torch.tensor([[101] + ids[s:s + L - 2] + [102] for s in range(0, len(ids) - (L - 2), L - 2)])
    p = lambda *s: torch.nn.Parameter(torch.randn(*s) * 0.02)
    z = lambda *s: torch.nn.Parameter(torch.zeros(*s))
    o = lambda *s: torch.nn.Parameter(torch.ones(*s))
    emb = dict(word=p(V, H), pos=p(L, H), type=p(2, H), ln_w=o(H), ln_b=z(H))
    layers = [dict(qkv_w=p(3 * H, H), qkv_b=z(3 * H), o_w=p(H, H), o_b=z(H), ln1_w=o(H), ln1_b=z(H),
                   i_w=p(a.intermediate, H), i_b=z(a.intermediate), out_w=p(H, a.intermediate), out_b=z(H),
                   ln2_w=o(H), ln2_b=z(H)) for _ in range(a.layers)]
    head = dict(d_w=p(H, H), d_b=z(H), ln_w=o(H), ln_b=z(H), bias=z(V))
    named = [(k, v) for d in [emb, head] + layers for k, v in d.items()]
    decay = [v for k, v in named if not (k.endswith("_b") or k.startswith("ln") or "ln" in k or k == "bias")]
    plain = [v for k, v in named if (k.endswith("_b") or k.startswith("ln") or "ln" in k or k == "bias")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": plain, "weight_decay": 0.0}], lr=a.lr)
    params = decay + plain

    def masked(ids, gen=None):
        chosen = torch.rand(ids.shape, generator=gen) < 0.15
        chosen[:, 0] = chosen[:, -1] = False
        labels = ids[chosen]
        r = torch.rand(int(chosen.sum()), generator=gen)
        inp = ids.clone()
        noise = torch.randint(1000, V, labels.shape, generator=gen)
        inp[chosen] = torch.where(r < 0.8, torch.full_like(labels, 103), torch.where(r < 0.9, noise, labels))
        return inp, chosen, labels

    def logits(inp, chosen, training):
        n = inp.size(0)
        drop = lambda x: F.dropout(x, 0.1, training)
        x = emb["word"][inp] + emb["pos"][:L] + emb["type"][0]
        x = drop(F.layer_norm(x, (H,), emb["ln_w"], emb["ln_b"], 1e-12))
        for l in layers:
            q, k, v = F.linear(x, l["qkv_w"], l["qkv_b"]).view(n, L, 3, nh, H // nh).permute(2, 0, 3, 1, 4)
            att = drop(torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(H // nh), -1))
            ctx = (att @ v).transpose(1, 2).reshape(n, L, H)
            x = F.layer_norm(drop(F.linear(ctx, l["o_w"], l["o_b"])) + x, (H,), l["ln1_w"], l["ln1_b"], 1e-12)
            ff = drop(F.linear(F.gelu(F.linear(x, l["i_w"], l["i_b"])), l["out_w"], l["out_b"]))
            x = F.layer_norm(ff + x, (H,), l["ln2_w"], l["ln2_b"], 1e-12)
        h = F.layer_norm(F.gelu(F.linear(x[chosen], head["d_w"], head["d_b"])), (H,), head["ln_w"], head["ln_b"], 1e-12)
        return F.linear(h, emb["word"], head["bias"])

    def step(ids, gen=None):
        inp, chosen, labels = masked(ids, gen)
        loss = F.cross_entropy(logits(inp, chosen, True), labels)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()

    def random_ids():
        ids = torch.randint(1000, V, (B, L))
        ids[:, 0], ids[:, -1] = 101, 102
        return ids

    if data is not None:
        held, train = data[:200], data[200:]
        gen = torch.Generator().manual_seed(1)
        held_in, held_chosen, held_labels = masked(held, torch.Generator().manual_seed(2))
        warm = max(1, int(0.06 * a.steps))
        for s in range(a.steps + 1):
            if s % a.eval_every == 0 or s == a.steps:
                with torch.no_grad():
                    out = logits(held_in, held_chosen, False)
                    acc = (out.argmax(1) == held_labels).float().mean().item()
                    print(f"step {s} heldout_loss {F.cross_entropy(out, held_labels).item():.4f} heldout_accuracy {acc:.4f}",
                          flush=True)
            if s == a.steps:
                break
            for group in opt.param_groups:
                group["lr"] = a.lr * min((s + 1) / warm, max(0.0, (a.steps - s) / (a.steps - warm)))
            step(train[torch.randint(0, len(train), (B,), generator=gen)], gen)
        return

    for _ in range(a.warmup):
        step(random_ids())
    t = time.perf_counter()
    for _ in range(a.steps):
        step(random_ids())
    s = time.perf_counter() - t
    print(f"pytorch eager {torch.__version__}: {a.steps} steps in {s:.1f} s, {a.steps * B * L / s:.0f} tokens/s")


if __name__ == "__main__":
    main()
