"""RoBERTa's byte-level BPE tokenizer and a RoBERTa classifier, salient against Hugging Face.

No RoBERTa weights can be had here, so the tokenizer is one Hugging Face `tokenizers` trains on
SST-2's training sentences (GPT-2's byte alphabet, RoBERTa's special tokens and post-processor,
saved by RobertaTokenizerFast as tokenizer.json and as vocab.json + merges.txt) and the model is a
RobertaForSequenceClassification HF initialises at random. Checked on the 1,220 real texts of
test_hf_parity: ids, byte offsets, words and token types of salient's tokenizer against HF's fast
and slow tokenizers (singles, pairs, truncation, add_prefix_space, <mask> with lstrip), logits from
text, and HF reading the tokenizer salient writes. Runs in .venv-ref (tests/hf/run.sh)."""
import csv
import shutil

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")  # run.sh skips first, with the reason, when absent
tokenizers = pytest.importorskip("tokenizers")
import salient  # noqa: E402
from conftest import fine_tune_briefly, hf_logits, real_texts, shared  # noqa: E402

torch.set_grad_enabled(False)

EDGE = [
    "a <mask> here and <mask>there, <s> inside </s> the text",
    "  leading and trailing spaces  ",
    "multiple     spaces\n\nand\tlines \u00a0 \u3000 wide space",
    "I'll've 'S 'll'm it's ''d",
    "é at the start; 🤗 emoji; 中文 text; ٣ digits ١٢",
    "\u00e9\u0301 combining and \ufeff bom",
]


def byte_offsets(text, offsets):
    """HF's character offsets as byte offsets (salient's)."""
    def b(c):
        return len(text[:c].encode("utf-8"))
    return [[b(s), b(e)] for s, e in offsets]


@pytest.fixture(scope="session")
def sst2_sentences():
    with open(shared() / "data" / "sst2_glue" / "train.tsv", newline="") as f:
        return [row["sentence"] for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]


def make_roberta(out, sentences, add_prefix_space):
    """A byte-level BPE of 3,000 tokens trained on SST-2 by HF's tokenizers, saved by
    RobertaTokenizerFast, beside a random 2-layer RobertaForSequenceClassification."""
    bpe = tokenizers.ByteLevelBPETokenizer(add_prefix_space=add_prefix_space)
    bpe.train_from_iterator(sentences, vocab_size=3000, min_frequency=2,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    bpe.save_model(str(out))  # vocab.json + merges.txt
    tok = transformers.RobertaTokenizerFast(vocab_file=str(out / "vocab.json"), merges_file=str(out / "merges.txt"),
                                            add_prefix_space=add_prefix_space)
    tok.save_pretrained(out)
    torch.manual_seed(0)
    cfg = transformers.RobertaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=64, max_position_embeddings=130, num_labels=2,
                                     id2label={0: "negative", 1: "positive"}, label2id={"negative": 0, "positive": 1})
    transformers.RobertaForSequenceClassification(cfg).eval().save_pretrained(out, safe_serialization=True)
    return tok


@pytest.fixture(scope="session", params=[False, True], ids=["plain", "add_prefix_space"])
def roberta(request, sst2_sentences, tmp_path_factory):
    out = tmp_path_factory.mktemp("roberta")
    tok = make_roberta(out, sst2_sentences, request.param)
    return out, tok


def texts_under_test():
    return real_texts() + EDGE


def test_byte_level_bpe_matches_hf_fast_and_slow(roberta):
    out, fast = roberta
    texts = texts_under_test()
    m = salient.load(out)
    ours = m.tokenize(texts, max_length=128)
    ref = fast(texts, truncation=True, max_length=128, return_offsets_mapping=True)
    slow = transformers.RobertaTokenizer.from_pretrained(out)  # vocab.json + merges.txt
    slow_ids = slow(texts, truncation=True, max_length=128)["input_ids"]
    bad = []
    for i, (a, text) in enumerate(zip(ours, texts)):
        words = ref.word_ids(i)
        # salient numbers every word, specials included; HF leaves specials None: compare the grouping
        pairs = {(x, y) for x, y in zip(a["word_ids"], words) if y is not None}
        same_grouping = len(pairs) == len({x for x, _ in pairs}) == len({y for _, y in pairs})
        # HF's slow tokenizer departs from its fast one after a special token with
        # add_prefix_space (no space prefixed to what follows it): salient is the fast one
        slow_agrees = slow_ids[i] == ref["input_ids"][i]
        if (list(a["ids"]) != ref["input_ids"][i] or (slow_agrees and list(a["ids"]) != slow_ids[i])
                or [list(o) for o in a["offsets"]] != byte_offsets(text, ref["offset_mapping"][i])
                or not same_grouping or set(a["type_ids"]) != {0}):
            bad.append(i)
    assert not bad, f"{len(bad)} of {len(texts)} texts differ, first: {texts[bad[0]][:80]!r}"
    assert sum(s == f for s, f in zip(slow_ids, ref["input_ids"])) >= len(texts) - 2
    assert sum(bool(e["truncated"]) for e in ours) >= 40
    assert any(fast.mask_token_id in e["ids"] for e in ours)


def test_pairs_and_truncation_match_hf(roberta):
    out, fast = roberta
    texts = texts_under_test()
    m = salient.load(out)
    pairs = [(texts[i], texts[-1 - i]) for i in range(0, 400, 3)]
    for max_length in (16, 64, 128):
        ours = m.tokenize(pairs, max_length=max_length)
        ref = fast([a for a, _ in pairs], [b for _, b in pairs], truncation="longest_first", max_length=max_length)
        for k, (a, ids) in enumerate(zip(ours, ref["input_ids"])):
            assert list(a["ids"]) == ids, f"pair {k} at max_length {max_length}"
            assert set(a["type_ids"]) == {0}  # RoBERTa has one token type


def test_logits_from_text_match_hf(roberta):
    out, fast = roberta
    # two whole reviews too: salient cuts them at the model's 128 positions as HF's truncation does
    texts = real_texts()[:24] + real_texts()[1175:1177] + EDGE + [("a charming journey", "not bad at all, actually quite charming")]
    hf = transformers.RobertaForSequenceClassification.from_pretrained(out, attn_implementation="eager").eval()
    preds = salient.load(out).predict(texts)
    ref = hf_logits(hf, fast, [t for t in texts if isinstance(t, str)], texts[-1])
    assert np.abs(np.array([p.logits for p in preds]) - ref).max() < 1e-4


def test_slow_tokenizer_files_alone_and_hf_reads_what_salient_writes(roberta, tmp_path):
    out, fast = roberta
    texts = texts_under_test()[:300]
    # vocab.json + merges.txt + tokenizer_config.json without tokenizer.json
    slow_only = tmp_path / "slow-only"
    shutil.copytree(out, slow_only)
    (slow_only / "tokenizer.json").unlink()
    ours = salient.load(slow_only).tokenize(texts, max_length=128)
    assert [list(e["ids"]) for e in ours] == fast(texts, truncation=True, max_length=128)["input_ids"]
    # salient fine-tunes the model (a few steps) and writes its tokenizer beside the weights
    tuned = tmp_path / "tuned"
    fine_tune_briefly(out, tuned)
    back = transformers.AutoTokenizer.from_pretrained(tuned)
    assert type(back).__name__ == "RobertaTokenizerFast"
    assert back(texts, truncation=True, max_length=128)["input_ids"] == \
        [list(e["ids"]) for e in salient.load(tuned).tokenize(texts, max_length=128)]
    assert back(texts, truncation=True, max_length=128)["input_ids"] == \
        fast(texts, truncation=True, max_length=128)["input_ids"]
