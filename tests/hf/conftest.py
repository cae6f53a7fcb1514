"""Shared by tests/hf: the packaged pre-trained encoder, HF's reading of it, and a classifier salient
fine-tunes from it once per session (both test files explain and compare that one model)."""
import csv
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import salient  # noqa: F401  first: it asks OpenBLAS for the kernels the CLI runs (salient/__init__.py)

REPO = Path(__file__).resolve().parents[2]
ENCODER = Path(os.environ.get("SALIENT_PRETRAINED", REPO / "models" / "pretrained")) / "all-minilm-l6-v2"
SALIENT_BIN = os.environ.get("SALIENT_BIN", str(REPO / "build" / "salient"))


def shared():
    env = os.environ.get("SALIENT_SHARED")
    return Path(env) if env else REPO.parent / "shared"


def real_texts():
    """SST-2 dev (872 sentences), the first 300 HateXplain test posts, 40 ERASER movie reviews
    (whole documents, far over 512 tokens) and hand-made edge cases: >= 1,200 texts."""
    data = shared() / "data"
    texts = []
    with open(data / "sst2_glue" / "dev.tsv", newline="") as f:
        texts += [row["sentence"] for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]
    with open(data / "hatexplain" / "hatexplain_test.jsonl") as f:
        for i, line in enumerate(f):
            if i == 300:
                break
            texts.append(" ".join(json.loads(line)["post_tokens"]))
    docs = sorted((data / "eraser_movies" / "docs").iterdir())[:40]
    texts += [d.read_text() for d in docs]
    texts += [
        "Café naïve résumé — déjà vu, Ångström, façade, Straße",  # accents stripped (uncased)
        "emoji 🤗🙂 and symbols ☃ ∑ get [UNK]",  # pieces outside the vocabulary
        "中文字符 and かな mixed with English",  # CJK characters are split one by one
        "tabs\tand\nnewlines  and\u00a0no-break spaces\u200b zero width",
        "don't can't won't -- it's (really) \"quoted\" $5.00 50% #tag @user",
        "supercalifragilisticexpialidocious antidisestablishmentarianism",
        "",
        "UPPER lower MiXeD",
    ]
    return texts


@pytest.fixture(scope="session")
def encoder_dir():
    assert (ENCODER / "model.safetensors").is_file(), f"{ENCODER}: run scripts/fetch_pretrained.sh first"
    return str(ENCODER)


@pytest.fixture(scope="session")
def hf_encoder(encoder_dir):
    import transformers
    m = transformers.BertModel.from_pretrained(encoder_dir, attn_implementation="eager")
    return m.eval()


@pytest.fixture(scope="session")
def fine_tuned(encoder_dir, tmp_path_factory):
    """A classifier fine-tuned from the packaged encoder by salient (a few steps: the head and
    every weight move away from the checkpoint's)."""
    out = tmp_path_factory.mktemp("ft") / "sst2-minilm"
    subprocess.run([SALIENT_BIN, "--quiet", "--threads", "2",
                    "train", "--init", encoder_dir, "--train", "sst2:train", "--dev", "sst2:dev", "--max-train", "96",
                    "--epochs", "1", "--batch-size", "16", "--max-length", "48", "--lr", "1e-4", "--seed", "3",
                    "--out", str(out)], check=True, capture_output=True, text=True)
    return str(out)


@pytest.fixture(scope="session")
def hf_classifier(fine_tuned):
    """HF's BertForSequenceClassification reading salient's checkpoint (eager attention, so that
    attention maps and their gradients are HF's own tensors)."""
    import transformers
    return transformers.BertForSequenceClassification.from_pretrained(fine_tuned, attn_implementation="eager").eval()


# Multilingual lines beside the real texts: accents, CJK, Arabic, Devanagari, emoji, combining marks,
# odd whitespace (the SentencePiece families' tests: test_hf_sentencepiece, test_hf_deberta).
MULTILINGUAL = [
    "Café naïve résumé — déjà vu, Ångström, façade, Straße",
    "中文字符 and かな mixed with English 한국어",
    "مرحبا بالعالم، هذا فيلم رائع",
    "नमस्ते दुनिया, यह फ़िल्म अच्छी है",
    "emoji 🤗🙂👍🏽 and symbols ☃ ∑ ½ ① ﬁ ligature",
    "e\u0301 combining a\u0308 and \u0915\u094d\u0937 conjuncts",
    "  leading and trailing spaces  ",
    "multiple     spaces\n\nand\tlines \u00a0 \u3000 wide space\u200b zero width \ufeff bom",
    "ｆｕｌｌ\u3000ｗｉｄｔｈ ＡＢＣ １２３",
    "UPPER lower MiXeD 1,234.56 $5 50% #tag @user",
]


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """The project's text for spm_train: the real texts, and the multilingual lines often enough
    that their characters earn pieces of their own."""
    path = tmp_path_factory.mktemp("spm") / "corpus.txt"
    lines = [t.replace("\n", " ") for t in real_texts() if t.strip()]
    path.write_text("\n".join(lines + MULTILINGUAL * 20) + "\n")
    return path


def train_spm(corpus, prefix, model_type, family):
    """Debian's spm_train; DeBERTa's models hold [PAD] [CLS] [SEP] [UNK] as ids 0-3."""
    ids = (["--pad_id=0", "--bos_id=1", "--eos_id=2", "--unk_id=3", "--pad_piece=[PAD]", "--bos_piece=[CLS]",
            "--eos_piece=[SEP]", "--unk_piece=[UNK]"] if family == "deberta" else [])
    subprocess.run(["spm_train", f"--input={corpus}", f"--model_prefix={prefix}", "--vocab_size=3000",
                    f"--model_type={model_type}", "--character_coverage=1.0", "--input_sentence_size=20000",
                    "--shuffle_input_sentence=false", "--num_threads=2", *ids], check=True, capture_output=True)
    return prefix.with_suffix(".model")


def hf_logits(hf, tok, singles, pair, max_length=128):
    """HF's logits for `singles` (one padded batch, truncated at max_length), then for one pair."""
    enc = tok(singles, truncation=True, max_length=max_length, padding=True, return_tensors="pt")
    return np.concatenate([hf(**enc).logits.numpy(), hf(**tok(*pair, return_tensors="pt")).logits.numpy()])


def fine_tune_briefly(init, out, lr="1e-4"):
    """`salient train --init INIT` for a few steps on 32 SST-2 sentences: a checkpoint salient wrote."""
    subprocess.run([SALIENT_BIN, "--quiet", "--threads", "2", "train", "--init", str(init), "--train", "sst2:train",
                    "--dev", "sst2:dev", "--max-train", "32", "--epochs", "1", "--batch-size", "16", "--max-length", "48",
                    "--lr", lr, "--seed", "3", "--out", str(out)], check=True, capture_output=True, text=True)
