"""Sharded runs under Open MPI (issue #16, docs/distributed.md), on loopback with 2 ranks:
`mpirun -np 2 salient explain` writes the bytes one process writes, `benchmark` its records and
summaries, the studies (`attattr`, `smat study`, `expnet evaluate`, `sst evaluate`) their results;
a run with a rank killed by
SIGKILL resumes, recomputing only the chunks that were not finished; without mpirun (or with one
rank) the plain single-process path runs."""
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

TEXTS = ["a charming and moving journey", "dull , flat and far too long", "not bad at all",
         "the best film of the year , funny and sharp", "bad", "an uneven but often funny ride",
         "it never finds its footing", "a quiet , lovely film", "too long by half", "sharp and sad"] * 3

MPIRUN = shutil.which("mpirun")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl="self,vader,tcp", OMPI_MCA_btl_tcp_if_include="lo", OMPI_MCA_oob_tcp_if_include="lo",
           # containers may forbid the cross-process reads (ptrace) of the single-copy path
           OMPI_MCA_btl_vader_single_copy_mechanism="none")
if os.environ.get("SALIENT_SANITIZED") == "1":
    # scripts/sanitize.sh: Open MPI keeps what it allocates until exit, partly in plugins it has
    # unloaded (frames no suppression can name), so LeakSanitizer is off for the ranks; every
    # other AddressSanitizer and UBSan check stays on.
    ENV["ASAN_OPTIONS"] = ENV.get("ASAN_OPTIONS", "") + ":detect_leaks=0"


def built_with_mpi(salient_bin):
    return b"MPI" in subprocess.run([salient_bin, "info", "--json"], capture_output=True).stdout


needs_mpi = pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed (Debian openmpi-bin; scripts/setup.sh)")


def explain_args(model_dir, inp, out, method, batch=2, extra=()):
    return ["--quiet", "--threads", "1", "explain", "--model", model_dir, "--method", method, "-i", str(inp),
            "-o", str(out), "--batch-size", str(batch), "--format", "json", *extra]


def mpi(salient_bin, args, np_=2, **kw):
    return subprocess.run([MPIRUN, "-np", str(np_), "--oversubscribe", salient_bin, *args], env=ENV, capture_output=True,
                          text=True, **kw)


@needs_mpi
@pytest.mark.parametrize("method", ["ig", "occlusion", "lime"])
def test_two_ranks_write_the_bytes_of_one_process(salient_bin, model_dir, tmp_path, method):
    assert built_with_mpi(salient_bin), "salient was built without MPI although mpirun is installed"
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(TEXTS) + "\n")
    one = tmp_path / "one.jsonl"
    subprocess.run([salient_bin, *explain_args(model_dir, inp, one, method)], check=True)
    two = tmp_path / "two.jsonl"
    r = mpi(salient_bin, explain_args(model_dir, inp, two, method))
    assert r.returncode == 0, r.stderr
    assert two.read_bytes() == one.read_bytes()
    assert not Path(str(two) + ".shards").exists()  # merged and cleaned up


@needs_mpi
def test_two_ranks_benchmark_as_one_process(salient_bin, model_dir, tmp_path):
    """results.jsonl in one process's order with its values (all but the per-example time and
    memory), and the summaries and heatmaps byte for byte; simulability's student runs as one process trains them."""
    import json as _json
    data = tmp_path / "data.jsonl"
    data.write_text("".join(_json.dumps({"text": f"{t} , take {i}", "label": i % 2}) + "\n"
                            for i, t in enumerate(TEXTS)))
    args = lambda out, *more: ["--quiet", "--threads", "1", "benchmark", "--model", model_dir, "--data", str(data),  # noqa: E731
                               "--methods", "lime,ig,occlusion", "--metrics", "comprehensiveness,sufficiency",
                               "--bootstrap", "50", "--batch-size", "3", "--out", str(out), *more]
    subprocess.run([salient_bin, *args(tmp_path / "one")], check=True, capture_output=True)
    r = mpi(salient_bin, args(tmp_path / "two"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == (tmp_path / "one" / "summary.md").read_text()  # rank 0 alone prints it

    def records(d):
        out = []
        for line in (d / "results.jsonl").read_text().splitlines():
            rec = _json.loads(line)
            del rec["metrics"]["time_ms"], rec["metrics"]["peak_mem_mb"]
            out.append(rec)
        return out
    assert records(tmp_path / "two") == records(tmp_path / "one")
    for name in ("summary.json", "summary.csv", "summary.md", "heatmaps.html"):
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
    assert not (tmp_path / "two" / "results.jsonl.shards").exists()

    # A one-process run cut short, then finished sharded: the done records are kept, not recomputed.
    part = tmp_path / "part"
    part.mkdir()
    lines = (tmp_path / "one" / "results.jsonl").read_text().splitlines(keepends=True)
    kept = lines[:3] + lines[12:15]  # whole (batch, method) groups: lime on 0-2, ig on 3-5
    (part / "results.jsonl").write_text("".join(kept))
    r = mpi(salient_bin, args(part))
    assert r.returncode == 0, r.stderr
    got = (part / "results.jsonl").read_text().splitlines(keepends=True)
    for line in kept:  # byte-identical: taken from the file, not explained again
        assert line in got
    assert records(part) == records(tmp_path / "one")

    # Simulability trains students (a SMaT study): their runs are shared out; the same runs and summary.
    from test_reliability import comparable
    sim = lambda out: ["--quiet", "--threads", "1", "benchmark", "--model", model_dir, "--data", str(data),  # noqa: E731
                       "--methods", "saliency", "--metrics", "simulability", "--sim-sizes", "8", "--sim-seeds", "0,1",
                       "--sim-test-size", "12", "--sim-valid-size", "8", "--sim-optimizer", "adamw",
                       "--sim-lr", "0.001", "--sim-max-epochs", "2", "--out", str(out / "bench")]
    subprocess.run([salient_bin, *sim(tmp_path / "sim1")], check=True, capture_output=True)
    r = mpi(salient_bin, sim(tmp_path / "sim2"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("Simulability (") == 1  # rank 0 alone prints the report
    runs = sorted(p.name for p in (tmp_path / "sim1" / "bench" / "simulability" / "runs").iterdir())
    assert len(runs) == 4, runs
    for name in runs + ["../summary.json"]:
        one, two = (tmp_path / d / "bench" / "simulability" / "runs" / name for d in ("sim1", "sim2"))
        assert comparable(two) == comparable(one), name


@needs_mpi
def test_two_ranks_attattr_attribute_and_heads_as_one_process(salient_bin, model_dir, tmp_path):
    """attattr attribute: one process's lines byte for byte. attattr heads: each sum is joined from
    its per-example (per Taylor batch) terms in example order, so the JSON is byte-identical too;
    3 ranks and a Taylor batch that does not divide the examples included."""
    import json as _json
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(TEXTS[:9]) + "\n")
    attr = lambda out: ["--quiet", "--threads", "1", "attattr", "attribute", "--model", model_dir, "-i", str(inp),  # noqa: E731
                        "-o", str(out), "--m", "4"]
    subprocess.run([salient_bin, *attr(tmp_path / "one.jsonl")], check=True, capture_output=True)
    r = mpi(salient_bin, attr(tmp_path / "two.jsonl"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()

    data = tmp_path / "data.jsonl"
    data.write_text("".join(_json.dumps({"text": t, "label": i % 2}) + "\n" for i, t in enumerate(TEXTS)))
    heads = lambda out: ["--quiet", "--threads", "1", "attattr", "heads", "--model", model_dir, "--data", str(data),  # noqa: E731
                         "--m", "4", "--taylor-batch", "7", "--seed", "3", "-o", str(out)]
    subprocess.run([salient_bin, *heads(tmp_path / "one.json")], check=True, capture_output=True)
    for ranks in (2, 3):
        out = tmp_path / f"heads{ranks}.json"
        r = mpi(salient_bin, heads(out), np_=ranks)
        assert r.returncode == 0, r.stderr
        assert out.read_bytes() == (tmp_path / "one.json").read_bytes(), ranks
    r = mpi(salient_bin, ["--quiet", "attattr", "heads", "--model", model_dir, "--data", str(data)])
    assert r.returncode != 0 and "output file" in r.stderr
    r = mpi(salient_bin, ["--quiet", "attattr", "prune", "--model", model_dir, "--data", str(data)])
    assert r.returncode != 0 and "does not run sharded" in r.stderr


@needs_mpi
def test_two_ranks_run_a_smat_study_as_one_process(salient_bin, model_dir, tmp_path):
    """The student runs of a study shared out over 2 ranks: the same run files (all but measured
    times) and the same report as one process; a rerun finds every run done."""
    import json as _json
    import random
    from test_reliability import comparable
    rng = random.Random(2)
    words = ["the", "film", "is", "good", "bad", "a", "story", "of", "love", "and", "war", "slow", "funny"]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(_json.dumps({"text": " ".join(rng.choice(words) for _ in range(4 + i % 5))}) + "\n"
                            for i in range(60)))
    study = lambda out: ["--quiet", "--threads", "1", "smat", "study", "--teacher", model_dir, "--pool", str(pool),  # noqa: E731
                         "--sizes", "8,12", "--seeds", "0,1", "--explainers", "none,saliency,smat", "--test-size", "12",
                         "--valid-size", "8", "--optimizer", "adamw", "--lr", "0.001", "--max-epochs", "2",
                         "--batch-size", "4", "-o", str(out)]
    subprocess.run([salient_bin, *study(tmp_path / "one")], check=True, capture_output=True)
    r = mpi(salient_bin, study(tmp_path / "two"))
    assert r.returncode == 0, r.stderr
    runs = sorted(p.name for p in (tmp_path / "one" / "runs").iterdir())
    assert len(runs) == 12 and sorted(p.name for p in (tmp_path / "two" / "runs").iterdir()) == runs
    for name in runs:
        assert comparable(tmp_path / "two" / "runs" / name) == comparable(tmp_path / "one" / "runs" / name), name
    for name in ("explainers/smat_n8_s0.json", "explainers/smat_n12_s1.json"):  # its meta run's times differ
        assert comparable(tmp_path / "two" / name) == comparable(tmp_path / "one" / name), name
    for name in ("data.json", "study.json", "heads_n8.svg", "heads_n12.svg"):
        assert (tmp_path / "two" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name
    summary = lambda d: {k: v for k, v in _json.loads((d / "summary.json").read_text()).items() if k != "cost"}  # noqa: E731
    assert summary(tmp_path / "two") == summary(tmp_path / "one")
    assert r.stdout.count("| smat |") == 1  # rank 0 alone prints the report
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "two" / "runs").iterdir()}
    assert mpi(salient_bin, study(tmp_path / "two")).returncode == 0
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "two" / "runs").iterdir()} == before


@needs_mpi
def test_two_ranks_run_expnet_evaluate_as_one_process(salient_bin, model_dir, tmp_path):
    """Leave-one-task-out units (an ExpNet run per held-out task and seed, a baseline per held-out
    task) shared out over 2 ranks: the unit files and the report of one process; a rerun under
    mpirun recomputes no unit."""
    from test_expnet_attattr import write_planted
    from test_reliability import comparable
    tasks = []
    for t, name in enumerate(("alpha", "beta")):
        files = [write_planted(tmp_path / f"{name}_{split}.jsonl", n, 10 * k + t)
                 for k, (split, n) in enumerate((("train", 60), ("val", 20), ("test", 20)))]
        tasks += ["--task", f"{name}={model_dir},train={files[0]},val={files[1]},test={files[2]}"]
    args = lambda out: ["--quiet", "--threads", "1", "expnet", "evaluate", *tasks, "--seeds", "0,1",  # noqa: E731
                        "--baselines", "random,raw_attention,occlusion", "--hidden", "8",
                        "--epochs", "3", "--filter", "off", "--tune-examples", "5", "--out", str(out)]
    subprocess.run([salient_bin, *args(tmp_path / "one")], check=True, capture_output=True)
    r = mpi(salient_bin, args(tmp_path / "two"))
    assert r.returncode == 0, r.stderr
    units = sorted(p.name for p in (tmp_path / "one" / "units").iterdir())
    assert len(units) == 2 * 2 + 3 * 2, units
    assert sorted(p.name for p in (tmp_path / "two" / "units").iterdir()) == units
    for name in units:
        assert comparable(tmp_path / "two" / "units" / name) == comparable(tmp_path / "one" / "units" / name), name
    report = lambda d: {k: v for k, v in json.loads(comparable(d / "report.json")).items() if k != "cost"}  # noqa: E731
    assert report(tmp_path / "two") == report(tmp_path / "one")
    for task in ("alpha", "beta"):  # the saved held-out ExpNets, trained with the first seed
        for f in ("expnet.safetensors", "expnet.json"):
            one, two = (tmp_path / d / f"expnet-heldout-{task}" / f for d in ("one", "two"))
            assert two.read_bytes() == one.read_bytes(), (task, f)
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "two" / "units").iterdir()}
    r = mpi(salient_bin, args(tmp_path / "two"))
    assert r.returncode == 0, r.stderr
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "two" / "units").iterdir()} == before
    # A run killed mid-unit leaves that unit's claim: the next run removes it and computes the unit.
    lost = tmp_path / "two" / "units" / "baseline-occlusion-beta.json"
    lost.unlink()
    (tmp_path / "two" / "units" / "baseline-occlusion-beta.json.claim").touch()
    r = mpi(salient_bin, args(tmp_path / "two"))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "two" / "units").iterdir()) == units
    assert comparable(lost) == comparable(tmp_path / "one" / "units" / lost.name)


@needs_mpi
def test_two_ranks_run_sst_evaluate_as_one_process(salient_bin, model_dir, tmp_path):
    """SST's evaluation (its own subsets and the post-hoc searches) shared out over 2 ranks in chunks
    of examples: the records and table of one process; records already in the file are kept."""
    from test_reliability import comparable
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": f"{t} , take {i}", "label": int(i % 5 in (0, 2, 3))}) + "\n"
                            for i, t in enumerate(TEXTS)))
    sst = tmp_path / "sst"
    subprocess.run([salient_bin, "--quiet", "sst", "train", "--train", str(data), "--dev", str(data), "--arch",
                    "transformer", "--init", model_dir, "--epochs", "1", "--batch-size", "8", "--seed", "4", "--out",
                    str(sst)], check=True, capture_output=True)
    args = lambda out: ["--quiet", "--threads", "1", "sst", "evaluate", "--model", str(sst), "--standard", str(sst),  # noqa: E731
                        "--data", str(data), "--limit", "14", "--accuracy-limit", "30", "--methods", "sst,sis,gradient",
                        "--samples", "5", "--seed", "3", "--out", str(out)]
    one = subprocess.run([salient_bin, *args(tmp_path / "one")], check=True, capture_output=True, text=True)
    r = mpi(salient_bin, args(tmp_path / "two"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("| sis |") == 1 and one.stdout.count("| sis |") == 1  # rank 0 alone prints the table
    for name in ("examples-sst.jsonl", "examples-sis.jsonl", "examples-gradient.jsonl", "table.json", "run.json"):
        assert comparable(tmp_path / "two" / name) == comparable(tmp_path / "one" / name), name
    assert len((tmp_path / "two" / "examples-sis.jsonl").read_text().splitlines()) == 14
    assert not list((tmp_path / "two").glob("*.shards"))

    # A one-process run cut short, finished sharded: the records it wrote are kept byte for byte.
    part = tmp_path / "part"
    part.mkdir()
    (part / "run.json").write_bytes((tmp_path / "one" / "run.json").read_bytes())
    kept = (tmp_path / "one" / "examples-sis.jsonl").read_text().splitlines(keepends=True)[:5]
    (part / "examples-sis.jsonl").write_text("".join(kept) + '{"index": 5, "tru')  # and a torn last line
    r = mpi(salient_bin, args(part))
    assert r.returncode == 0, r.stderr
    got = (part / "examples-sis.jsonl").read_text().splitlines(keepends=True)
    assert got[:5] == kept
    assert comparable(part / "examples-sis.jsonl") == comparable(tmp_path / "one" / "examples-sis.jsonl")

    # Chunks an earlier killed mpirun run left beside a file that now holds every record are stale:
    # the records stand and the chunk directory goes (a finished chunk 0 with other bytes here).
    stale = part / "examples-sis.jsonl.shards"
    stale.mkdir()
    (stale / "settings.json").write_text(json.dumps(dict(json.loads((part / "run.json").read_text()), method="sis")))
    first = json.loads(got[0])
    (stale / "chunk-000000.txt").write_text(json.dumps(dict(first, seconds=first["seconds"] + 1000)) + "\n")
    complete = (part / "examples-sis.jsonl").read_bytes()
    r = mpi(salient_bin, args(part))
    assert r.returncode == 0, r.stderr
    assert (part / "examples-sis.jsonl").read_bytes() == complete
    assert not stale.exists()


@needs_mpi
def test_a_killed_rank_loses_only_its_unfinished_chunks(salient_bin, model_dir, tmp_path):
    # 240 inputs of IG with 1000 points, one chunk each: seconds of work, killed after 5 chunks.
    n = len(TEXTS) * 8
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(TEXTS * 8) + "\n")
    args = lambda out: explain_args(model_dir, inp, out, "ig", 1, ["--steps", "1000"])  # noqa: E731
    one = tmp_path / "one.jsonl"
    subprocess.run([salient_bin, *args(one)], check=True)
    out = tmp_path / "two.jsonl"
    shards = Path(str(out) + ".shards")
    p = subprocess.Popen([MPIRUN, "-np", "2", "--oversubscribe", salient_bin, *args(out)], env=ENV,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(list(shards.glob("chunk-*.txt"))) < 5:
        time.sleep(0.02)
    # SIGKILL one rank (a salient process whose parent is this mpirun): mpirun then ends the job.
    ranks = subprocess.run(["pgrep", "-P", str(p.pid), "-f", "salient"], capture_output=True, text=True).stdout.split()
    assert ranks, "no rank process found"
    os.kill(int(ranks[-1]), signal.SIGKILL)
    p.wait(timeout=120)
    assert p.returncode != 0
    assert not out.exists()  # nothing half-written
    finished = sorted(c.name for c in shards.glob("chunk-*.txt"))
    assert 5 <= len(finished) < n, finished
    r = subprocess.run([MPIRUN, "-np", "2", "--oversubscribe", salient_bin, *[a for a in args(out) if a != "--quiet"]],
                       env=ENV, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # Every chunk finished before the kill is taken as done, none recomputed.
    assert f"resuming: {len(finished)} of {n} chunks already done" in r.stderr
    assert out.read_bytes() == one.read_bytes()


@needs_mpi
def test_other_settings_in_the_chunk_directory_are_refused(salient_bin, model_dir, tmp_path):
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(TEXTS) + "\n")
    out = tmp_path / "out.jsonl"
    shards = Path(str(out) + ".shards")
    shards.mkdir()
    (shards / "settings.json").write_text('{"command": "explain", "method": "lime"}\n')
    r = mpi(salient_bin, explain_args(model_dir, inp, out, "ig"))
    assert r.returncode != 0
    assert "other settings" in r.stderr and "method" in r.stderr
    r = mpi(salient_bin, ["--quiet", "explain", "--model", model_dir, "--method", "ig", "-i", str(inp)])
    assert r.returncode != 0 and "output file" in r.stderr


def test_one_process_and_one_rank_take_the_plain_path(salient_bin, model_dir, tmp_path):
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(TEXTS[:3]) + "\n")
    plain = subprocess.run([salient_bin, "--quiet", "--threads", "1", "explain", "--model", model_dir, "--method", "ig",
                            "-i", str(inp), "--format", "json"], capture_output=True, text=True, check=True).stdout
    assert len(plain.splitlines()) == 3  # stdout works without mpirun
    if MPIRUN is None:
        return
    r = mpi(salient_bin, ["--quiet", "--threads", "1", "explain", "--model", model_dir, "--method", "ig", "-i", str(inp),
                          "--format", "json"], np_=1)
    assert r.returncode == 0, r.stderr
    assert r.stdout == plain


def load_safetensors(path):
    import json as _json
    import struct
    import numpy as np
    raw = Path(path).read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = _json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        assert v["dtype"] == "F32", (name, v["dtype"])
        s, e = v["data_offsets"]
        out[name] = np.frombuffer(data[s:e], dtype=np.float32).astype(float)
    return out


@needs_mpi
def test_data_parallel_training_equals_one_process(salient_bin, model_dir, tmp_path):
    """The same global batch and seed, dropout off: 2 and 3 ranks train the model one process
    trains, up to the order of the float32 gradient sums (tolerance 1e-6 absolute per weight;
    measured 6e-8 after 3 epochs of 6 steps)."""
    import json as _json
    import random
    import numpy as np
    rng = random.Random(1)
    words = ["good", "bad", "film", "plot", "great", "dull", "story", "fun", "slow", "sharp"]
    data = tmp_path / "data.jsonl"
    with open(data, "w") as f:
        for i in range(44):  # 44 = 5 full batches of 8 and one of 4: uneven slices across 3 ranks
            t = " ".join(rng.choice(words) for _ in range(3 + i % 6))
            f.write(_json.dumps({"text": t, "label": int("good" in t or "great" in t)}) + "\n")
    args = ["--quiet", "--threads", "1", "train", "--train", str(data), "--dev", str(data), "--vocab", model_dir,
            "--hidden", "32", "--layers", "1", "--heads", "2", "--intermediate", "64", "--dropout", "0",
            "--attention-dropout", "0", "--epochs", "3", "--batch-size", "8", "--seed", "3", "--max-length", "32"]
    subprocess.run([salient_bin, *args, "--out", str(tmp_path / "one")], check=True, capture_output=True)
    want = load_safetensors(tmp_path / "one" / "checkpoint" / "model.safetensors")
    one_history = _json.loads((tmp_path / "one" / "training.json").read_text())["history"]
    for ranks in (2, 3):
        out = tmp_path / f"ranks{ranks}"
        r = mpi(salient_bin, [*args, "--out", str(out)], np_=ranks)
        assert r.returncode == 0, r.stderr
        assert r.stdout.count("\n") == 1  # rank 0 alone prints the summary
        got = load_safetensors(out / "checkpoint" / "model.safetensors")
        assert set(got) == set(want)
        worst = max(float(np.max(np.abs(got[k] - want[k]))) for k in want)
        assert worst < 1e-6, (ranks, worst)
        history = _json.loads((out / "training.json").read_text())["history"]
        for h, w in zip(history, one_history):
            assert h["train_loss"] == pytest.approx(w["train_loss"], abs=1e-6)
            assert h["dev"] == w["dev"]


@needs_mpi
def test_data_parallel_pretraining_equals_one_process(salient_bin, model_dir, tmp_path):
    """MLM pre-training: every rank masks the global batch alike and takes its rows, gradients
    weighted by the rank's share of masked pieces; with dropout off 2 and 3 ranks give one
    process's model within 1e-6 per weight; a sharded run stopped and resumed continues exactly."""
    import json as _json
    import random
    import numpy as np
    rng = random.Random(4)
    words = ["the", "film", "is", "good", "bad", "a", "story", "of", "love", "and", "war", "slow", "funny"]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(" ".join(rng.choice(words) for _ in range(rng.randint(4, 12))) + "\n" for _ in range(300)))
    args = ["--quiet", "--threads", "1", "pretrain", "--corpus", str(corpus), "--vocab", model_dir, "--layers", "1",
            "--hidden", "32", "--heads", "2", "--intermediate", "64", "--max-length", "16", "--batch-size", "7",
            "--max-steps", "8", "--dropout", "0", "--seed", "3", "--eval-every", "4", "--save-every", "4"]
    subprocess.run([salient_bin, *args, "--out", str(tmp_path / "one")], check=True, capture_output=True)
    want = load_safetensors(tmp_path / "one" / "model.safetensors")
    one_report = _json.loads((tmp_path / "one" / "pretrain.json").read_text())
    for ranks in (2, 3):
        out = tmp_path / f"ranks{ranks}"
        r = mpi(salient_bin, [*args, "--out", str(out)], np_=ranks)
        assert r.returncode == 0, r.stderr
        assert r.stdout.count("\n") == 1  # rank 0 alone prints the report
        got = load_safetensors(out / "model.safetensors")
        assert set(got) == set(want)
        worst = max(float(np.max(np.abs(got[k] - want[k]))) for k in want)
        assert worst < 1e-6, (ranks, worst)
        report = _json.loads((out / "pretrain.json").read_text())
        assert report["tokens"] == one_report["tokens"] and report["steps"] == 8
        for h, w in zip(report["history"], one_report["history"]):
            assert h["step"] == w["step"] and h["heldout_loss"] == pytest.approx(w["heldout_loss"], abs=1e-5)
    # Stopped after 4 steps, resumed: the same model as the uninterrupted 2-rank run.
    out = tmp_path / "resumed"
    assert mpi(salient_bin, [*args, "--out", str(out), "--stop-after-steps", "4"]).returncode == 0
    assert not (out / "model.safetensors").exists() and (out / "checkpoint" / "state.json").exists()
    r = mpi(salient_bin, [*args, "--out", str(out), "--resume"])
    assert r.returncode == 0, r.stderr
    assert (out / "model.safetensors").read_bytes() == (tmp_path / "ranks2" / "model.safetensors").read_bytes()
