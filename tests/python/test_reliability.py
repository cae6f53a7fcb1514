"""Determinism and crash safety (issue #15), through the real binary and the package:
- every registered explainer gives the same scores batched and one by one (1e-5 relative) and with
  1 and 2 threads (1e-6 relative);
- commands run twice with the same seed write byte-identical files;
- `train`, `benchmark` and the long runs (pretrain, vit/sst train, sst evaluate, studies, expnet
  evaluate) killed with SIGKILL at several points and resumed end with exactly the output of an
  uninterrupted run, and no output file is ever half-written."""
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


# scripts/sanitize.sh (SALIENT_SANITIZED=1) kills each job at fewer points: there the point is
# AddressSanitizer on the kill-and-resume paths, which the plain suite's full schedule already
# checks for equal results; at every point a sanitized run costs 3-5 times a plain one.
KILL_POINTS = 1 if os.environ.get("SALIENT_SANITIZED") == "1" else 3

def rel_err(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def cli(salient_bin, *args, threads=None, check=True, input=None):
    cmd = [salient_bin, "--quiet"] + (["--threads", str(threads)] if threads else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, input=input)
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


def test_learned_explainers_and_studies_run_twice_write_identical_bytes(salient_bin, model_dir, shared, tmp_path):
    """The learned explainers' commands (ExpNet, SST, ViT) and ExpNet's leave-one-task-out run, each
    run twice with the same seed: the same files, measured times aside."""
    from test_expnet_attattr import write_planted
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": f"{TEXTS[i % 5]} , take {i}", "label": int(i % 5 in (0, 2, 3))}) + "\n"
                            for i in range(40)))
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(TEXTS) + "\n")
    tasks = []
    for t, name in enumerate(("alpha", "beta")):
        files = [write_planted(tmp_path / f"{name}_{split}.jsonl", n, 10 * k + t)
                 for k, (split, n) in enumerate((("train", 40), ("val", 12), ("test", 12)))]
        tasks += ["--task", f"{name}={model_dir},train={files[0]},val={files[1]},test={files[2]}"]
    mnist = ["--data-dir", str(shared / "data")]
    outputs = {}
    for run in ("a", "b"):
        d = tmp_path / run
        d.mkdir()
        cli(salient_bin, "expnet", "train", *tasks[:2], "--out", str(d / "expnet"), "--hidden", "8", "--epochs", "3",
            "--seed", "4")
        cli(salient_bin, "expnet", "evaluate", *tasks, "--seeds", "0,1", "--baselines", "random,occlusion", "--hidden", "8",
            "--epochs", "3", "--filter", "off", "--tune-examples", "4", "--out", str(d / "loto"))
        (d / "loto" / "report.md").unlink()  # its cost table is measured; report.json keeps the rest
        cli(salient_bin, "sst", "train", "--train", str(data), "--dev", str(data), "--arch", "transformer", "--init", model_dir,
            "--epochs", "1", "--batch-size", "8", "--seed", "4", "--out", str(d / "sst"))
        # Outputs name the model's path: both runs explain with the first run's models (the models of
        # the two runs are compared byte for byte too).
        sst = str(tmp_path / "a" / "sst")
        cli(salient_bin, "sst", "explain", "--model", sst, "-i", str(inp), "-o", str(d / "sst-explain.jsonl"))
        cli(salient_bin, "sst", "evaluate", "--model", sst, "--standard", sst, "--data", str(data),
            "--limit", "4", "--accuracy-limit", "20", "--methods", "sst,sis,gradient", "--samples", "5", "--seed", "3",
            "-o", str(d / "sst-eval"))
        for name in ("table.md", "table.csv", "report.html"):  # their time column is measured; table.json keeps the rest
            (d / "sst-eval" / name).unlink()
        cli(salient_bin, "vit", "train", "--data", "mnist:train", "--dev", "mnist:val", *mnist, "--max-train-examples", "256",
            "--epochs", "1", "--hidden", "16", "--layers", "1", "--heads", "2", "--intermediate", "16", "--patch-size", "7",
            "--seed", "2", "--out", str(d / "vit"))
        for method in ("ig", "rollout"):
            cli(salient_bin, "vit", "explain", "--model", str(tmp_path / "a" / "vit"), "--data", "mnist:test", *mnist, "--limit", "2",
                "--method", method, "--out", str(d / f"vit-{method}"))
        outputs[run] = {p.relative_to(d): comparable(p) for p in sorted(d.rglob("*")) if p.is_file()}
    assert outputs["a"].keys() == outputs["b"].keys()
    differ = [str(k) for k in outputs["a"] if outputs["a"][k] != outputs["b"][k]]
    assert not differ, differ


# What legitimately differs between two runs (docs/RELIABILITY.md): measured wall times, rates and memory.
MEASURED = {"seconds", "train_seconds", "time_ms", "peak_mem_mb", "student_step_seconds", "meta_step_seconds",
            "meta_step_over_student_step", "examples_per_s", "seconds_per_explanation"}


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
    run_killed(cmd, sorted(random.uniform(0.15, 0.85) * seconds for _ in range(KILL_POINTS)), no_partial_files)
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


def test_a_model_larger_than_memory_is_refused_with_one_line(salient_bin, model_dir, tmp_path):
    """A checkpoint bigger than the memory left (a sparse file: no disk used) is refused before it
    is read, naming the file, instead of the process being killed by the kernel."""
    big = tmp_path / "big"
    big.mkdir()
    for name in os.listdir(model_dir):
        if name != "model.safetensors":
            (big / name).write_bytes((Path(model_dir) / name).read_bytes())
    weights = big / "model.safetensors"
    weights.write_bytes((Path(model_dir) / "model.safetensors").read_bytes())
    available = next(int(line.split()[1]) * 1024 for line in open("/proc/meminfo") if line.startswith("MemAvailable:"))
    os.truncate(weights, available)  # sparse: holes read as zeros
    r = subprocess.run([salient_bin, "predict", "--model", str(big)], input="good\n", capture_output=True, text=True)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(weights) in lines[0] and "GiB of memory" in lines[0], r.stderr


def all_json_parses(root):
    def check():
        for p in Path(root).rglob("*.json"):
            json.loads(p.read_text())  # written whole or not at all
    return check


def test_killed_long_runs_resume_to_the_uninterrupted_result(salient_bin, model_dir, shared, tmp_path):
    """pretrain, vit train, sst train, sst evaluate, a SMaT study, benchmark's simulability and
    expnet evaluate, each killed (SIGKILL) at three random points (pretrain six; one and two
    sanitized, KILL_POINTS) and resumed, end
    with the uninterrupted run's model, table or study results; after every kill each JSON file
    present parses, and student runs and leave-one-task-out units finished before a kill are kept."""
    rng = random.Random(6)
    words = ["the", "film", "is", "good", "bad", "a", "story", "of", "love", "and", "war", "slow", "funny"]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(" ".join(rng.choice(words) for _ in range(rng.randint(4, 12))) + "\n" for _ in range(400)))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": f"{TEXTS[i % 5]} , take {i}", "label": int(i % 5 in (0, 2, 3))}) + "\n"
                            for i in range(60)))
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"text": " ".join(rng.choice(words) for _ in range(4 + i % 5))}) + "\n"
                            for i in range(60)))
    data_dir = str(shared / "data")
    from test_expnet_attattr import write_planted
    planted_tasks = []
    for t, name in enumerate(("alpha", "beta")):
        files = [write_planted(tmp_path / f"{name}_{split}.jsonl", n, 10 * k + t)
                 for k, (split, n) in enumerate((("train", 60), ("val", 16), ("test", 16)))]
        planted_tasks += ["--task", f"{name}={model_dir},train={files[0]},val={files[1]},test={files[2]}"]
    jobs = {
        "pretrain": (["pretrain", "--corpus", str(corpus), "--vocab", model_dir, "--layers", "1", "--hidden", "32",
                      "--heads", "2", "--intermediate", "64", "--max-length", "16", "--batch-size", "8",
                      "--max-steps", "60", "--seed", "3", "--eval-every", "20", "--save-every", "5"], ["--resume"],
                     ["model.safetensors"]),
        "vit": (["vit", "train", "--data", "mnist:train", "--dev", "mnist:val", "--data-dir", data_dir,
                 "--max-train-examples", "512", "--epochs", "4", "--hidden", "16", "--layers", "1", "--heads", "2",
                 "--intermediate", "16", "--patch-size", "7", "--seed", "2"], ["--resume"], ["model.safetensors"]),
        "sst": (["sst", "train", "--train", str(data), "--dev", str(data), "--arch", "transformer", "--init", model_dir,
                 "--epochs", "4", "--batch-size", "8", "--seed", "4"], ["--resume"], ["model.safetensors"]),
        "study": (["smat", "study", "--teacher", model_dir, "--pool", str(pool), "--sizes", "8", "--seeds", "0,1",
                   "--explainers", "none,saliency,smat", *SMAT_STUDY_FLAGS], [], ["summary.json"]),
        "simulability": (["benchmark", "--model", model_dir, "--data", str(pool), "--methods", "saliency",
                          "--metrics", "simulability", "--sim-sizes", "8", "--sim-seeds", "0,1", "--sim-test-size", "12",
                          "--sim-valid-size", "8", "--sim-optimizer", "adamw", "--sim-lr", "0.001",
                          "--sim-max-epochs", "2"], [], ["simulability/summary.json"]),
        "expnet": (["expnet", "evaluate", *planted_tasks, "--seeds", "0,1,2", "--baselines", "random,occlusion",
                    "--hidden", "8", "--epochs", "4", "--filter", "off", "--tune-examples", "4"], [], ["report.json"]),
        "sst-evaluate": (["sst", "evaluate", "--model", str(tmp_path / "sst-whole"), "--standard", str(tmp_path / "sst-whole"),
                          "--data", str(data), "--limit", "12", "--accuracy-limit", "40", "--methods", "sst,sis,gradient",
                          "--samples", "5", "--seed", "3"], [], ["table.json"]),
    }
    for name, (args, resume, artifacts) in jobs.items():
        # pretrain checkpoints every few steps: more kill points land inside a checkpoint's writing.
        points = 2 * KILL_POINTS if name == "pretrain" else KILL_POINTS
        whole = tmp_path / f"{name}-whole"
        start = time.perf_counter()
        cli(salient_bin, *args, "--out", str(whole), threads=2)
        seconds = time.perf_counter() - start
        killed = tmp_path / f"{name}-killed"
        cmd = [salient_bin, "--quiet", "--threads", "2", *args, "--out", str(killed), *resume]
        finished = {}  # study run files present after a kill, with their modification times

        def after_kill():
            all_json_parses(killed)()
            # finished student runs (a study's, simulability's) and leave-one-task-out units
            for p in [*killed.glob("runs/*.json"), *killed.glob("simulability/runs/*.json"), *killed.glob("units/*.json")]:
                finished.setdefault(p, p.stat().st_mtime_ns)
        run_killed(cmd, sorted(rng.uniform(0.15, 0.85) * seconds for _ in range(points)), after_kill)
        for run, mtime in finished.items():  # finished work is never redone
            assert run.stat().st_mtime_ns == mtime, (name, run)
        for artifact in artifacts:
            assert comparable(killed / artifact) == comparable(whole / artifact), (name, artifact)
        # a write cut by a kill leaves NAME.salient-tmp.<host>.<pid>: the resumed run removes it
        leftovers = [str(p.relative_to(killed)) for p in killed.rglob("*") if ".salient-tmp." in p.name]
        assert not leftovers, (name, leftovers)
        if name == "study":
            runs = sorted(p.name for p in (whole / "runs").iterdir())
            assert sorted(p.name for p in (killed / "runs").iterdir()) == runs
            for run in runs:
                assert comparable(killed / "runs" / run) == comparable(whole / "runs" / run), run


SMAT_STUDY_FLAGS = ["--test-size", "12", "--valid-size", "8", "--optimizer", "adamw", "--lr", "0.001",
                    "--max-epochs", "2", "--batch-size", "4"]


def peak_rss_mb(cmd):
    """Runs cmd and returns its peak resident set (ru_maxrss of the child) in MiB."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, p.stderr.read().decode()
    return usage.ru_maxrss / 1024


@pytest.mark.measures_memory
def test_inputs_stream_in_bounded_memory(salient_bin, model_dir, tmp_path):
    """predict and explain read their input a block at a time and stream their output into the
    file they put in place at the end: 30 times more lines must not take more memory (measured:
    1.6 MiB more peak RSS for 29,000 more lines)."""
    for lines in (1000, 30000):
        (tmp_path / f"in{lines}.jsonl").write_text(
            "".join(json.dumps({"text": f"{TEXTS[i % 5]} , line {i}", "id": i}) + "\n" for i in range(lines)))
    rss = {}
    for lines in (1000, 30000):
        inp, out = tmp_path / f"in{lines}.jsonl", tmp_path / f"out{lines}.jsonl"
        rss[lines] = peak_rss_mb([salient_bin, "--quiet", "--threads", "1", "predict", "--model", model_dir, "-i", str(inp),
                                  "-o", str(out), "--format", "json"])
        assert len(out.read_text().splitlines()) == lines
    assert rss[30000] - rss[1000] < 8, rss
    # explain: the same lines as a whole-input run (blocks are whole batches), in bounded memory.
    small = tmp_path / "in1000.jsonl"
    cli(salient_bin, "explain", "--model", model_dir, "--method", "saliency", "-i", str(small), "-o",
        str(tmp_path / "ex.jsonl"), "--batch-size", "7", "--format", "json", threads=1)
    got = (tmp_path / "ex.jsonl").read_text().splitlines()
    assert len(got) == 1000 and json.loads(got[-1])["id"] == 999
    first_batches = cli(salient_bin, "explain", "--model", model_dir, "--method", "saliency", "--batch-size", "7",
                     "--format", "json", "-i", "-", threads=1, input="\n".join(small.read_text().splitlines()[:14]) + "\n")
    assert first_batches.stdout.splitlines() == got[:14]  # the same batches, read from stdin
