#!/usr/bin/python3
"""Every command that explains tokens writes the explanation schema (docs/explanation.schema.json).

Runs the salient binary on the fixture model: `explain` for methods of every family (text, sentence
pairs, and input ids), `expnet train` on a tiny rationale task then `expnet explain` and
`explain --method expnet`, `sst explain` and `explain --method sst`, and `benchmark`'s results.jsonl; validates every line with the
jsonschema library and checks what a schema cannot say (one score per token and per word).

  check_explanation_schema.py SALIENT_BIN SCHEMA

The fixture is found as salient finds it: $SALIENT_SHARED, else the nearest shared/ above the
working directory.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema


def run(binary, args, stdin=""):
    p = subprocess.run([binary, "--quiet", "--threads", "1", *args], input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: salient {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def check_lines(validator, text, what, expect_lines):
    lines = [l for l in text.splitlines() if l.strip()]
    if len(lines) != expect_lines:
        sys.exit(f"FAIL: {what}: {len(lines)} lines, expected {expect_lines}")
    for n, line in enumerate(lines, 1):
        obj = json.loads(line)
        errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.path))
        if errors:
            sys.exit(f"FAIL: {what} line {n}: {errors[0].message} at {list(errors[0].path)}")
        if len(obj["token_scores"]) != len(obj["tokens"]):
            sys.exit(f"FAIL: {what} line {n}: {len(obj['token_scores'])} scores for {len(obj['tokens'])} tokens")
        if "words" in obj and len(obj["word_scores"]) != len(obj["words"]):
            sys.exit(f"FAIL: {what} line {n}: {len(obj['word_scores'])} word scores for {len(obj['words'])} words")
    return [json.loads(l) for l in lines]


def shared_dir():
    if os.environ.get("SALIENT_SHARED"):
        return Path(os.environ["SALIENT_SHARED"])
    d = Path.cwd()
    for cand in [d, *d.parents]:
        if (cand / "shared" / "fixtures").is_dir():
            return cand / "shared"
    sys.exit("FAIL: shared data not found (set SALIENT_SHARED)")


def main():
    binary, schema_path = sys.argv[1:3]
    model = str(shared_dir() / "fixtures" / "reference-bert" / "model")
    schema = json.loads(Path(schema_path).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    inputs = "\n".join([
        "a charming and often affecting journey",
        json.dumps({"id": "pair", "text": "the film is bleak", "text_pair": "but honest"}),
        json.dumps({"id": 7, "input_ids": [101, 1037, 11951, 4990, 102]}),
    ]) + "\n"
    checked = 0
    for method, extra in [("ig", ["--steps", "8"]), ("saliency", []), ("occlusion", []), ("lime", ["--samples", "40"]),
                          ("kernel_shap", ["--samples", "40"]), ("attcat", []), ("rollout", []), ("lrp_full", []),
                          ("mgae", ["--heads", "0.1"]), ("random", [])]:
        out = run(binary, ["explain", "--model", model, "--method", method, *extra], inputs)
        objs = check_lines(validator, out, f"explain --method {method}", 3)
        if objs[0]["method"] != method or "words" not in objs[0] or "words" in objs[2] or objs[2]["id"] != 7:
            sys.exit(f"FAIL: explain --method {method}: fields do not follow the input")
        checked += len(objs)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # A tiny rationale task: the word "great" / "awful" carries the label.
        rows = []
        for i in range(24):
            good = i % 2 == 0
            words = ["the", "film", "was", "great" if good else "awful", "and", "long"]
            rows.append({"text": " ".join(words), "label": int(good), "rationale": [int(w in ("great", "awful")) for w in words]})
        task = tmp / "task.jsonl"
        task.write_text("".join(json.dumps(r) + "\n" for r in rows))
        net = tmp / "expnet"
        run(binary, ["expnet", "train", "--task", f"toy={model},train={task},val={task}", "--out", str(net), "--epochs", "2"])
        out = run(binary, ["expnet", "explain", "--model", model, "--expnet", str(net)], inputs.split("\n", 1)[0] + "\n")
        objs = check_lines(validator, out, "expnet explain", 1)
        if objs[0]["method"] != "expnet" or objs[0]["output"] is not None:
            sys.exit("FAIL: expnet explain: method/output")
        checked += 1
        out = run(binary, ["explain", "--model", model, "--method", "expnet", "--expnet", str(net)], inputs)
        checked += len(check_lines(validator, out, "explain --method expnet", 3))
        # benchmark's per-example results are explanations too.
        data = tmp / "data.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows[:4]))
        bench = tmp / "bench"
        run(binary, ["benchmark", "--model", model, "--data", str(data), "--methods", "ig,expnet", "--expnet", str(net),
                     "--steps", "8", "--metrics", "token_f1,comprehensiveness", "--out", str(bench)])
        checked += len(check_lines(validator, (bench / "results.jsonl").read_text(), "benchmark results.jsonl", 8))
        # SST's selection head: sst explain, and the same head through explain --method sst.
        sst = tmp / "sst"
        run(binary, ["sst", "train", "--train", str(task), "--dev", str(task), "--arch", "transformer", "--init", model,
                     "--epochs", "1", "--batch-size", "8", "--straight-through", "-o", str(sst)])
        checked += len(check_lines(validator, run(binary, ["sst", "explain", "--model", str(sst)], inputs), "sst explain", 3))
        out = run(binary, ["explain", "--model", str(sst), "--method", "sst", "--sst-scores", "selection"], inputs)
        checked += len(check_lines(validator, out, "explain --method sst", 3))
        # SMaT's learned head explainer (a coefficient file as `smat train` writes it; 2 layers x 4 heads).
        smat = tmp / "smat_explainer.json"
        smat.write_text(json.dumps({"method": "smat", "normalizer": "sparsemax", "num_layers": 2, "num_heads": 4,
                                    "layers": [0, 1], "coefficient_logits": [0.3, 0.1, 0.2, 0.0, 0.25, 0.05, 0.15, 0.1]}))
        out = run(binary, ["explain", "--model", model, "--method", "smat", "--smat", str(smat)], inputs)
        objs = check_lines(validator, out, "explain --method smat", 3)
        if objs[0]["method"] != "smat" or abs(sum(objs[0]["token_scores"]) - 1) > 1e-4:
            sys.exit("FAIL: explain --method smat: method, or scores that are not a distribution over the tokens")
        checked += len(objs)
    print(f"{checked} explanations valid against {schema_path}: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
