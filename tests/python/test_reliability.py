"""Determinism and crash safety (issue #15), through the real binary and the package:
- every registered explainer gives the same scores batched and one by one (1e-5 relative) and with
  1 and 2 threads (1e-6 relative);
- commands run twice with the same seed write byte-identical files;
- `train` and `benchmark` killed with SIGKILL at several points and resumed end with exactly the
  output of an uninterrupted run, and no output file is ever half-written."""
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import salient

TEXTS = ["a charming and moving journey", "dull , flat and far too long", "not bad at all",
         "the best film of the year , funny and sharp", "bad"]
# Learned methods need a trained artifact (their own tests cover them).
NEEDS_ARTIFACT = {"expnet", "sst", "smat"}


def rel_err(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def cli(salient_bin, *args, threads=None, check=True):
    cmd = [salient_bin, "--quiet"] + (["--threads", str(threads)] if threads else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)}: {r.stderr}")
    return r


def explain_lines(salient_bin, model_dir, method, tmp_path, batch_size, threads):
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(TEXTS) + "\n")
    out = tmp_path / f"{method}_{batch_size}_{threads}.jsonl"
    cli(salient_bin, "explain", "--model", model_dir, "--method", method, "-i", str(inp), "-o", str(out),
        "--batch-size", str(batch_size), "--format", "json", threads=threads)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_every_explainer_is_batch_and_thread_invariant(salient_bin, model_dir, tmp_path):
    methods = [m.name for m in salient.methods() if m.name not in NEEDS_ARTIFACT]
    family = {m.name: m.family for m in salient.methods()}
    assert len(methods) >= 19
    failures = []
    for method in methods:
        base = explain_lines(salient_bin, model_dir, method, tmp_path, 4, 2)
        single = explain_lines(salient_bin, model_dir, method, tmp_path, 1, 2)
        one_thread = explain_lines(salient_bin, model_dir, method, tmp_path, 4, 1)
        for i in range(len(TEXTS)):
            s = base[i]["token_scores"]
            if rel_err(single[i]["token_scores"], s) > 1e-5:
                failures.append(f"{method}: batched vs one by one, input {i}: {rel_err(single[i]['token_scores'], s):.2e}")
            # A different thread count changes OpenBLAS's float32 blocking. Scores that are differences
            # of float32 probabilities (perturbation methods: p(x) - p(x')) carry that rounding
            # (2^-24 of a probability near 1) whatever their own size, so they may also differ by up
            # to 2.5e-7 absolute; every other score agrees within 1e-6 relative.
            floor = 2.5e-7 if base[i]["output"] == "prob" and family[method] == "perturbation" else 0.0
            err = np.max(np.abs(np.asarray(one_thread[i]["token_scores"]) - np.asarray(s)))
            if rel_err(one_thread[i]["token_scores"], s) > 1e-6 and err > floor:
                failures.append(f"{method}: 1 vs 2 threads, input {i}: {rel_err(one_thread[i]['token_scores'], s):.2e} "
                                f"relative, {err:.2e} absolute")
    assert not failures, "\n".join(failures)


def test_repeated_commands_write_identical_bytes(salient_bin, model_dir, tmp_path, shared):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": t, "label": i % 2}) + "\n" for i, t in enumerate(TEXTS)))
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(TEXTS) + "\n")
    outputs = {}
    for run in ("a", "b"):
        d = tmp_path / run
        d.mkdir()
        cli(salient_bin, "predict", "--model", model_dir, "-i", str(inp), "-o", str(d / "pred.jsonl"))
        for method in ("lime", "kernel_shap", "ig", "occlusion"):
            cli(salient_bin, "explain", "--model", model_dir, "--method", method, "-i", str(inp), "-o",
                str(d / f"{method}.jsonl"), "--format", "json", "--seed", "7")
        cli(salient_bin, "benchmark", "--model", model_dir, "--data", str(data), "--methods", "saliency,lime",
            "--metrics", "comprehensiveness,sufficiency", "--bootstrap", "100", "--out", str(d / "bench"))
        cli(salient_bin, "attattr", "attribute", "--model", model_dir, "-i", str(inp), "-o", str(d / "attattr.jsonl"), "--m", "4")
        cli(salient_bin, "train", "--train", str(data), "--dev", str(data), "--vocab",
            str(shared / "data" / "bert_base_uncased_tokenizer"), "--out", str(d / "model"), "--hidden", "16",
            "--layers", "1", "--heads", "2", "--intermediate", "32", "--epochs", "2", "--batch-size", "2", "--seed", "3")
        outputs[run] = {p.relative_to(d): comparable(p) for p in sorted(d.rglob("*")) if p.is_file()}
    assert outputs["a"].keys() == outputs["b"].keys()
    differ = [str(k) for k in outputs["a"] if outputs["a"][k] != outputs["b"][k]]
    assert not differ, differ


# What legitimately differs between two runs (docs/RELIABILITY.md): measured wall times and memory.
MEASURED = {"seconds", "train_seconds", "time_ms", "peak_mem_mb"}


def comparable(path):
    if path.suffix in (".json", ".jsonl"):
        def strip(v):
            if isinstance(v, dict):
                return {k: strip(x) for k, x in v.items() if k not in MEASURED}
            if isinstance(v, list):
                return [strip(x) for x in v]
            return v
        text = path.read_text()
        if path.suffix == ".json":
            return json.dumps(strip(json.loads(text)), sort_keys=True)
        return [json.dumps(strip(json.loads(line)), sort_keys=True) for line in text.splitlines()]
    return path.read_bytes()


def run_killed(cmd, points, check_outputs):
    """Runs cmd, SIGKILLs it after each of `points` seconds (rerunning with --resume between), then
    lets it finish; check_outputs() runs after every kill (no half-written file)."""
    for t in points:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(t)
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
        p.wait()
        check_outputs()
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_killed_training_resumes_to_the_uninterrupted_model(salient_bin, shared, tmp_path):
    vocab = str(shared / "data" / "bert_base_uncased_tokenizer")
    args = ["--train", "sst2:dev", "--dev", "sst2:dev", "--vocab", vocab, "--hidden", "32", "--layers", "2",
            "--heads", "2", "--intermediate", "64", "--epochs", "4", "--batch-size", "16", "--seed", "5",
            "--data-dir", str(shared / "data")]
    whole = tmp_path / "whole"
    start = time.perf_counter()
    cli(salient_bin, "train", *args, "--out", str(whole), threads=2)
    seconds = time.perf_counter() - start
    killed = tmp_path / "killed"
    cmd = [salient_bin, "--quiet", "--threads", "2", "train", *args, "--out", str(killed), "--resume"]

    def no_partial_files():
        for p in killed.rglob("*.json"):
            json.loads(p.read_text())  # every JSON file present parses: written whole or not at all

    random.seed(1)  # kill points inside the run's span, each a fresh attempt that resumes
    run_killed(cmd, sorted(random.uniform(0.15, 0.85) * seconds for _ in range(3)), no_partial_files)
    assert (killed / "model.safetensors").read_bytes() == (whole / "model.safetensors").read_bytes()


def test_killed_benchmark_resumes_to_the_uninterrupted_summary(salient_bin, model_dir, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": f"{t} , take {i}", "label": i % 2}) + "\n"
                            for i, t in enumerate(TEXTS * 6)))
    base = ["benchmark", "--model", model_dir, "--data", str(data), "--methods", "lime,ig",
            "--metrics", "comprehensiveness,sufficiency", "--bootstrap", "100", "--batch-size", "2"]
    start = time.perf_counter()
    cli(salient_bin, *base, "--out", str(tmp_path / "whole"))
    seconds = time.perf_counter() - start
    out = tmp_path / "killed"
    cmd = [salient_bin, "--quiet", *base, "--out", str(out)]

    def results_are_whole_lines():
        path = out / "results.jsonl"
        if path.exists():
            text = path.read_text()
            lines = text.split("\n")
            for line in lines[:-1]:
                json.loads(line)  # every complete line parses
        for name in ("summary.json",):
            if (out / name).exists():
                json.loads((out / name).read_text())

    random.seed(2)
    run_killed(cmd, [random.uniform(0.15, 0.6) * seconds for _ in range(3)], results_are_whole_lines)
    want = json.loads((tmp_path / "whole" / "summary.json").read_text())
    got = json.loads((out / "summary.json").read_text())
    # A resumed run explains the remaining examples in other batches: float rounding may differ
    # in the last bits (batch invariance holds to 1e-5 relative, tested above).
    assert_close(got, want)
    # After the resume every line of results.jsonl is a whole record, one per (example, method).
    lines = (out / "results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len({(r["index"], r["method"]) for r in records}) == len(TEXTS * 6) * 2

    # A record cut in the middle of its line (a kill during the write) is dropped and recomputed,
    # not glued to the next one.
    whole_lines = lines
    (out / "results.jsonl").write_text("\n".join(whole_lines[:-1]) + "\n" + whole_lines[-1][:25])
    cli(salient_bin, *base, "--out", str(out))
    again = {(r["index"], r["method"]): r["token_scores"] for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    before = {(r["index"], r["method"]): r["token_scores"] for r in map(json.loads, whole_lines)}
    assert again.keys() == before.keys()
    for key in before:
        assert rel_err(again[key], before[key]) < 1e-5, key
    assert_close(json.loads((out / "summary.json").read_text()), want)


def assert_close(got, want, path="summary"):
    """Equal structure; numbers within 1e-5 relative or 1e-9 absolute (measured cost fields left out)."""
    if isinstance(want, dict):
        assert set(got) == set(want), path
        for k in want:
            if k not in MEASURED:
                assert_close(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{path}[{i}]")
    elif isinstance(want, float) and isinstance(got, float):
        assert abs(got - want) <= 1e-5 * abs(want) + 1e-9, (path, got, want)
    else:
        assert got == want, (path, got, want)


def limited_files(max_bytes):
    """preexec_fn: files may not grow past max_bytes (RLIMIT_FSIZE), and the write that would is
    refused with EFBIG instead of killing the process (SIGXFSZ ignored): a full disk, injected."""
    import resource

    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))
    return apply


def test_a_full_disk_is_a_one_line_error_and_earlier_outputs_stay(salient_bin, model_dir, tmp_path):
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(TEXTS * 4) + "\n")
    out = tmp_path / "out.jsonl"
    out.write_text("earlier output\n")

    def run(args, max_bytes):
        return subprocess.run([salient_bin, "--quiet", "--threads", "1", *args], capture_output=True, text=True,
                              preexec_fn=limited_files(max_bytes))

    def one_line_error(r, path):
        assert r.returncode != 0
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and "write failed" in lines[0], r.stderr

    # explain: the output is written whole or not at all.
    r = run(["explain", "--model", model_dir, "--method", "saliency", "-i", str(inp), "-o", str(out),
             "--format", "json"], 2000)
    one_line_error(r, out)
    assert out.read_text() == "earlier output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.jsonl"]  # no temporary left

    # benchmark: records appended one batch at a time; the disk fills inside results.jsonl.
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": t, "label": i % 2}) + "\n" for i, t in enumerate(TEXTS * 4)))
    bench = tmp_path / "bench"
    args = ["benchmark", "--model", model_dir, "--data", str(data), "--methods", "saliency",
            "--metrics", "comprehensiveness", "--batch-size", "2", "--out", str(bench)]
    r = run(args, 6000)
    one_line_error(r, bench / "results.jsonl")
    assert not (bench / "summary.json").exists()
    # With room again the run resumes from the whole records it kept.
    r = run(args, 1 << 30)
    assert r.returncode == 0, r.stderr
    assert len((bench / "results.jsonl").read_text().splitlines()) == len(TEXTS * 4)
    summary = (bench / "summary.json").read_bytes()
    # A full disk while the summary is rewritten leaves the earlier summary in place.
    r = run([*args[:-2], "--bootstrap", "7", "--out", str(bench)], 100)
    one_line_error(r, bench / "summary.md")
    assert (bench / "summary.json").read_bytes() == summary

    # train: a checkpoint that does not fit is an error, not a short model file.
    train = tmp_path / "train"
    r = run(["train", "--train", str(data), "--dev", str(data), "--vocab", model_dir, "--hidden", "32", "--layers", "1",
             "--heads", "2", "--intermediate", "64", "--epochs", "1", "--out", str(train)], 1 << 20)
    one_line_error(r, train)
    assert not (train / "model.safetensors").exists()
