"""ferret-xai 0.4.2 (Attanasio et al. 2023), pinned in scripts/requirements-reference.txt, scoring the
explanations `salient benchmark` wrote, on the same checkpoint read by Hugging Face: salient's metrics
under ferret's conventions (--metric-removal delete --positive-only --aopc-distinct,
token_auprc_trapezoid) agree with ferret's evaluators to floating-point error. AOPC is compared where
ferret's decode-and-retokenise round trip gives back the ids it removed from (ferret scores text, not
ids: docs/explainers.md, "ferret")."""
import importlib
import importlib.util
import json
import math
import sys

import numpy as np
import pytest

import salient


def ferret_evaluators():
    """ferret's evaluators without `import ferret`: the package's __init__ imports its Benchmark,
    which needs `datasets` and a dozen packages the evaluators never use (installed --no-deps)."""
    spec = importlib.util.find_spec("ferret")
    assert spec is not None, "ferret-xai missing: rerun scripts/reference_env.sh"
    if "ferret" not in sys.modules:
        sys.modules["ferret"] = importlib.util.module_from_spec(spec)  # its __init__ is not run
    faith = importlib.import_module("ferret.evaluators.faithfulness_measures")
    plaus = importlib.import_module("ferret.evaluators.plausibility_measures")
    explanation = importlib.import_module("ferret.explainers.explanation")
    return faith, plaus, explanation


METRICS = ["token_f1", "token_f1_top5", "token_iou", "token_auprc_trapezoid", "aopc_comprehensiveness",
           "aopc_sufficiency"]


@pytest.fixture(scope="module")
def lines(fine_tuned, tmp_path_factory):
    out = tmp_path_factory.mktemp("ferret") / "bench"
    salient.benchmark(fine_tuned, "sst-trees:dev", ["ig", "saliency"], metrics=METRICS, out=out, limit=25,
                      bootstrap=0, removal="delete", positive_only=True, aopc_distinct=True)
    with open(out / "results.jsonl") as f:
        return [json.loads(line) for line in f]


def test_ferret_scores_salient_explanations_as_salient_does(lines, fine_tuned, hf_classifier):
    import transformers
    faith, plaus, explanation = ferret_evaluators()
    tok = transformers.BertTokenizerFast.from_pretrained(fine_tuned)
    # ferret decodes every perturbed input to text; record what it decodes to see which round trips
    # give the ids back.
    decoded = []
    decode = tok.decode

    def recording_decode(ids, *args, **kwargs):
        text = decode(ids, *args, **kwargs)
        decoded.append((list(map(int, ids)), text))
        return text

    tok.decode = recording_decode
    evaluators = {
        "aopc_comprehensiveness": faith.AOPC_Comprehensiveness_Evaluation(hf_classifier, tok),
        "aopc_sufficiency": faith.AOPC_Sufficiency_Evaluation(hf_classifier, tok),
    }
    f1 = plaus.Tokenf1_PlausibilityEvaluation(hf_classifier, tok)
    iou = plaus.TokenIOU_PlausibilityEvaluation(hf_classifier, tok)
    auprc = plaus.AUPRC_PlausibilityEvaluation(hf_classifier, tok)

    compared = {name: 0 for name in METRICS}
    gaps = {name: 0.0 for name in METRICS}
    assert len(lines) == 50
    for line in lines:
        text, tokens, scores, m = line["text"], line["tokens"], np.array(line["token_scores"]), line["metrics"]
        assert tok.convert_ids_to_tokens(tok(text)["input_ids"]) == tokens, text
        gold = [max(0, g) for g in line["token_rationale"]]  # ferret strips [CLS]/[SEP] itself
        k = sum(gold)
        if k == 0:
            continue
        e = explanation.ExplanationWithRationale(text=text, tokens=tokens, scores=scores, explainer=line["method"],
                                                 target=line["target"], rationale=gold)
        ferret = {
            "token_f1": f1.compute_evaluation(e, top_k_rationale=k).score,
            "token_f1_top5": f1.compute_evaluation(e).score,  # ferret's default k: 5
            "token_iou": iou.compute_evaluation(e, top_k_rationale=k).score,
            "token_auprc_trapezoid": auprc.compute_evaluation(e).score,
        }
        for name, evaluator in evaluators.items():
            decoded.clear()
            score = evaluator.compute_evaluation(e, target=line["target"]).score
            if all(tok(t)["input_ids"][1:-1] == ids for ids, t in decoded):
                ferret[name] = score
        for name, value in ferret.items():
            assert m[name] is not None and math.isfinite(value), (name, line["method"], text)
            gaps[name] = max(gaps[name], abs(m[name] - value))
            compared[name] += 1
    tok.decode = decode
    # Plausibility is arithmetic on the same scores: equal to rounding. AOPC compares two forward
    # passes of one float32 checkpoint (salient's and HF's, padded differently).
    for name in METRICS:
        assert gaps[name] <= (1e-5 if name.startswith("aopc") else 1e-12), (name, gaps[name])
    # Every sentence with a rationale is compared on plausibility; AOPC on those whose round trip is exact.
    assert compared["token_f1"] >= 40 and compared["aopc_comprehensiveness"] >= 20, compared


def test_salient_defaults_differ_from_ferret_where_docs_say(lines, fine_tuned, tmp_path):
    """Without the options, AOPC counts a k once per fraction and ranks negative scores too: on an
    input with fewer than ten removable tokens the two readings give different numbers."""
    line = next((x for x in lines if x["method"] == "ig" and len(x["tokens"]) - 2 < 10), None)
    assert line is not None, "no sentence of fewer than ten removable tokens among the 25"
    k_of = [int(f * (len(line["tokens"]) - 2) + 1e-9) for f in np.arange(0.1, 1.1, 0.1)]
    assert len(set(k for k in k_of if k)) < len([k for k in k_of if k])  # repeated k: the case in question
    model = salient.load(fine_tuned)
    defaults = salient.faithfulness(model, line["text"], line["token_scores"], target=line["target"], removal="delete")
    assert defaults["aopc_comprehensiveness"] != pytest.approx(line["metrics"]["aopc_comprehensiveness"], abs=1e-9)
