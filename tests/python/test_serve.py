"""`salient serve` over HTTP on a loopback port: the page and its files, every endpoint against the
Python package's own answers, bad requests, 50 concurrent requests, Ctrl-C, and the page itself in
headless Chromium (Debian's chromium + chromium-driver, driven with Debian's python3-selenium)."""
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import salient


def start_server(salient_bin, model_dir, *extra):
    p = subprocess.Popen([salient_bin, "--quiet", "serve", "--model", model_dir, "--port", "0", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.search(r"http://[0-9.]+:\d+/", line)
    if not m:
        p.kill()
        raise AssertionError(f"salient serve did not start: {line!r} {p.stderr.read()}")
    return m.group(0), p


@pytest.fixture(scope="module")
def server(salient_bin, model_dir, shared):
    url, p = start_server(salient_bin, model_dir, "--data", "hatexplain:test", "--data-dir", str(shared / "data"),
                          "--threads", "8", "--max-body-bytes", "4096")
    yield url
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=30) == 0, p.stderr.read()


def request(url, path, body=None, content_type="application/json", raw=None):
    """(status, parsed JSON or text) of GET (body None) or POST."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url + path.lstrip("/"), data=data, method="GET" if data is None else "POST")
    if data is not None and content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            status, text, ctype = r.status, r.read().decode(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        status, text, ctype = e.code, e.read().decode(), e.headers.get("Content-Type", "")
    return status, (json.loads(text) if ctype.startswith("application/json") else text)


def test_the_page_is_served_and_needs_nothing_from_the_network(server):
    status, page = request(server, "/")
    assert status == 200 and '<script src="/app.js">' in page
    for asset in ["/app.js", "/style.css"]:
        status, text = request(server, asset)
        assert status == 200 and len(text) > 500
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text), f"{asset} reaches the network"
    assert not re.search(r"(src|href)=\"https?://", page)


@pytest.mark.same_build
def test_endpoints_equal_the_python_package(server, model_dir):
    m = salient.load(model_dir)
    status, models = request(server, "/api/models")
    assert status == 200 and models["models"][0]["labels"] == m.labels
    status, methods = request(server, "/api/methods")
    assert [x["name"] for x in methods["methods"]] == [x.name for x in salient.methods()]
    text = "a charming and moving journey"
    status, pred = request(server, "/api/predict", {"text": text})
    assert status == 200 and pred["label"] == m.predict(text)[0].label
    np.testing.assert_array_equal(pred["probs"], m.predict(text)[0].probs)
    body = {"text": text, "methods": [{"name": "ig", "params": {"steps": 8}}, "saliency"], "target": 1}
    status, got = request(server, "/api/explain", body)
    assert status == 200, got
    want_ig = salient.explain(m, text, method="ig", steps=8, target=1)[0]
    want_sal = salient.explain(m, text, method="saliency", target=1)[0]
    e_ig, e_sal = got["explanations"]
    assert e_ig["tokens"] == want_ig.tokens
    np.testing.assert_array_equal(e_ig["token_scores"], want_ig.scores)
    np.testing.assert_array_equal(e_sal["word_scores"], want_sal.word_scores)
    assert set(e_ig["faithfulness"]) >= {"comprehensiveness", "sufficiency", "aopc_comprehensiveness"}
    status, att = request(server, "/api/attention", {"text": text})
    assert len(att["attentions"]) == m.config["num_hidden_layers"]
    status, aa = request(server, "/api/attattr", {"text": text, "layer": 0, "m": 8, "target": 1})
    assert status == 200, aa
    np.testing.assert_array_equal(aa["heads"], salient.attattr.attribute(m, text, m=8, target=1)["layers"][0])
    status, ds = request(server, "/api/datasets")
    assert ds["datasets"][0]["name"] == "hatexplain:test" and ds["datasets"][0]["rationales"]
    status, ex = request(server, "/api/examples?data=hatexplain:test&limit=5")
    assert status == 200 and len(ex["examples"]) == 5


def test_bad_requests_get_a_4xx_with_a_message_and_the_server_stays_up(server):
    cases = [
        (dict(path="/api/explain", raw=b"{not json"), 400, "invalid JSON"),
        (dict(path="/api/explain", body={"text": "x", "methods": ["ig"]}, content_type="text/plain"), 415, "Content-Type"),
        (dict(path="/api/explain", raw=json.dumps({"text": "x" * 5000, "methods": ["ig"]}).encode()), 413, "--max-body-bytes"),
        (dict(path="/api/explain", body={"text": "fine", "methods": ["nope"]}), 400, "nope"),
        (dict(path="/api/explain", body={"text": "fine", "methods": [{"name": "ig", "params": {"stepz": 3}}]}), 400, "stepz"),
        (dict(path="/api/explain", body={"text": "", "methods": ["ig"]}), 400, "empty"),
        (dict(path="/api/predict", body={"text": "fine", "model": "other"}), 404, "other"),
        (dict(path="/api/nothing", body={}), 404, "no such endpoint"),
        (dict(path="/api/examples?data=sst2:dev"), 404, "not served"),
        (dict(path="/api/examples?data=hatexplain:test&limit=abc"), 400, "limit"),
    ]
    for kwargs, status, needle in cases:
        got_status, got = request(server, **kwargs)
        assert got_status == status, (kwargs, got)
        assert needle in got["error"] and "\n" not in got["error"], got
    assert request(server, "/api/models")[0] == 200


def test_fifty_concurrent_requests_are_each_answered_right(server, model_dir):
    m = salient.load(model_dir)
    texts = [f"review {i}: a {'charming' if i % 2 else 'dull'} film , {i % 7} stars" for i in range(50)]
    want = [e.scores for e in salient.explain(m, texts, method="saliency", batch_size=1)]

    def ask(i):
        return request(server, "/api/explain", {"text": texts[i], "methods": ["saliency"], "faithfulness": False})

    with concurrent.futures.ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(ask, range(50)))
    for i, (status, got) in enumerate(answers):
        assert status == 200, got
        np.testing.assert_allclose(got["explanations"][0]["token_scores"], want[i], rtol=0, atol=1e-9)


def test_ctrl_c_stops_the_server_cleanly(salient_bin, model_dir):
    url, p = start_server(salient_bin, model_dir)
    assert request(url, "/api/models")[0] == 200
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=30) == 0
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "api/models", timeout=5)


def chrome_or_skip():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("browser test: Debian's chromium and chromium-driver are not installed (scripts/setup.sh tries)")
    try:
        from selenium import webdriver
    except ImportError:
        pytest.skip("browser test: Debian's python3-selenium is not installed (scripts/setup.sh tries)")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1400"]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=options)


def colour(v):
    """The page's diverging colour (web/app.js) for v in [-1, 1], as (r, g, b)."""
    t = max(-1.0, min(1.0, v))
    r, g, b = (178, 24, 43) if t >= 0 else (33, 102, 172)
    return tuple(255 + (c - 255) * abs(t) for c in (r, g, b))


@pytest.fixture(scope="module")
def page(server, model_dir, salient_bin):
    """(url, model) the browser test drives: the fixture model, or $SALIENT_PAGE_MODEL served alone
    (scripts/screenshot.sh takes the README's picture from the quick start's real model so)."""
    other = os.environ.get("SALIENT_PAGE_MODEL")
    if not other:
        yield server, model_dir
        return
    url, p = start_server(salient_bin, other)
    yield url, other
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=30) == 0, p.stderr.read()


@pytest.mark.same_build
def test_the_page_in_headless_chromium(page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    server, model_dir = page
    browser = chrome_or_skip()
    text = os.environ.get("SALIENT_PAGE_TEXT", "a charming and moving journey")
    try:
        browser.get(server)
        wait = WebDriverWait(browser, 60)
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#methods input[data-method=ig]"))
        area = browser.find_element(By.ID, "text")
        area.clear()
        area.send_keys(text)
        # The two default methods (ig, saliency) are checked; set IG's steps to 16.
        steps = browser.find_element(By.CSS_SELECTOR, ".method.chosen [data-param=steps]")
        steps.clear()
        steps.send_keys("16")
        browser.find_element(By.ID, "run").click()
        wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, ".card[data-done=true]")) == 2)
        m = salient.load(model_dir)
        want = {"ig": salient.explain(m, text, method="ig", steps=16)[0],
                "saliency": salient.explain(m, text, method="saliency")[0]}
        for name, expl in want.items():
            spans = browser.find_elements(By.CSS_SELECTOR, f".card[data-method={name}] .heat.tokens .tok")
            assert [s.text for s in spans] == expl.tokens
            scores = np.array([float(s.get_attribute("data-score")) for s in spans])
            np.testing.assert_allclose(scores, expl.scores, rtol=1e-12, atol=1e-15)
            top = np.max(np.abs(expl.scores))
            for s, v in zip(spans, expl.scores):
                shown = [int(x) for x in re.findall(r"\d+", s.value_of_css_property("background-color"))[:3]]
                np.testing.assert_allclose(shown, colour(v / top), atol=1.0, err_msg=f"{name}: {s.text}")
        assert "prediction: " + want["ig"].target_label in browser.find_element(By.ID, "prediction").text
        # The attention grid: one thumbnail per layer and head.
        browser.find_element(By.ID, "attention-button").click()
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#attention canvas"))
        canvases = browser.find_elements(By.CSS_SELECTOR, "#attention canvas")
        assert len(canvases) == m.config["num_hidden_layers"] * m.config["num_attention_heads"]
        canvases[0].click()
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#attention table.matrix"))
        # AttAttr of the last layer, with the attribution tree drawn.
        browser.find_element(By.ID, "attattr-button").click()
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#attattr .tree svg"))
        assert len(browser.find_elements(By.CSS_SELECTOR, "#attattr button[data-head]")) == m.config["num_attention_heads"]
        assert browser.find_elements(By.CSS_SELECTOR, "#attattr table.matrix")
        out = Path(os.environ.get("SALIENT_ARTIFACTS", "/tmp/salient_artifacts"))
        out.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(out / "serve.png"))
        assert (out / "serve.png").stat().st_size > 10000
    finally:
        browser.quit()


@pytest.mark.same_build
def test_a_long_text_is_explained_whole_as_the_package_explains_it(server, model_dir):
    m = salient.load(model_dir)
    text = " ".join(["a charming and moving journey, or a dull one?"] * 40)
    status, cut = request(server, "/api/predict", {"text": text})
    assert status == 200 and cut["truncated"] and len(cut["tokens"]) == m.config["max_position_embeddings"]
    status, got = request(server, "/api/explain", {"text": text, "windows": True, "stride": 40, "methods": ["gae"]})
    assert status == 200, got
    want = salient.explain(m, text, method="gae", windows=True, stride=40, batch_size=1)[0]
    e = got["explanations"][0]
    assert e["tokens"] == want.tokens and got["prediction"]["windows"] == len(want.extras["windows"])
    np.testing.assert_allclose(e["token_scores"], want.scores, rtol=1e-6, atol=1e-12)
    direct = salient.faithfulness(m, text, want.scores, target=want.target, windows=True, stride=40)
    assert e["faithfulness"]["k"] == direct["k"]
    np.testing.assert_allclose(e["faithfulness"]["comprehensiveness"], direct["comprehensiveness"], rtol=1e-6)
    eraser = salient.faithfulness(m, text, want.scores, target=want.target, windows=True, stride=40, aopc_bins="eraser")
    np.testing.assert_allclose(e["faithfulness"]["aopc_comprehensiveness"], eraser["aopc_comprehensiveness"], rtol=1e-6)
    status, refused = request(server, "/api/attention", {"text": text, "windows": True})
    assert status == 400 and "windows" in refused["error"]


@pytest.mark.same_build
def test_the_page_reads_a_long_text_whole(server, model_dir):
    """A text longer than the model's positions: cut (and said so) by default; with the windows
    switch, scored over all its tokens as salient.explain(windows=True) scores it, the windows shown."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    browser = chrome_or_skip()
    m = salient.load(model_dir)
    text = " ".join(["a charming and moving journey, or a dull one?"] * 40)
    want = salient.explain(m, text, method="saliency", windows=True, batch_size=1)[0]
    windows = want.extras["windows"]
    assert len(want.tokens) > 2 * m.config["max_position_embeddings"] and len(windows) > 3
    try:
        browser.get(server)
        wait = WebDriverWait(browser, 60)
        wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#methods input[data-method=ig]"))
        browser.find_element(By.CSS_SELECTOR, "#methods input[data-method=ig]").click()  # saliency alone
        browser.execute_script("document.getElementById('text').value = arguments[0]", text)

        def explain():
            browser.find_element(By.ID, "run").click()
            wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, ".card[data-method=saliency][data-done]"))
            assert browser.find_element(By.CSS_SELECTOR, ".card[data-method=saliency]").get_attribute("data-done") == "true"
            return browser.find_elements(By.CSS_SELECTOR, ".card[data-method=saliency] .heat.tokens .tok")

        spans = explain()
        assert len(spans) == m.config["max_position_embeddings"]
        assert "cut at the model's" in browser.find_element(By.ID, "read-as").text
        browser.find_element(By.ID, "windows").click()
        spans = explain()
        assert [s.text for s in spans] == want.tokens
        np.testing.assert_allclose([float(s.get_attribute("data-score")) for s in spans], want.scores, rtol=1e-6, atol=1e-12)
        assert f"in {len(windows)} windows" in browser.find_element(By.ID, "read-as").text
        bars = browser.find_elements(By.CSS_SELECTOR, ".card[data-method=saliency] .windows .window")
        assert [(int(b.get_attribute("data-first")), int(b.get_attribute("data-last"))) for b in bars] == \
            [(w["start"] + 1, w["start"] + w["tokens"] - 2) for w in windows]
        starts = browser.find_elements(By.CSS_SELECTOR, ".card[data-method=saliency] .tok.window-start")
        assert len(starts) == len(windows) - 1
        faith = browser.find_element(By.CSS_SELECTOR, ".card[data-method=saliency] .faith").text
        direct = salient.faithfulness(m, text, want.scores, target=want.target, windows=True)
        assert f"top {direct['k']} tokens" in faith and f"comprehensiveness {direct['comprehensiveness']:.3f}" in faith
    finally:
        browser.quit()


@pytest.mark.measures_memory
def test_a_short_load_gets_no_server_error_and_stays_in_its_memory_budget(salient_bin, model_dir, tmp_path):
    """The quick, bounded part of bench/serve_load.py (docs/RELIABILITY.md, "The server under load"):
    concurrent clients, long and short texts, every method family, texts read whole in windows,
    malformed requests; no 5xx, every
    malformed request a 4xx, the peak resident memory within --max-memory."""
    out = tmp_path / "load.json"
    repo = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(repo / "bench" / "serve_load.py"), "--model", model_dir, "--clients", "3",
                        "--requests", "8", "--max-memory", "1GB", "--json", str(out)],
                       env={**os.environ, "SALIENT_BIN": salient_bin}, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    s = json.loads(out.read_text())
    assert s["requests"] == 24 and s["malformed"] == 3 and s["malformed_not_4xx"] == 0
    assert s["server_errors"] == 0 and s["explained"] + s["malformed"] == 24
    assert s["windowed"] == s["windowed_explained"] == 3  # texts read whole, one per client
    assert s["idle_rss_bytes"] < s["peak_rss_bytes"] <= 1e9
    assert 0 < s["request_budget_bytes"] < 1e9


@pytest.mark.measures_memory
def test_the_memory_budget_is_reported_and_one_below_the_idle_server_is_refused(salient_bin, model_dir):
    url, p = start_server(salient_bin, model_dir, "--max-memory", "1GB", "--max-batch-tokens", "64")
    try:
        status, models = request(url, "/api/models")
        memory = models["memory"]
        assert status == 200 and 0 < memory["budget_bytes"] < 1e9 and memory["max_batch_tokens"] == 64
        assert memory["in_use_bytes"] == 0 and memory["waiting"] == 0
        per_method = models["models"][0]["memory"]["explain_bytes"]
        assert set(per_method) >= {"ig", "lime", "saliency", "gae", "occlusion"} and min(per_method.values()) > 0
        # One row per pass under a 64-token budget: IG's points cost what saliency's input does, and a
        # pass keeping the attention gradients more.
        assert per_method["ig"] == per_method["saliency"] < per_method["gae"]
    finally:
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=30) == 0
    with pytest.raises(AssertionError, match="--max-memory"):
        start_server(salient_bin, model_dir, "--max-memory", "10MB")
