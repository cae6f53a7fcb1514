"""ferret-xai 0.4.2's own Benchmark against `salient benchmark` for the same work (issue #86 item 2):
IG and saliency explanations of the first N sst-trees:dev sentences, each scored on AOPC
comprehensiveness and sufficiency and, where the sentence has an SST phrase rationale, token F1,
token IoU and AUPRC, on the same checkpoint (salient reads it in C++, ferret through Hugging Face's
AutoModelForSequenceClassification, eager attention). Both sides run in this one process, with the
same thread count, interleaved over rounds (salient first in the first, third, ... round, ferret
first in the others), each side's whole run timed in every round, after an untimed warm-up of both
on one sentence; salient writes to a fresh folder every round, so it resumes nothing.

  scripts/ferret_env.sh   # once: .venv-ferret (ferret-xai 0.4.2, captum 0.7.0, Debian's torch 1.13)
  .venv-ferret/bin/python bench/ferret_vs_salient.py MODEL_DIR [--limit 25] [--rounds 3] [--threads 2]

Prints a markdown table (median and range of each side's seconds, and their ratio), after checking
that both sides did the same work: the same sentences, tokens and predicted classes, both explainers
and every metric on each sentence, IG's scores equal to float32 error, and IG's token F1 equal
wherever the top-k cut is not a near tie.

ferret's side, per sentence, as its Benchmark.evaluate_samples does it (whose dataset loaders
download; the sentences here are salient's, and the top k is each sentence's rationale length, where
evaluate_samples would take one k for the whole data set):
  target = argmax of bench.score(text)                        # the predicted class
  bench.explain(text, target, normalize_scores=False)        # IntegratedGradientExplainer, GradientExplainer
  bench.evaluate_explanations(explanations, target, human_rationale=gold, top_k_rationale=k)
with explainers = IntegratedGradientExplainer(multiply_by_inputs=True) (50 Gauss-Legendre points,
Captum's defaults; baseline [CLS] [PAD]... [SEP] on the word embeddings: salient's `ig` with
--baseline pad) and GradientExplainer(multiply_by_inputs=False) (Captum's Saliency on the word
embeddings), and evaluators = ferret's AOPC_Comprehensiveness, AOPC_Sufficiency,
AUPRC_Plausibility, Tokenf1_Plausibility and TokenIOU_Plausibility, at their defaults: only positive
scores enter a top k (salient's positive_only=True), AUPRC by the trapezoid rule
(`token_auprc_trapezoid`), AOPC over the fractions 0.1, ..., 1.0 with tokens deleted, each distinct
top-k set once (removal="delete", aopc_distinct=True). normalize_scores=False: ferret's default L1
normalisation divides all of an explanation's scores by one positive number, which changes none of
these metrics; without it the scores compare with salient's. ferret's TauLOO evaluator (in its
default set) is left out: salient has no such metric.

Set to salient's definitions where ferret allows it: ferret's explainers differentiate whatever
`model(...).logits` returns (logits), salient's IG and saliency the target's probability (their
default output); the explainers here get the same model behind ProbabilityOutput, whose `.logits`
are the softmax of the model's, so both sides explain the probability. The evaluators get the model
itself (they take the softmax themselves).

Differences that remain:
- saliency pools the gradient over the hidden dimension differently: ferret sums |dF/de| (Captum's
  Saliency, abs=True, then ferret's hard-coded sum: an L1 norm), salient takes its L2 norm. Neither
  lets it be changed (Benchmark.explain passes no arguments to the explainers; salient's saliency has
  no such option). The cost is the same; the rankings, so the metrics, can differ, and only IG's
  token F1 is asserted equal.
- ferret's AOPC decodes every perturbed input to text and tokenises it again (the model may read
  other pieces than those removed from, docs/explainers.md "ferret"); salient scores the ids. With no
  positive score ferret writes AOPC 0 / 1 where salient leaves them undefined.
- the batching is each library's own: ferret runs IG's 50 points 8 at a time and each evaluator's
  perturbed texts 8 at a time, and each AOPC evaluator scores the unperturbed text again; salient
  batches to its --max-batch-tokens and --internal-batch defaults.
- salient does more than ferret within its time: it reads the checkpoint (salient.benchmark takes the
  model by its path) and sst-trees:dev each call, computes every other plausibility metric of the
  same scores (token_f1_top5, token_auroc, token_auprc, word_*) and ERASER's comprehensiveness and
  sufficiency at k = rationale length (two more perturbed inputs per explanation), and writes
  results.jsonl, summaries and heatmaps.html. ferret is handed the sentences and the HF model ready.
"""
import argparse
import json
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build" / "python"))
# First: salient asks OpenBLAS for this CPU's kernels before numpy or torch loads it, so both sides
# run the same, best ones (python/salient/__init__.py).
import salient  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from ferret import (  # noqa: E402
    AOPC_Comprehensiveness_Evaluation,
    AOPC_Sufficiency_Evaluation,
    AUPRC_PlausibilityEvaluation,
    Benchmark,
    GradientExplainer,
    IntegratedGradientExplainer,
    Tokenf1_PlausibilityEvaluation,
    TokenIOU_PlausibilityEvaluation,
)

DATA = "sst-trees:dev"
METHODS = ["ig", "saliency"]
# salient's metric name for each of ferret's evaluators (its SHORT_NAME), and each explainer's NAME.
METRICS = {"aopc_compr": "aopc_comprehensiveness", "aopc_suff": "aopc_sufficiency",
           "auprc_plau": "token_auprc_trapezoid", "token_f1_plau": "token_f1", "token_iou_plau": "token_iou"}
EXPLAINERS = {"Integrated Gradient (x Input)": "ig", "Gradient": "saliency"}
PLAUSIBILITY = {"token_auprc_trapezoid", "token_f1", "token_iou"}


class ProbabilityOutput(torch.nn.Module):
    """The model as ferret's explainers see it, explaining the target's softmax probability as
    salient does: they call model(inputs_embeds=..., attention_mask=...).logits, .device and
    .get_input_embeddings() (ferret/explainers/gradient.py, model_utils.py)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    @property
    def device(self):
        return self.model.device

    def get_input_embeddings(self):
        return self.model.get_input_embeddings()

    def forward(self, **kwargs):
        return types.SimpleNamespace(logits=self.model(**kwargs).logits.softmax(-1))


def run_salient(model, n, out):
    """The salient side: one call, the whole benchmark (explain, score, write)."""
    salient.benchmark(model, DATA, METHODS, metrics=sorted(METRICS.values()), limit=n, out=out, bootstrap=0,
                      removal="delete", positive_only=True, aopc_distinct=True)
    with open(Path(out) / "results.jsonl") as f:
        return [json.loads(line) for line in f]


def run_ferret(bench, sentences):
    """The ferret side: per sentence, the predicted class, both explanations, every evaluator."""
    results = []
    for text, gold in sentences:
        target = int(bench.score(text, return_dict=False).argmax(-1))
        explanations = bench.explain(text, target, show_progress=False, normalize_scores=False)
        k = sum(gold)
        # Without a rationale (k = 0) ferret's plausibility evaluators return nothing, as salient's
        # leave those metrics undefined; AOPC is computed either way.
        evaluations = bench.evaluate_explanations(explanations, target, human_rationale=gold if k else None,
                                                  show_progress=False, **({"top_k_rationale": k} if k else {}))
        results.append((target, evaluations))
    return results


def sentences_of(lines):
    """(text, gold) per sentence, in salient's order: the rationale as salient read it, one 0/1 per
    word piece without [CLS] and [SEP] (ferret adds them); salient's -1 (no word labelled) is 0."""
    by_index = {}
    for line in lines:
        by_index.setdefault(line["index"], line)
    return [(x["text"], [max(0, g) for g in x["token_rationale"][1:-1]]) for _, x in sorted(by_index.items())]


def clear_cut(scores, k, rel=1e-3):
    """Whether the positive top k of `scores` is far from a tie, so that two float32 computations of
    nearly the same scores give the same set."""
    s = np.sort(np.asarray(scores, dtype=float))[::-1]
    chosen = s[:k][s[:k] > 0]
    if len(chosen) == 0:
        return False
    # The chosen set changes if its last score meets the next one or, being the last positive, 0.
    following = s[len(chosen)] if len(chosen) < len(s) else -np.inf
    return chosen[-1] - max(following, 0.0) > rel * np.abs(s).max()


def check_same_work(lines, ferret_results, n):
    """Asserts both sides did the same work; returns a one-line summary of how far they agree."""
    assert len(lines) == n * len(METHODS), (len(lines), n)
    assert len(ferret_results) == n
    salient_of = {(x["index"], x["method"]): x for x in lines}
    assert len({i for i, _ in salient_of}) == n
    ig_gap, f1_compared, f1_equal, sal_equal, sal_compared = 0.0, 0, 0, 0, 0
    for i, (target, evaluations) in enumerate(ferret_results):
        assert sorted(EXPLAINERS[e.explanation.explainer] for e in evaluations) == sorted(METHODS)
        for e in evaluations:
            method = EXPLAINERS[e.explanation.explainer]
            x = salient_of[(i, method)]
            assert x["target"] == target, (i, "predicted class", x["target"], target)
            assert list(e.explanation.tokens) == x["tokens"], (i, e.explanation.tokens, x["tokens"])
            ours = {METRICS[v.name]: v.score for v in e.evaluation_scores}
            # salient's side ran the definitions ferret's explainers have (Captum's IG defaults).
            assert x["output"] == "prob" and x["params"]["layer"] == "word_embeddings", (i, method, x["params"])
            if method == "ig":
                assert (x["params"]["steps"], x["params"]["rule"], x["params"]["baseline"]) == (50, "gausslegendre", "pad")
            has_rationale = sum(g > 0 for g in x["token_rationale"]) > 0
            expected = set(METRICS.values()) if has_rationale else set(METRICS.values()) - PLAUSIBILITY
            assert set(ours) == expected, (i, method, sorted(ours))
            assert all(name in x["metrics"] for name in expected), (i, method, sorted(x["metrics"]))
            if method == "ig":
                s, f = np.array(x["token_scores"]), np.array(e.explanation.scores)
                ig_gap = max(ig_gap, float(np.abs(s - f).max() / np.abs(s).max()))
            if not has_rationale:
                continue
            same_f1 = abs(ours["token_f1"] - x["metrics"]["token_f1"]) < 1e-9
            if method == "ig":
                k = sum(g > 0 for g in x["token_rationale"])
                if clear_cut(x["token_scores"][1:-1], k):
                    assert same_f1, (i, "IG token F1", ours["token_f1"], x["metrics"]["token_f1"])
                    f1_compared += 1
                    f1_equal += same_f1
            else:
                sal_compared += 1
                sal_equal += same_f1
    # IG: ferret's Captum against salient's IG on the same checkpoint, both float32.
    assert ig_gap < 1e-3, f"IG scores differ by {ig_gap:.2e} of the largest score"
    return (f"same work: {n} sentences x {len(METHODS)} explainers, same tokens and predicted classes; "
            f"IG scores within {ig_gap:.1e} of the largest; IG token F1 equal on {f1_equal}/{f1_compared} "
            f"sentences with a clear top-k cut; saliency token F1 equal on {sal_equal}/{sal_compared} "
            f"(L1 against L2 pooling)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir", help="a fine-tuned checkpoint in Hugging Face's layout, e.g. models/sst2-minilm-quick")
    ap.add_argument("--limit", type=int, default=25, help="the first N sentences of sst-trees:dev")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    salient.set_threads(args.threads)
    torch.set_num_threads(args.threads)
    model = salient.load(args.model_dir)  # salient.benchmark reads the checkpoint again by this path

    hf = transformers.AutoModelForSequenceClassification.from_pretrained(args.model_dir,
                                                                         attn_implementation="eager").eval()
    # Inputs cut at the model's positions, as salient cuts them (the checkpoint's tokenizer files name
    # no length); decoding keeps transformers 4.44's default, said out loud to quiet its warning.
    tokenizer = transformers.AutoTokenizer.from_pretrained(args.model_dir, clean_up_tokenization_spaces=True,
                                                           model_max_length=hf.config.max_position_embeddings)
    explained = ProbabilityOutput(hf)
    bench = Benchmark(hf, tokenizer,
                      explainers=[IntegratedGradientExplainer(explained, tokenizer, multiply_by_inputs=True),
                                  GradientExplainer(explained, tokenizer, multiply_by_inputs=False)],
                      evaluators=[ev(hf, tokenizer) for ev in (AOPC_Comprehensiveness_Evaluation,
                                                               AOPC_Sufficiency_Evaluation,
                                                               AUPRC_PlausibilityEvaluation,
                                                               Tokenf1_PlausibilityEvaluation,
                                                               TokenIOU_PlausibilityEvaluation)])

    times = {"ferret": [], "salient": []}
    with tempfile.TemporaryDirectory(prefix="ferret_vs_salient_") as tmp:
        # Untimed warm-up of both sides on one sentence (first calls allocate, load, compile).
        run_ferret(bench, sentences_of(run_salient(model, 1, Path(tmp) / "warmup")))
        lines = ferret_results = sentences = None
        for r in range(args.rounds):
            # Round 0 runs salient first: its results.jsonl gives ferret the sentences and rationales
            # exactly as salient read them.
            for side in (("salient", "ferret") if r % 2 == 0 else ("ferret", "salient")):
                t0 = time.perf_counter()
                if side == "salient":
                    got = run_salient(model, args.limit, Path(tmp) / f"round{r}")
                else:
                    got = run_ferret(bench, sentences)
                times[side].append(time.perf_counter() - t0)
                if side == "salient" and lines is None:
                    lines, sentences = got, sentences_of(got)
                    assert len(sentences) == args.limit, f"{DATA} gave {len(sentences)} sentences, not {args.limit}"
                if side == "ferret" and ferret_results is None:
                    ferret_results = got
                print(f"round {r + 1}/{args.rounds}: {side} {times[side][-1]:.2f} s", file=sys.stderr, flush=True)

    print(check_same_work(lines, ferret_results, args.limit))
    n_rat = sum(1 for _, gold in sentences if sum(gold))
    print(f"\n{args.limit} sst-trees:dev sentences ({n_rat} with a rationale), IG (50 points) and saliency, "
          f"metrics {', '.join(sorted(METRICS.values()))}; {args.threads} threads, {args.rounds} rounds\n")
    print("| side | median s | range s |")
    print("|---|---|---|")
    versions = f"torch {torch.__version__}, transformers {transformers.__version__}"
    for side, label in (("ferret", f"ferret-xai 0.4.2 Benchmark ({versions})"), ("salient", "salient.benchmark")):
        t = times[side]
        print(f"| {label} | {statistics.median(t):.2f} | {min(t):.2f}–{max(t):.2f} |")
    ratios = [f / s for f, s in zip(times["ferret"], times["salient"])]
    print(f"\nferret / salient: {statistics.median(times['ferret']) / statistics.median(times['salient']):.2f}x "
          f"(medians; per round {min(ratios):.2f}–{max(ratios):.2f}x)")


if __name__ == "__main__":
    main()
