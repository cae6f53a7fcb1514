"""SentencePiece tokenizers (XLM-RoBERTa, DeBERTa-v2/v3) and an XLM-R classifier, salient against
Hugging Face.

No XLM-R or DeBERTa weights can be had here, so the SentencePiece models are trained by Debian's
`spm_train` on the project's text (SST-2 sentences, HateXplain posts, movie reviews, and multilingual
lines so that accents, CJK, Arabic, Devanagari and emoji have pieces): a Unigram model, as both
families' released ones are, and a BPE one. HF's slow tokenizers read them and its fast ones are
converted from them (as AutoTokenizer does for a folder without tokenizer.json); the classifier is an
XLMRobertaForSequenceClassification HF initialises at random. Checked on the 1,220 real texts of
test_hf_parity plus multilingual strings: ids, byte offsets, words and token types against HF's fast
tokenizer (and its slow one where the two agree), pairs and truncation, logits from text, and HF
reading what salient writes. Runs in .venv-ref (tests/hf/run.sh)."""
import json
import shutil
import subprocess

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")  # run.sh skips first, with the reason, when absent
pytest.importorskip("sentencepiece")  # HF's slow tokenizers and its conversion (Debian's python3-sentencepiece)
import salient  # noqa: E402
from conftest import MULTILINGUAL, SALIENT_BIN, fine_tune_briefly, hf_logits, real_texts, train_spm  # noqa: E402

torch.set_grad_enabled(False)

SPECIALS = {
    "xlmr": ["a <mask> here and <mask>there, <s> inside </s> the <pad> text <unk>"],
    "deberta": ["a [MASK] here and [MASK]there, [CLS] inside [SEP] the [PAD] text [UNK]"],
}


def texts_under_test(family):
    # `salient tokenize` refuses an empty text (one line naming the input line)
    return [t for t in real_texts() if t] + MULTILINGUAL + SPECIALS[family]


def byte_offsets(text, offsets):
    """HF's character offsets as byte offsets (salient's)."""
    def b(c):
        return len(text[:c].encode("utf-8"))
    return [[b(s), b(e)] for s, e in offsets]


def make_xlmr_model(out, tok):
    torch.manual_seed(0)
    cfg = transformers.XLMRobertaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                        intermediate_size=64, max_position_embeddings=130, num_labels=2,
                                        id2label={0: "negative", 1: "positive"}, label2id={"negative": 0, "positive": 1})
    transformers.XLMRobertaForSequenceClassification(cfg).eval().save_pretrained(out, safe_serialization=True)


@pytest.fixture(scope="session", params=["xlmr-unigram", "xlmr-bpe", "deberta-unigram"])
def folder(request, corpus, tmp_path_factory):
    """A model folder as HF's save_pretrained writes it: the .model file, tokenizer.json (the fast
    tokenizer HF converted), tokenizer_config.json; an XLM-R one also a random classifier."""
    family, model_type = request.param.split("-")
    work = tmp_path_factory.mktemp(request.param)
    model = train_spm(corpus, work / "sp", model_type, family)
    out = work / "model"
    if family == "xlmr":
        fast = transformers.XLMRobertaTokenizerFast(vocab_file=str(model))
        fast.save_pretrained(out)
        make_xlmr_model(out, fast)
        slow = transformers.XLMRobertaTokenizer.from_pretrained(out)
    else:
        fast = transformers.DebertaV2TokenizerFast(vocab_file=str(model))
        fast.save_pretrained(out)
        slow = transformers.DebertaV2Tokenizer.from_pretrained(out)
    return family, out, fast, slow


def salient_tokenize(path, inputs, max_length=0):
    """`salient tokenize --tokenizer PATH` over JSON lines (texts or [text, pair])."""
    lines = [json.dumps({"text": x} if isinstance(x, str) else {"text": x[0], "text_pair": x[1]}) for x in inputs]
    cmd = [SALIENT_BIN, "--quiet", "tokenize", "--tokenizer", str(path)]
    if max_length:
        cmd += ["--max-length", str(max_length)]
    run = subprocess.run(cmd, input="\n".join(lines) + "\n", check=True, capture_output=True, text=True)
    return [json.loads(line) for line in run.stdout.splitlines()]


def test_tokenizer_matches_hf_fast_and_slow(folder):
    family, out, fast, slow = folder
    texts = texts_under_test(family)
    ours = salient_tokenize(out, texts, max_length=128)
    ref = fast(texts, truncation=True, max_length=128, return_offsets_mapping=True)
    slow_ids = slow(texts, truncation=True, max_length=128)["input_ids"]
    bad, slow_only = [], []
    for i, (a, text) in enumerate(zip(ours, texts)):
        if slow_ids[i] != ref["input_ids"][i]:
            # HF's slow and fast tokenizers differ on a few texts: its fast Unigram departs from
            # SentencePiece's segmentation (salient computes SentencePiece's: the slow one), or its
            # slow tokenizer strips around special tokens the fast one matches in normalized text
            # (salient follows the fast one)
            slow_only.append(i)
            if a["ids"] != slow_ids[i] and a["ids"] != ref["input_ids"][i]:
                bad.append(i)
            continue
        words = ref.word_ids(i)
        pairs = {(x, y) for x, y in zip(a["word_ids"], words) if y is not None}
        same_grouping = len(pairs) == len({x for x, _ in pairs}) == len({y for _, y in pairs})
        if (a["ids"] != ref["input_ids"][i] or a["offsets"] != byte_offsets(text, ref["offset_mapping"][i])
                or not same_grouping or set(a["type_ids"]) != {0}):
            bad.append(i)
    detail = ""
    if bad:
        i = bad[0]
        a = ours[i]
        detail = (f"first: {texts[i][:80]!r}\n ours {list(zip(a['tokens'], a['offsets']))[:40]}\n"
                  f" hf   {list(zip(fast.convert_ids_to_tokens(ref['input_ids'][i]), byte_offsets(texts[i], ref['offset_mapping'][i])))[:40]}")
    assert not bad, f"{len(bad)} of {len(texts)} texts differ, {detail}"
    # the slow tokenizer (SentencePiece itself) agrees with the fast one on all but a few texts
    assert len(slow_only) <= 5, f"{len(slow_only)} texts where HF's slow and fast tokenizers differ"
    assert sum(len(e["ids"]) == 128 for e in ours) >= 40  # cut at max_length
    assert any(fast.mask_token_id in e["ids"] for e in ours)


def test_pairs_and_truncation_match_hf(folder):
    family, out, fast, _ = folder
    texts = texts_under_test(family)
    pairs = [(texts[i], texts[-1 - i]) for i in range(0, 400, 3)]
    for max_length in (16, 64, 128):
        ours = salient_tokenize(out, pairs, max_length=max_length)
        ref = fast([a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first", max_length=max_length,
                   return_token_type_ids=True)
        for k, (a, ids, types) in enumerate(zip(ours, ref["input_ids"], ref["token_type_ids"])):
            assert a["ids"] == ids, f"pair {k} at max_length {max_length}"
            assert a["type_ids"] == types, f"pair {k}: token types"


def test_model_file_alone_and_tokenizer_json_alone(folder, tmp_path):
    family, out, fast, _ = folder
    texts = texts_under_test(family)[:300]
    want = fast(texts, truncation=True, max_length=128)["input_ids"]
    # the .model file alone: the family from its file name, the layout's own special tokens
    alone = tmp_path / "alone"
    alone.mkdir()
    name = "sentencepiece.bpe.model" if family == "xlmr" else "spm.model"
    shutil.copy(out / name, alone / name)
    assert [e["ids"] for e in salient_tokenize(alone, texts, max_length=128)] == want
    assert [e["ids"] for e in salient_tokenize(alone / name, texts, max_length=128)] == want
    # a Unigram tokenizer.json names the .model file beside it; without it, one line says so
    assert [e["ids"] for e in salient_tokenize(out / "tokenizer.json", texts, max_length=128)] == want
    lonely = tmp_path / "json-only"
    lonely.mkdir()
    shutil.copy(out / "tokenizer.json", lonely / "tokenizer.json")
    run = subprocess.run([SALIENT_BIN, "tokenize", "--tokenizer", str(lonely / "tokenizer.json")], input="x\n",
                         capture_output=True, text=True)
    assert run.returncode != 0 and len(run.stderr.strip().splitlines()) == 1
    assert "SentencePiece model" in run.stderr


def test_xlmr_logits_from_text_match_hf(folder):
    family, out, fast, _ = folder
    if family != "xlmr":
        pytest.skip("DeBERTa models are checked in test_hf_deberta.py (this folder holds its tokenizer only)")
    texts = real_texts()[:24] + real_texts()[1175:1177] + MULTILINGUAL + SPECIALS["xlmr"]
    hf = transformers.XLMRobertaForSequenceClassification.from_pretrained(out, attn_implementation="eager").eval()
    m = salient.load(out)
    assert m.config["model_type"] == "xlm-roberta"
    pair = ("a charming journey", "pas mal du tout, charmant")
    preds = m.predict(texts + [pair])
    ref = hf_logits(hf, fast, texts, pair)
    assert np.abs(np.array([p.logits for p in preds]) - ref).max() < 1e-4


def test_xlmr_every_layer_attention_map_and_ig_match_hf(folder):
    """A padded batch with a pair and a review cut at 128 tokens: every hidden state and attention
    map against HF's XLMRobertaForSequenceClassification; IG (50 Gauss-Legendre points, <pad>
    baseline except <s>/</s>) against Captum's LayerIntegratedGradients on HF's word embeddings."""
    from captum.attr import LayerIntegratedGradients

    family, out, fast, _ = folder
    if family != "xlmr":
        pytest.skip("DeBERTa models are checked in test_hf_deberta.py (this folder holds its tokenizer only)")
    m = salient.load(out)
    texts = real_texts()
    batch = texts[:10] + MULTILINGUAL[:4] + [(texts[12], texts[13])] + [t for t in texts if len(t) > 4000][:1]
    sal = m.forward(batch, batch_size=16, max_length=128)
    hf = transformers.XLMRobertaForSequenceClassification.from_pretrained(out, attn_implementation="eager").eval()
    ref = hf(input_ids=torch.from_numpy(sal["input_ids"]), attention_mask=torch.from_numpy(sal["attention_mask"]),
             output_hidden_states=True, output_attentions=True)
    mask = sal["attention_mask"].astype(bool)
    real = mask[:, None, :, None] & mask[:, None, None, :]
    for layer, (a, b) in enumerate(zip(sal["hidden_states"], ref.hidden_states)):
        assert np.abs(a - b.numpy())[mask].max() < 1e-4, f"hidden_states[{layer}]"
    for layer, (a, b) in enumerate(zip(sal["attentions"], ref.attentions)):
        assert np.abs(a - b.numpy())[np.broadcast_to(real, a.shape)].max() < 1e-5, f"attentions[{layer}]"

    def prob(ids, mask):
        return hf(input_ids=ids, attention_mask=mask).logits.softmax(-1)

    lig = LayerIntegratedGradients(prob, hf.roberta.embeddings.word_embeddings)
    few = ["a charming and moving journey", MULTILINGUAL[0], MULTILINGUAL[2]]
    ours = salient.explain(m, few, method="ig", steps=50, rule="gausslegendre", baseline="pad")
    for ex, e in zip(ours, m.tokenize(few)):
        ids = torch.tensor([e["ids"]])
        keep = (fast.cls_token_id, fast.sep_token_id)
        base = torch.tensor([[t if t in keep else fast.pad_token_id for t in e["ids"]]])
        target = int(prob(ids, torch.ones_like(ids)).argmax())
        assert ex.target == target
        with torch.enable_grad():
            attr = lig.attribute(ids, baselines=base, target=target, additional_forward_args=(torch.ones_like(ids),),
                                 n_steps=50, method="gausslegendre")
        want = attr.sum(-1)[0].detach().numpy()
        assert np.abs(np.asarray(ex.scores) - want).max() <= 1e-5 + 1e-4 * np.abs(want).max()


def test_hf_reads_what_salient_writes(folder, tmp_path):
    family, out, fast, _ = folder
    if family != "xlmr":
        pytest.skip("DeBERTa models are checked in test_hf_deberta.py (this folder holds its tokenizer only)")
    texts = texts_under_test(family)[:300]
    # salient fine-tunes the model (a few steps) and writes its tokenizer and weights
    tuned = tmp_path / "tuned"
    fine_tune_briefly(out, tuned)
    back = transformers.AutoTokenizer.from_pretrained(tuned)
    assert type(back).__name__ == "XLMRobertaTokenizerFast"
    ref = fast(texts, truncation=True, max_length=128)["input_ids"]
    assert back(texts, truncation=True, max_length=128)["input_ids"] == ref
    assert [e["ids"] for e in salient_tokenize(tuned, texts, max_length=128)] == ref
    hf = transformers.AutoModelForSequenceClassification.from_pretrained(tuned, attn_implementation="eager").eval()
    assert type(hf).__name__ == "XLMRobertaForSequenceClassification"
    enc = back(texts[:20], truncation=True, max_length=128, padding=True, return_tensors="pt")
    ours = np.array([p.logits for p in salient.load(tuned).predict(texts[:20])])
    assert np.abs(hf(**enc).logits.numpy() - ours).max() < 1e-4
