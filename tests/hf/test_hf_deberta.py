"""DeBERTa-v2/v3 classifiers, salient against Hugging Face's DebertaV2ForSequenceClassification.

No DeBERTa weights can be had here, so each model is one HF initialises at random over a
SentencePiece model Debian's spm_train makes from the project's text (DeBERTa's [PAD] [CLS] [SEP]
[UNK] ids), in three configurations: v3's (relative attention with log buckets, c2p|p2c, shared
attention keys, LayerNorm on the relative embeddings, no absolute positions, no token types), v2's
(separate pos_key_proj / pos_query_proj, absolute positions added to the input, token types, no
buckets) and c2p alone. Checked: every layer's hidden states and attention maps on a padded batch
with a pair, logits from text (singles and pairs), HF reading a checkpoint salient fine-tuned, IG
against Captum on HF's model, every registered explainer running (or refusing in one line), a base
checkpoint without the prefix, and `salient serve` answering for it. Runs in .venv-ref (tests/hf/run.sh)."""

import json

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")  # run.sh skips first, with the reason, when absent
pytest.importorskip("sentencepiece")
import salient  # noqa: E402
from conftest import MULTILINGUAL, SALIENT_BIN, fine_tune_briefly, hf_logits, real_texts, train_spm  # noqa: E402

torch.set_grad_enabled(False)

CONFIGS = {
    "v3": dict(relative_attention=True, position_biased_input=False, pos_att_type="p2c|c2p", position_buckets=16,
               max_relative_positions=-1, share_att_key=True, norm_rel_ebd="layer_norm", type_vocab_size=0),
    "v2": dict(relative_attention=True, position_biased_input=True, pos_att_type=["c2p", "p2c"],
               max_relative_positions=40, share_att_key=False, norm_rel_ebd="none", type_vocab_size=2),
    "c2p": dict(relative_attention=True, position_biased_input=False, pos_att_type="c2p", position_buckets=8,
                max_relative_positions=64, share_att_key=False, norm_rel_ebd="layer_norm", type_vocab_size=0),
}


@pytest.fixture(scope="session")
def deberta_tokenizer(corpus, tmp_path_factory):
    work = tmp_path_factory.mktemp("deberta-spm")
    model = train_spm(corpus, work / "sp", "unigram", "deberta")
    tok = transformers.DebertaV2TokenizerFast(vocab_file=str(model))
    return tok


@pytest.fixture(scope="session", params=sorted(CONFIGS))
def deberta(request, deberta_tokenizer, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"deberta-{request.param}")
    deberta_tokenizer.save_pretrained(out)
    torch.manual_seed(0)
    cfg = transformers.DebertaV2Config(vocab_size=len(deberta_tokenizer), hidden_size=32, num_hidden_layers=2,
                                       num_attention_heads=4, intermediate_size=64, max_position_embeddings=128,
                                       pooler_hidden_size=32, num_labels=2, id2label={0: "negative", 1: "positive"},
                                       label2id={"negative": 0, "positive": 1}, **CONFIGS[request.param])
    model = transformers.DebertaV2ForSequenceClassification(cfg).eval()
    with torch.no_grad():  # HF zero-initialises LayerNorm biases and the like: random ones test more
        for name, p in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                p.add_(0.1 * torch.randn_like(p))
    model.save_pretrained(out, safe_serialization=True)
    return request.param, out, deberta_tokenizer, model


def batch_texts():
    texts = real_texts()
    return texts[:10] + MULTILINGUAL[:4] + [(texts[12], texts[13])] + [t for t in texts if len(t) > 4000][:1]


def test_every_layer_and_attention_map_matches_hf(deberta):
    name, out, tok, hf = deberta
    m = salient.load(out)
    assert m.config["model_type"] == "deberta-v2"
    batch = batch_texts()
    sal = m.forward(batch, batch_size=16, max_length=128)
    assert sal["input_ids"].shape[1] == 128, "the long review fills the 128 positions"
    ids = torch.from_numpy(sal["input_ids"])
    kw = dict(attention_mask=torch.from_numpy(sal["attention_mask"]))
    if CONFIGS[name]["type_vocab_size"] > 0:
        kw["token_type_ids"] = torch.from_numpy(sal["token_type_ids"])
    ref = hf(input_ids=ids, output_hidden_states=True, output_attentions=True, **kw)
    mask = sal["attention_mask"].astype(bool)
    assert len(sal["hidden_states"]) == len(ref.hidden_states) == 3
    for layer, (a, b) in enumerate(zip(sal["hidden_states"], ref.hidden_states)):
        diff = np.abs(a - b.numpy())[mask].max()
        assert diff < 1e-4, f"{name}: hidden_states[{layer}]: max |diff| {diff:.3g}"
    for layer, (a, b) in enumerate(zip(sal["attentions"], ref.attentions)):
        # every row and column, padding included: DeBERTa's XSoftmax zeroes padded queries and keys
        diff = np.abs(a - b.numpy()).max()
        assert diff < 1e-5, f"{name}: attentions[{layer}]: max |diff| {diff:.3g}"
    assert np.abs(sal["logits"] - ref.logits.numpy()).max() < 1e-4
    # one at a time equals batched (padding changes nothing)
    one = m.forward(batch[0])
    n = int(one["attention_mask"].sum())
    assert np.abs(one["hidden_states"][-1][0, :n] - sal["hidden_states"][-1][0, :n]).max() < 1e-5


def test_a_base_encoder_without_the_prefix_loads(deberta, tmp_path):
    """DebertaV2Model.save_pretrained names its weights without "deberta." and with HF's query_proj:
    salient reads it as a base encoder with HF's hidden states."""
    name, out, tok, hf = deberta
    if name != "v2":
        pytest.skip("one configuration is enough")
    base = tmp_path / "base"
    hf.deberta.save_pretrained(base, safe_serialization=True)
    tok.save_pretrained(base)
    m = salient.load(base)
    assert not m.has_task_head
    sal = m.forward(real_texts()[:4])
    ref = hf.deberta(input_ids=torch.from_numpy(sal["input_ids"]), attention_mask=torch.from_numpy(sal["attention_mask"]),
                     token_type_ids=torch.from_numpy(sal["token_type_ids"]), output_hidden_states=True)
    mask = sal["attention_mask"].astype(bool)
    assert np.abs(sal["hidden_states"][-1] - ref.hidden_states[-1].numpy())[mask].max() < 1e-4


def test_logits_from_text_and_pairs_match_hf(deberta):
    name, out, tok, hf = deberta
    texts = real_texts()[:20] + MULTILINGUAL + [real_texts()[1176]]
    pair = ("a charming journey", "pas mal du tout, charmant")
    preds = salient.load(out).predict(texts + [pair])
    ref = hf_logits(hf, tok, texts, pair)
    assert np.abs(np.array([p.logits for p in preds]) - ref).max() < 1e-4, name


def test_hf_reads_what_salient_fine_tuned(deberta, tmp_path):
    name, out, tok, _ = deberta
    if name != "v3":
        pytest.skip("one configuration is enough for the round trip")
    tuned = tmp_path / "tuned"
    fine_tune_briefly(out, tuned, lr="1e-3")
    hf = transformers.AutoModelForSequenceClassification.from_pretrained(tuned).eval()
    assert type(hf).__name__ == "DebertaV2ForSequenceClassification"
    back = transformers.AutoTokenizer.from_pretrained(tuned)
    assert type(back).__name__ == "DebertaV2TokenizerFast"
    texts = real_texts()[:16] + MULTILINGUAL[:3]
    enc = back(texts, truncation=True, max_length=128, padding=True, return_tensors="pt")
    ours = np.array([p.logits for p in salient.load(tuned).predict(texts)])
    moved = np.abs(ours - np.array([p.logits for p in salient.load(out).predict(texts)])).max()
    assert moved > 1e-4, "fine-tuning changed the model"
    assert np.abs(hf(**enc).logits.numpy() - ours).max() < 1e-4


def test_ig_matches_captum_on_hf(deberta):
    """IG at the word embeddings, [PAD] baseline except [CLS]/[SEP], the predicted class's
    probability, 50 Gauss-Legendre points: salient against Captum's IntegratedGradients on HF's
    model fed the word embeddings (Captum's LayerIntegratedGradients on the embedding layer fails
    inside HF's DebertaV2Embeddings, which adds to that layer's output in place)."""
    from captum.attr import IntegratedGradients

    name, out, tok, hf = deberta
    m = salient.load(out)
    texts = ["a charming and moving journey", "the plot is thin and the jokes fall flat", MULTILINGUAL[1]]
    table = hf.deberta.embeddings.word_embeddings

    def prob_of_embeddings(embeds, mask):
        return hf(inputs_embeds=embeds.clone(), attention_mask=mask).logits.softmax(-1)

    ig = IntegratedGradients(prob_of_embeddings)
    ours = salient.explain(m, texts, method="ig", steps=50, rule="gausslegendre", baseline="pad")
    for text, ex, e in zip(texts, ours, m.tokenize(texts)):
        ids = torch.tensor([e["ids"]])
        mask = torch.ones_like(ids)
        base = torch.tensor([[t if t in (tok.cls_token_id, tok.sep_token_id) else tok.pad_token_id for t in e["ids"]]])
        target = int(prob_of_embeddings(table(ids), mask).argmax())
        assert ex.target == target
        with torch.enable_grad():
            attr = ig.attribute(table(ids).detach(), baselines=table(base).detach(), target=target,
                                additional_forward_args=(mask,), n_steps=50, method="gausslegendre")
        ref = attr.sum(-1)[0].detach().numpy()
        assert np.abs(np.asarray(ex.scores) - ref).max() <= 1e-5 + 1e-4 * np.abs(ref).max(), (name, text)


def test_every_explainer_runs_or_says_why(deberta):
    name, out, _, _ = deberta
    if name != "v3":
        pytest.skip("one configuration is enough")
    m = salient.load(out)
    refused = []
    for method in salient.methods():
        if method.name in ("expnet", "smat", "sst"):
            continue  # learned explainers need their own artifact
        try:
            kw = {"samples": 20} if method.name in ("lime", "kernel_shap") else {}
            ex = salient.explain(m, ["a charming and moving journey"], method=method.name, **kw)
            assert np.isfinite(np.asarray(ex[0].scores)).all(), method.name
        except Exception as e:  # noqa: BLE001  a method that does not extend says why, in one line
            msg = str(e)
            assert "\n" not in msg.strip() and "DeBERTa's disentangled attention" in msg, (method.name, msg)
            refused.append(method.name)
    # the LRP family alone (its rules follow BERT's modules), each in one line that says why
    assert set(refused) == {"lrp_partial", "lrp_full", "transformer_attribution", "mgae"}, refused


def test_salient_serve_explains_a_deberta_model(deberta):
    """`salient serve` on loopback (a free port, one request each): /api/models names the family,
    /api/explain answers IG, rollout and LIME with the Python package's scores."""
    import re
    import signal
    import subprocess
    import urllib.request

    name, out, _, _ = deberta
    if name != "v3":
        pytest.skip("one configuration is enough")
    p = subprocess.Popen([SALIENT_BIN, "--quiet", "serve", "--model", str(out), "--host", "127.0.0.1", "--port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://[0-9.]+:\d+/", p.stdout.readline()).group(0)
        with urllib.request.urlopen(url + "api/models", timeout=60) as r:
            assert json.load(r)["models"][0]["model_type"] == "deberta-v2"
        body = {"text": "a charming and moving journey", "methods": ["ig", "rollout", "lime"]}
        req = urllib.request.Request(url + "api/explain", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            got = {e["method"]: e for e in json.load(r)["explanations"]}
        m = salient.load(out)
        for method in ("ig", "rollout"):
            want = salient.explain(m, ["a charming and moving journey"], method=method)[0]
            assert np.abs(np.asarray(got[method]["token_scores"]) - np.asarray(want.scores)).max() < 1e-6, method
        assert len(got["lime"]["token_scores"]) == len(got["ig"]["token_scores"])
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
