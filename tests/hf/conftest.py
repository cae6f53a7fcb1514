"""Shared by tests/hf: the packaged pre-trained encoder, HF's reading of it, and a classifier salient
fine-tunes from it once per session (both test files explain and compare that one model)."""
import csv
import json
import os
import subprocess
from pathlib import Path

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
