"""The Python package against the CLI on the reference model: the same numbers through both, errors
as Python exceptions with salient's one-line messages, the GIL released during C++ work."""
import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import salient

INPUTS = ["a charming and moving journey", ("bad", "very bad indeed")]
INPUT_LINES = 'a charming and moving journey\n{"text": "bad", "text_pair": "very bad indeed"}\n'


def lines(out):
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_predict_equals_the_cli(model_dir, run_cli):
    m = salient.load(model_dir)
    got = m.predict(INPUTS)
    want = lines(run_cli(["predict", "--model", model_dir], INPUT_LINES))
    assert [p.to_dict() for p in got] == want  # the same fields and the same numbers
    assert isinstance(got[0].probs, np.ndarray) and got[0].probs.shape == (2,)
    assert got[0].label in m.labels
    # One by one equals batched; a single string is a list of one.
    single = [m.predict(t)[0] for t in INPUTS]
    for a, b in zip(single, got):
        np.testing.assert_allclose(a.logits, b.logits, atol=1e-5)
    assert m.tokenize("a charming journey")[0]["tokens"][0] == "[CLS]"


@pytest.mark.same_build
def test_explain_equals_the_cli(model_dir, run_cli):
    m = salient.load(model_dir)
    got = salient.explain(m, INPUTS, method="ig", steps=16)
    want = lines(run_cli(["explain", "--model", model_dir, "--method", "ig", "--steps", "16", "--format", "json"],
                         INPUT_LINES))
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        assert g.tokens == w["tokens"]
        assert g.target == w["target"] and g.target_label == w["target_label"]
        assert g.params == w["params"]
        np.testing.assert_allclose(g.scores, w["token_scores"], rtol=0, atol=1e-9)
        np.testing.assert_allclose(g.word_scores, w["word_scores"], rtol=0, atol=1e-9)
        assert g.words == w["words"]
        assert "delta" in g.extras  # IG's completeness gap
        assert g.to_dict()["token_scores"] == pytest.approx(w["token_scores"], abs=1e-9)
    # A fixed target by label name or index, and the explained output.
    by_name = salient.explain(m, INPUTS, method="saliency", target=m.labels[1], output="logit")
    by_index = salient.explain(m, INPUTS, method="saliency", target=1, output="logit")
    assert by_name[0].target == 1 and by_name[0].output == "logit"
    np.testing.assert_array_equal(by_name[0].scores, by_index[0].scores)
    cli = lines(run_cli(["explain", "--model", model_dir, "--method", "saliency", "--target", "1", "--score", "logit",
                         "--format", "json"], INPUT_LINES))
    np.testing.assert_allclose(by_name[1].scores, cli[1]["token_scores"], rtol=0, atol=1e-9)
    # The shorthand through the registry entry is the same call.
    np.testing.assert_array_equal(salient.method("ig")(m, INPUTS, steps=16)[0].scores, got[0].scores)
    # A token budget of a few rows per pass splits IG's points and LIME's samples: the same scores.
    small = salient.explain(m, INPUTS, method="ig", steps=16, max_batch_tokens=24)
    np.testing.assert_allclose(small[0].scores, got[0].scores, rtol=0, atol=1e-6)
    lime = [salient.explain(m, INPUTS, method="lime", samples=40, max_batch_tokens=t)[1].scores for t in (4096, 24)]
    np.testing.assert_allclose(lime[0], lime[1], rtol=0, atol=1e-6)
    # Memory known in advance: the library's estimate, smaller under a smaller budget.
    est = m.memory_estimate(100, "lime", samples=300)
    assert est["weight_bytes"] > 0 and est["request_bytes"] > m.memory_estimate(100, "lime", max_batch_tokens=256)["request_bytes"]


def test_errors_are_python_exceptions_with_one_line_messages(model_dir, tmp_path):
    m = salient.load(model_dir)
    cases = [
        (lambda: salient.explain(m, INPUTS, method="ig", samples=10), ValueError, "samples"),
        (lambda: salient.explain(m, INPUTS, method="ig", steps=1), ValueError, "steps"),
        (lambda: salient.explain(m, INPUTS, method="no_such_method"), ValueError, "no_such_method"),
        (lambda: salient.explain(m, INPUTS, target="maybe"), ValueError, "maybe"),
        (lambda: salient.explain(m, INPUTS, return_tensors="tf"), ValueError, "return_tensors"),
        (lambda: m.predict(INPUTS, batch_size=0), ValueError, "batch_size"),
        (lambda: salient.explain(m, INPUTS, max_batch_tokens=0), ValueError, "max_batch_tokens"),
        (lambda: m.memory_estimate(100, "lime", samples=0), ValueError, "--samples"),
        (lambda: salient.load(tmp_path / "missing"), FileNotFoundError, "missing"),
        (lambda: salient.load(tmp_path), FileNotFoundError, "config.json"),
        (lambda: salient.evaluate(m, str(tmp_path / "none.jsonl")), FileNotFoundError, "none.jsonl"),
        (lambda: salient.method("nope"), ValueError, "nope"),
        (lambda: salient.explain(m, [3.5j]), TypeError, "texts"),
    ]
    for call, kind, needle in cases:
        with pytest.raises(kind) as info:
            call()
        message = str(info.value)
        assert needle in message and "\n" not in message, message
    (tmp_path / "config.json").write_text('{"model_type": "bert", "hidden_size": "wide"}')
    with pytest.raises(ValueError, match="hidden_size"):
        salient.load(tmp_path)


def test_every_method_is_discoverable_with_generated_docs(run_cli):
    infos = salient.methods()
    listed = run_cli(["explain", "--list"])
    assert len(infos) > 10
    for info in infos:
        assert info.name in listed
        doc = info.__doc__
        assert doc.startswith(f"{info.name} ({info.family}): ")
        for p in info.params:
            assert p["describe"] in doc
    ig = salient.method("ig")
    assert {"steps", "baseline"} <= {p["name"] for p in ig.params}
    assert "steps" in ig.__doc__
    assert {m["name"] for m in salient.metrics()} >= {"comprehensiveness", "sufficiency", "token_f1"}


def test_evaluate_equals_the_cli(model_dir, run_cli, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"text": "a charming journey", "label": 1}\n{"text": "dull and bad", "label": 0}\n'
                    '{"text": "not good", "label": 0}\n')
    got = salient.evaluate(model_dir, str(data))
    want = json.loads(run_cli(["evaluate", "--model", model_dir, "--data", str(data)]))
    assert got["examples"] == 3
    assert got["accuracy"] == want["accuracy"] and got["mcc"] == want["mcc"]


def test_benchmark_returns_the_clis_summary_as_a_table(model_dir, run_cli, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": t, "label": l}) + "\n" for t, l in
                            [("a charming and moving journey", 1), ("dull , bad and boring", 0),
                             ("not good at all", 0), ("the best film of the year", 1)]))
    table = salient.benchmark(model_dir, str(data), ["saliency", "grad_x_input"], ["comprehensiveness", "sufficiency"],
                              out=tmp_path / "py", bootstrap=50)
    run_cli(["benchmark", "--model", model_dir, "--data", str(data), "--methods", "saliency,grad_x_input",
             "--metrics", "comprehensiveness,sufficiency", "--bootstrap", "50", "--out", str(tmp_path / "cli")])
    want = json.loads((tmp_path / "cli" / "summary.json").read_text())["methods"]
    rows = table.to_dict("records") if hasattr(table, "to_dict") else table
    assert len(rows) == 4
    for row in rows:
        w = want[row["method"]][row["metric"]]
        assert row["n"] == w["n"] == 4
        assert row["mean"] == pytest.approx(w["mean"], abs=1e-12)
        assert [row["ci95_low"], row["ci95_high"]] == pytest.approx(w["ci95"], abs=1e-12)
    pandas = pytest.importorskip("pandas")
    assert isinstance(table, pandas.DataFrame)


def test_benchmark_metric_removal_is_its_own_option(model_dir, run_cli, salient_bin, tmp_path):
    """Issue #86: the faithfulness metrics' removal is --metric-removal (Python: removal=), apart
    from the perturbation parameter --removal of occlusion, LIME and KernelSHAP; gradient methods
    benchmarked with deletion no longer fail, and --removal given to them says where it belongs."""
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": t, "label": l}) + "\n" for t, l in
                            [("a charming and moving journey", 1), ("dull , bad and boring", 0),
                             ("not good at all , really", 0)]))
    base = ["benchmark", "--model", model_dir, "--data", str(data), "--methods", "ig,saliency", "--metrics",
            "comprehensiveness", "--bootstrap", "20", "--steps", "8"]
    run_cli(base + ["--out", str(tmp_path / "mask")])
    run_cli(base + ["--metric-removal", "delete", "--out", str(tmp_path / "delete")])
    mask = json.loads((tmp_path / "mask" / "summary.json").read_text())["methods"]
    delete = json.loads((tmp_path / "delete" / "summary.json").read_text())["methods"]
    assert mask["ig"]["comprehensiveness"]["mean"] != delete["ig"]["comprehensiveness"]["mean"]
    table = salient.benchmark(model_dir, str(data), ["ig", "saliency"], ["comprehensiveness"], out=tmp_path / "py",
                              bootstrap=20, removal="delete", method_params={"ig": {"steps": 8}})
    rows = table.to_dict("records") if hasattr(table, "to_dict") else table
    got = {r["method"]: r["mean"] for r in rows}
    assert got["ig"] == pytest.approx(delete["ig"]["comprehensiveness"]["mean"], abs=1e-12)
    r = subprocess.run([salient_bin, "--quiet", *base, "--removal", "delete", "--out", str(tmp_path / "bad")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "--metric-removal" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = subprocess.run([salient_bin, "--quiet", *base, "--metric-removal", "drop", "--out", str(tmp_path / "bad")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "--metric-removal" in r.stderr


def test_benchmark_reads_long_inputs_as_windows_as_the_cli(model_dir, run_cli, tmp_path):
    data = tmp_path / "long.jsonl"
    review = "the acting is wooden but the ending is moving . " * 25  # 250 pieces: 128 positions hold 126
    data.write_text(json.dumps({"text": review, "label": 1}) + "\n")
    salient.benchmark(model_dir, str(data), ["saliency"], ["comprehensiveness"], out=tmp_path / "py", bootstrap=10,
                      windows=True, stride=100)
    run_cli(["benchmark", "--model", model_dir, "--data", str(data), "--methods", "saliency", "--metrics",
             "comprehensiveness", "--bootstrap", "10", "--windows", "--stride", "100", "--out", str(tmp_path / "cli")])
    got, want = [json.loads((tmp_path / d / "results.jsonl").read_text()) for d in ("py", "cli")]
    assert len(got["token_scores"]) == 252 and got["extras"]["windows"][1]["start"] == 100
    assert got["token_scores"] == pytest.approx(want["token_scores"], abs=1e-9)
    assert got["metrics"]["comprehensiveness"] == pytest.approx(want["metrics"]["comprehensiveness"], abs=1e-9)
    # An explanation of a text read whole records its stride, and salient.evaluate scores it whole.
    m = salient.load(model_dir)
    for stride, want_stride in [(100, 100), (0, 63)]:  # 0: half of the 126 pieces a window holds
        e = salient.explain(m, review, method="saliency", windows=True, stride=stride)[0]
        assert e.extras["stride"] == want_stride
        row = salient.evaluate(m, [e])[0]
        direct = salient.faithfulness(m, review, e.scores, target=e.target, windows=True, stride=want_stride)
        assert row["comprehensiveness"] == direct["comprehensiveness"] and row["k"] == direct["k"] > 126 // 5


def test_the_gil_is_released_while_cpp_explains(model_dir):
    m = salient.load(model_dir)
    text = "a charming and moving journey through a very long and winding story"
    salient.explain(m, text, method="ig", steps=8)  # warm up
    # Enough inputs for the call to last about half a second on this machine.
    start = time.perf_counter()
    salient.explain(m, [text] * 4, method="ig", steps=256)
    per_input = (time.perf_counter() - start) / 4
    texts = [text] * max(4, int(0.5 / per_input))
    # Python's own pace: increments per second of a bare loop.
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.1:
        n += 1
    rate = n / (time.perf_counter() - start)
    # A large batch runs faster per input than the 4 used to size it, so a call can end too soon
    # to tell; then it is repeated with twice the inputs.
    for _ in range(5):
        done = threading.Event()
        worker = threading.Thread(target=lambda: (salient.explain(m, texts, method="ig", steps=256), done.set()))
        n = 0
        start = time.perf_counter()
        worker.start()
        while not done.is_set():
            n += 1
        elapsed = time.perf_counter() - start
        worker.join()
        if elapsed > 0.2:
            break
        texts = texts * 2
    assert elapsed > 0.2, f"the call took {elapsed:.3f} s: too short to tell"
    # Held for the whole call, this thread would count only before the call starts (≤ one 5 ms
    # switch interval); released, it counts through the call.
    assert n > 0.1 * rate * elapsed, (n, rate, elapsed)


def test_torch_tensors_in_and_out(model_dir):
    torch = pytest.importorskip("torch")
    m = salient.load(model_dir)
    ex = salient.explain(m, INPUTS, method="saliency", return_tensors="pt")
    assert isinstance(ex[0].scores, torch.Tensor) and ex[0].scores.dtype == torch.float64
    np.testing.assert_array_equal(ex[0].scores.numpy(), salient.explain(m, INPUTS, method="saliency")[0].scores)
    assert isinstance(m.predict(INPUTS, return_tensors="pt")[0].probs, torch.Tensor)
    # A torch scalar as a parameter value.
    got = salient.explain(m, INPUTS[:1], method="ig", steps=torch.tensor(16))
    assert got[0].params["steps"] == 16


def test_help_works_on_everything():
    import pydoc
    for obj in [salient, salient.load, salient.explain, salient.Model, salient.Explanation, salient.benchmark,
                salient.evaluate, salient.methods, salient.method("lime")]:
        text = pydoc.render_doc(obj)
        assert len(text) > 100


def test_attattr_equals_the_cli(model_dir, run_cli, tmp_path):
    m = salient.load(model_dir)
    text = "a charming and moving journey"
    got = salient.attattr.attribute(m, text, m=8, target=1)
    want = lines(run_cli(["attattr", "attribute", "--model", model_dir, "--m", "8", "--target", "1"], text + "\n"))[0]
    assert got["layers"].shape == (m.config["num_hidden_layers"], m.config["num_attention_heads"], len(got["tokens"]),
                                   len(got["tokens"]))
    np.testing.assert_array_equal(got["layers"], np.array(want["layers"]))
    np.testing.assert_array_equal(got["head_importance"], np.array(want["head_importance"]))
    assert got["completeness"] == want["completeness"]
    tree = salient.attattr.tree(m, text, m=8, target=1)
    want_tree = json.loads(run_cli(["attattr", "tree", "--model", model_dir, "--text", text, "--m", "8", "--target", "pred"]))
    if want_tree["target"] == 1:  # the CLI's tree takes pred or gold; compare where they coincide
        assert tree["edges"] == want_tree["edges"]
    data = tmp_path / "data.jsonl"
    data.write_text('{"text": "a charming journey", "label": 1}\n{"text": "dull and bad", "label": 0}\n')
    heads = salient.attattr.heads(m, str(data), m=4)
    want_heads = json.loads(run_cli(["attattr", "heads", "--model", model_dir, "--data", str(data), "--m", "4"]))["scores"]
    assert set(heads) == set(want_heads)
    for name, scores in heads.items():
        np.testing.assert_array_equal(scores, np.array(want_heads[name]))
    with pytest.raises(ValueError, match="rule"):
        salient.attattr.attribute(m, text, rule="simpson")
    with pytest.raises(ValueError, match="layer"):
        salient.attattr.attribute(m, text, layers=[7])


def test_evaluate_explanations_equals_the_benchmark_and_hand_values(model_dir, run_cli, tmp_path):
    m = salient.load(model_dir)
    texts = ["a charming and moving journey", "dull , flat and far too long"]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": t, "label": i}) + "\n" for i, t in enumerate(texts)))
    run_cli(["benchmark", "--model", model_dir, "--data", str(data), "--methods", "saliency",
             "--metrics", "comprehensiveness,sufficiency,aopc_comprehensiveness", "--bootstrap", "10",
             "--out", str(tmp_path / "bench")])
    bench = [json.loads(line) for line in (tmp_path / "bench" / "results.jsonl").read_text().splitlines()]
    bench.sort(key=lambda r: r["index"])
    rows = salient.evaluate(m, salient.explain(m, texts, method="saliency"))
    for row, b in zip(rows, bench):
        for name in ("comprehensiveness", "sufficiency", "aopc_comprehensiveness"):
            assert row[name] == pytest.approx(b["metrics"][name], abs=1e-12), name
    # Plausibility of word scores by hand: the two rationale words score highest → AUROC 1, F1 1.
    ex = salient.explain(m, texts[0], method="saliency")
    order = np.argsort(-ex[0].word_scores)
    gold = [0] * len(ex[0].words)
    for i in order[:2]:
        gold[i] = 1
    row = salient.evaluate(m, ex, rationales=[gold])[0]
    assert row["word_auroc"] == 1.0 and row["word_f1"] == 1.0 and row["word_iou"] == 1.0
    worst = [1 - g for g in gold]
    assert salient.evaluate(m, ex, rationales=[worst])[0]["word_auroc"] == 0.0
    with pytest.raises(ValueError, match="rationale"):
        salient.evaluate(m, ex, rationales=[[1, 0]])
    with pytest.raises(TypeError, match="data"):
        salient.evaluate(m, [{"not": "an explanation"}])


def test_threads_default_to_the_clis(salient_bin):
    import os
    import subprocess
    want = int(os.environ.get("SALIENT_THREADS") or os.cpu_count())
    assert salient.threads() == want  # what `salient --threads` defaults to
    info = json.loads(subprocess.run([salient_bin, "--quiet", "info", "--json"], capture_output=True, text=True,
                                     check=True).stdout)
    assert salient.threads() == info.get("threads", want)
    try:
        assert salient.set_threads(1) == 1 and salient.threads() == 1
    finally:
        salient.set_threads(0)
    with pytest.raises(ValueError):
        salient.set_threads(-1)


def test_retain_freed_memory_is_opt_in_and_checks_its_variable():
    # Process-wide, so each case runs in its own interpreter (the environment carries the package path).
    import os
    import subprocess
    code = "import salient; print(salient.retain_freed_memory())"
    def run(value):
        env = dict(os.environ)
        env.pop("SALIENT_RETAIN_MEMORY", None)
        if value is not None:
            env["SALIENT_RETAIN_MEMORY"] = value
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run(None).stdout.strip() == "True"
    assert run("1").stdout.strip() == "True"
    assert run("0").stdout.strip() == "False"
    bad = run("yes")
    assert bad.returncode != 0 and "SALIENT_RETAIN_MEMORY: 'yes' is not 0" in bad.stderr


def test_gradient_methods_work_inside_torch_no_grad(model_dir):
    """Debian's python3-torch and salient share one libtorch, whose grad mode is per thread: a caller
    inside torch.no_grad() still gets integrated gradients, the same ones."""
    torch = pytest.importorskip("torch")
    m = salient.load(model_dir)
    want = salient.explain(m, "a charming and moving journey", method="ig", steps=8)[0].scores
    with torch.no_grad():
        got = salient.explain(m, "a charming and moving journey", method="ig", steps=8)[0].scores
        assert not torch.is_grad_enabled()
    assert list(got) == list(want)


def test_openblas_runs_the_cpus_kernels_in_the_cli_and_the_module(salient_bin):
    """OpenBLAS 0.3.21 gives CPUs newer than its tables its generic Prescott kernels. The CLI runs
    itself again asking for the CPU's (util/runtime.h), the module asks before numpy loads OpenBLAS
    (conftest imports salient first), so both run the same arithmetic; a user's choice stays."""
    import os
    import subprocess
    want = salient._cpu_openblas_core()
    if not want:
        pytest.skip("this CPU has neither AVX2 nor AVX-512: OpenBLAS's own choice stands")

    def blas(env):
        out = subprocess.run([salient_bin, "--quiet", "info", "--json"], env=env, capture_output=True, text=True,
                             check=True).stdout
        return json.loads(out)["blas"]

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if not blas(env)["openblas"]:
        pytest.skip("the BLAS is not OpenBLAS")
    assert blas(env)["kernels"] == want
    # The module runs what $OPENBLAS_CORETYPE asked for when it was set before salient was
    # imported (the user's choice), else the CPU's kernels.
    assert salient._salient.openblas_core().lower() == (salient._openblas_user_choice or want).lower()
    assert blas({**env, "OPENBLAS_CORETYPE": "Prescott"})["kernels"] == "Prescott"
