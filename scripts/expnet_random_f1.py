#!/usr/bin/env python3
"""Which token F1 gives a random explainer the ExpNet paper's Random row (SST-2 .258, HateXplain .293)?

A uniformly random explainer's expected F1 depends only on each example's length n and rationale size
k, so it is computed exactly (no sampling) under every reading the paper leaves open:
- units: word pieces or whitespace words;
- binarisation: top-k with k = the rationale's size, a fixed top-K (5; 7 and 10 are ferret's
  Benchmark defaults for HateXplain and SST), score > 0.5 (half the units, Bernoulli), or every unit
  (what a threshold tuned for F1 drifts to on random scores);
- averaging: per example over examples with a rationale (macro), per example over every example with
  0 where there is none, or pooled (micro: sums of tp, predicted and gold);
- HateXplain's rationale: the annotators' majority (salient's reading) or their union (ferret's).
SST-2's rationales are salient's (sst-trees:test, Carton et al.'s phrase rule), read from the
`token_rationale` of a `salient benchmark` run of the random method (any MiniLM checkpoint: only the
tokenizer matters):
  salient benchmark --model M --data sst-trees:test --methods random --metrics token_f1 --limit 100000 --out runs/rand-sst
  python3 scripts/expnet_random_f1.py runs/rand-sst/results.jsonl ../shared/data/hatexplain/hatexplain_test.jsonl M
"""
import json
import sys
import warnings

import numpy as np
from scipy.stats import binom

PAPER = {"sst2": 0.258, "hatexplain": 0.293}


def expected_f1_half(n, k):
    """E[2 tp / (predicted + k)] when every unit is predicted with probability 1/2."""
    tp = binom.pmf(np.arange(k + 1), k, 0.5)
    fp = binom.pmf(np.arange(n - k + 1), n - k, 0.5)
    t, f = np.meshgrid(np.arange(k + 1), np.arange(n - k + 1), indexing="ij")
    return float((np.outer(tp, fp) * (2 * t / np.maximum(t + f + k, 1))).sum())


def rows(golds):
    """(binarisation, averaging) -> expected F1 of a random explainer over the gold masks."""
    out = {}
    n_all = len(golds)
    ex = [(len(g), int(g.sum())) for g in golds if g.sum() > 0]
    rules = {"top-k (k = rationale size)": lambda n, k: (k / n, k * k / n, k),
             "score > 0.5": lambda n, k: (expected_f1_half(n, k), k / 2, n / 2),
             "every unit": lambda n, k: (2 * k / (n + k), k, n)}
    for K in (5, 7, 10):
        rules[f"top-{K}"] = lambda n, k, K=K: (2 * min(K, n) * k / (n * (min(K, n) + k)), min(K, n) * k / n, min(K, n))
    for name, rule in rules.items():
        per = [rule(n, k) for n, k in ex]
        f1s = [p[0] for p in per]
        tp, pred, gold = sum(p[1] for p in per), sum(p[2] for p in per), sum(k for _, k in ex)
        out[(name, "macro, examples with a rationale")] = np.mean(f1s)
        out[(name, "macro, every example (none: 0)")] = np.sum(f1s) / n_all
        out[(name, "pooled")] = 2 * tp / (pred + gold)
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: expnet_random_f1.py SST_RESULTS_JSONL HATEXPLAIN_TEST_JSONL MODEL_DIR")
    warnings.filterwarnings("ignore")
    import transformers
    sst_path, hx_path, model = sys.argv[1:]
    tok = transformers.BertTokenizerFast.from_pretrained(model)
    tables = {}
    # The last line of each example counts (a resumed benchmark may have appended a recomputed one).
    by_index = {}
    for line in open(sst_path):
        x = json.loads(line)
        if x["method"] == "random":
            by_index[x["index"]] = x
    lines = [by_index[i] for i in sorted(by_index)]
    if not lines or "token_rationale" not in lines[0]:
        sys.exit(f"{sst_path}: no random-method lines with token_rationale (run salient benchmark --methods random)")
    pieces, words = [], []
    for x in lines:
        g = x["token_rationale"]
        pieces.append(np.array([v for v in g if v >= 0]))
        # Whitespace word of each piece, from the tokenizer's character offsets.
        enc = tok(x["text"], return_offsets_mapping=True)
        assert tok.convert_ids_to_tokens(enc["input_ids"]) == x["tokens"], x["text"]
        word_at, w, inside = [], -1, False
        for ch in x["text"]:
            inside, w = (False, w) if ch.isspace() else (True, w + (not inside))
            word_at.append(w if inside else -1)
        first = {}
        for (s, e), v in zip(enc["offset_mapping"], g):
            if e > s and v >= 0:
                first.setdefault(word_at[s], v)
        words.append(np.array([first[i] for i in sorted(first)]))
    tables[("sst2", "salient's", "piece")] = rows(pieces)
    tables[("sst2", "salient's", "word")] = rows(words)
    hx = [json.loads(line) for line in open(hx_path)]
    for reading in ("majority", "union"):
        by_unit = {"piece": [], "word": []}
        for r in hx:
            R = np.array(r["rationales"]) if r["rationales"] else np.zeros((1, len(r["post_tokens"])), int)
            g = (R.any(0) if reading == "union" else R.mean(0) >= 0.5).astype(int)
            by_unit["word"].append(g)
            ids = tok(r["post_tokens"], is_split_into_words=True).word_ids()
            by_unit["piece"].append(np.array([g[i] for i in ids if i is not None]))
        for unit, golds in by_unit.items():
            tables[("hatexplain", reading, unit)] = rows(golds)
    print("| task | rationale | units | binarisation | averaging | random's F1 | paper |")
    print("|---|---|---|---|---|---|---|")
    for (task, reading, unit), table in tables.items():
        for (binar, avg), v in table.items():
            mark = " **≈**" if abs(v - PAPER[task]) <= 0.01 else ""
            print(f"| {task} | {reading} | {unit} | {binar} | {avg} | {v:.3f}{mark} | {PAPER[task]} |")
    print()
    for (binar, avg) in tables[("sst2", "salient's", "piece")]:
        for unit in ("piece", "word"):
            s = tables[("sst2", "salient's", unit)][(binar, avg)]
            for reading in ("majority", "union"):
                h = tables[("hatexplain", reading, unit)][(binar, avg)]
                if abs(s - PAPER["sst2"]) <= 0.01 and abs(h - PAPER["hatexplain"]) <= 0.01:
                    print(f"both within 0.01: {unit}, {binar}, {avg}, HateXplain {reading}: {s:.3f} / {h:.3f}")
    print("(no line above: no single reading puts random within 0.01 of the paper on both tasks)")


if __name__ == "__main__":
    main()
