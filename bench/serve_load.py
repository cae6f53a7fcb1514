#!/usr/bin/env python3
"""A load test of `salient serve` on loopback (issue #88; docs/RELIABILITY.md, "The server under load").

Starts the server on a model, then N clients send requests at once for a fixed time or count:
short and long (about 500 word pieces) texts, every method family (gradient, IG, attention,
Chefer et al.'s, LIME / KernelSHAP / occlusion with their sample budgets), the attention and AttAttr
endpoints, texts three times as long read whole in windows ("windows": true; the cheaper methods of
--windowed-methods, faithfulness included), and malformed requests. A client that gets 503 waits for its Retry-After and sends the
same request again. Records throughput, p50/p99 latency, the server's peak and after-load resident
memory (sampled from /proc every 20 ms), and every status; exits non-zero when the server answered
a 5xx other than 503 or none (a client timeout), a malformed request got anything but a 4xx, a
request was still refused after --retries, or the peak passed --max-memory.

  bench/serve_load.py --model DIR [--clients 8] [--requests 24 | --seconds S] [--max-memory 4GB]
                      [--long-every 3] [--windowed-every 2] [--methods lime,kernel_shap,occlusion,ig,...]
                      [--windowed-methods saliency,ig,gae]
                      [--json OUT] [-- extra salient serve flags]
Standard library only; SALIENT_BIN (default build/salient) is the server.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

WORDS = ("the film is a charming and moving journey through memory , loss and the small absurd moments "
         "of life that we rarely notice .").split()
METHOD_PARAMS = {"lime": {"samples": 300}, "kernel_shap": {"samples": 300}, "ig": {"steps": 50}}


def parse_size(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmg]?)b?", text.strip().lower())
    if not m:
        raise SystemExit(f"--max-memory: '{text}' is not a size such as 4GB or 800MB")
    return int(float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)])


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def post(url, path, data, timeout):
    """(HTTP status, Retry-After); status 0 when no answer came (a timeout, a dropped connection)."""
    req = urllib.request.Request(url + path, data=data, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            r.read()
            return r.status, None
    except urllib.error.HTTPError as e:
        e.read()
        return e.code, e.headers.get("Retry-After")
    except OSError:
        return 0, None


def median(values):
    return sorted(values)[len(values) // 2] if values else 0.0


def text_of(length, i):
    return " ".join(WORDS[(j + i) % len(WORDS)] for j in range(length))


def requests_for(n, long_every, windowed_every, methods, windowed_methods, seed):
    """n requests (kind, path, body bytes) of client `seed`: every `long_every`-th a long text (every
    `windowed_every`-th of those three times as long and read whole in windows), every seventh
    malformed, the methods in turn from the seed's place."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 7 == 6:
            bad = [b"{not json", json.dumps({"text": ""}).encode(), json.dumps({"text": "x", "methods": ["nope"]}).encode(),
                   json.dumps({"text": "x", "methods": [{"name": "ig", "params": {"steps": -1}}]}).encode(),
                   json.dumps({"text": "x", "windows": "yes", "methods": ["saliency"]}).encode()]
            out.append(("malformed", "/api/explain", bad[(i // 7 + seed) % len(bad)]))
            continue
        if i % long_every == 0 and windowed_every and (i // long_every) % windowed_every == windowed_every - 1:
            name = windowed_methods[(i + seed) % len(windowed_methods)]
            method = {"name": name, "params": METHOD_PARAMS.get(name, {})}
            body = {"text": text_of(1500, i), "windows": True, "methods": [method], "faithfulness": True}
            out.append(("windowed " + name, "/api/explain", json.dumps(body).encode()))
            continue
        length = 500 if i % long_every == 0 else rng.randint(8, 40)
        text = text_of(length, i)
        kind = methods[(i + seed) % len(methods)]
        if kind in ("attention", "attattr"):
            out.append((kind, "/api/" + kind, json.dumps({"text": text, **({"m": 8} if kind == "attattr" else {})}).encode()))
        else:
            method = {"name": kind, "params": METHOD_PARAMS.get(kind, {})}
            out.append((kind, "/api/explain", json.dumps({"text": text, "methods": [method], "faithfulness": i % 2 == 0}).encode()))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=24, help="per client")
    ap.add_argument("--seconds", type=float, default=0, help="stop sending after this long (0: --requests each)")
    ap.add_argument("--max-memory", default="4GB")
    ap.add_argument("--threads", type=int, default=4, help="the server's request threads")
    ap.add_argument("--long-every", type=int, default=3)
    ap.add_argument("--windowed-every", type=int, default=2, help="of the long requests, every this many read whole (0: none)")
    ap.add_argument("--windowed-methods", default="saliency,ig,gae")
    ap.add_argument("--methods", default="lime,kernel_shap,occlusion,ig,saliency,gae,rollout,attention,attattr")
    ap.add_argument("--retries", type=int, default=50, help="503s one request may get before it counts as failed")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds a client waits for one answer")
    ap.add_argument("--json", help="write the summary here too")
    ap.add_argument("serve_args", nargs="*", help="after --: more salient serve flags")
    a = ap.parse_args()
    budget = parse_size(a.max_memory)
    binary = os.environ.get("SALIENT_BIN", "build/salient")
    server = subprocess.Popen([binary, "--quiet", "serve", "--model", a.model, "--port", "0", "--threads", str(a.threads),
                               "--max-memory", a.max_memory, "--max-text-bytes", "100000", *a.serve_args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    m = re.search(r"http://[0-9.]+:\d+/", line)
    if not m:
        server.kill()
        sys.exit(f"serve_load: the server did not start: {line!r} {server.stderr.read()}")
    url = m.group(0).rstrip("/")
    idle = rss_bytes(server.pid)
    peak = [idle]
    sampling = threading.Event()

    def sample():
        while not sampling.is_set():
            peak[0] = max(peak[0], rss_bytes(server.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    methods = a.methods.split(",")
    records, lock = [], threading.Lock()
    start = time.monotonic()

    def client(c):
        for kind, path, body in requests_for(a.requests if not a.seconds else 10**6, a.long_every, a.windowed_every, methods,
                                            a.windowed_methods.split(","), seed=c):
            if a.seconds and time.monotonic() - start > a.seconds:
                break
            t0, tries = time.monotonic(), 0
            while True:
                status, retry_after = post(url, path, body, timeout=a.timeout)
                if status != 503 or tries >= a.retries:
                    break
                tries += 1
                time.sleep(float(retry_after or 1) * (0.5 + random.random()))
            with lock:
                records.append({"kind": kind, "status": status, "seconds": time.monotonic() - t0, "retries": tries})

    threads = [threading.Thread(target=client, args=(c,)) for c in range(a.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    time.sleep(1.0)  # the trim after the last request
    after = rss_bytes(server.pid)
    sampling.set()
    sampler.join()
    with urllib.request.urlopen(url + "/api/models", timeout=30) as r:
        memory = json.loads(r.read())["memory"]
    server.terminate()
    server.wait(timeout=60)

    served = sorted(r["seconds"] for r in records if r["kind"] != "malformed" and r["status"] == 200)
    pct = lambda q: served[min(len(served) - 1, int(q * len(served)))] if served else 0.0
    summary = {
        "clients": a.clients, "server_threads": a.threads, "max_memory_bytes": budget, "seconds": round(elapsed, 1),
        "requests": len(records), "explained": len(served), "per_second": round(len(served) / elapsed, 2),
        "p50_seconds": round(pct(0.5), 2), "p99_seconds": round(pct(0.99), 2),
        "windowed": sum(r["kind"].startswith("windowed") for r in records),
        "windowed_explained": sum(r["kind"].startswith("windowed") and r["status"] == 200 for r in records),
        "windowed_p50_seconds": round(median([r["seconds"] for r in records if r["kind"].startswith("windowed")]), 2),
        "malformed": sum(r["kind"] == "malformed" for r in records),
        "malformed_not_4xx": sum(r["kind"] == "malformed" and not 400 <= r["status"] < 500 for r in records),
        "server_errors": sum(r["status"] >= 500 and r["status"] != 503 for r in records),
        "no_answer": sum(r["status"] == 0 for r in records),
        "shed_503_final": sum(r["status"] == 503 for r in records),
        "retries_after_503": sum(r["retries"] for r in records),
        "other_4xx": sum(r["kind"] != "malformed" and 400 <= r["status"] < 500 for r in records),
        "idle_rss_bytes": idle, "peak_rss_bytes": peak[0], "after_rss_bytes": after,
        "request_budget_bytes": memory.get("budget_bytes"),
    }
    print(json.dumps(summary, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    failed = (summary["server_errors"] or summary["no_answer"] or summary["malformed_not_4xx"] or summary["shed_503_final"]
              or peak[0] > budget)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
