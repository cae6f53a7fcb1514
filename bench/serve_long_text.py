#!/usr/bin/env python3
"""One whole ERASER movie review explained through `salient serve` as the viewer asks for it (issue
#86 item 5; docs/serve.md, "Long texts"): the review read whole in windows, each method alone,
without the faithfulness numbers and with them (ERASER's bins, the server's default, and the
deciles); prints the seconds of each and the windows read.

  bench/serve_long_text.py --model DIR [--data eraser:test] [--index 0] [--methods saliency,ig,gae]
Standard library only; SALIENT_BIN (default build/salient) is the server.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request


def post(url, path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=3600) as r:
        return json.loads(r.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default="eraser:test")
    ap.add_argument("--index", type=int, default=0)
    ap.add_argument("--methods", default="saliency,ig,gae")
    ap.add_argument("--json", help="write the records here too")
    a = ap.parse_args()
    binary = os.environ.get("SALIENT_BIN", "build/salient")
    server = subprocess.Popen([binary, "--quiet", "serve", "--model", a.model, "--data", a.data, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"http://[0-9.]+:\d+/", server.stdout.readline())
    if not m:
        server.kill()
        sys.exit(f"serve_long_text: the server did not start: {server.stderr.read()}")
    url = m.group(0).rstrip("/")
    try:
        with urllib.request.urlopen(f"{url}/api/examples?data={a.data}&offset={a.index}&limit=1", timeout=60) as r:
            text = json.loads(r.read())["examples"][0]["text"]
        t0 = time.monotonic()
        pred = post(url, "/api/predict", {"text": text, "windows": True})
        records = [{"what": "predict", "seconds": round(time.monotonic() - t0, 3)}]
        for name in a.methods.split(","):
            for bins in (None, "eraser", "deciles"):  # no faithfulness, the server's default bins, the benchmark's
                t0 = time.monotonic()
                body = {"text": text, "windows": True, "methods": [name], "faithfulness": bins is not None}
                if bins:
                    body["aopc_bins"] = bins
                e = post(url, "/api/explain", body)["explanations"][0]
                records.append({"what": name + (f" + faithfulness ({bins})" if bins else ""),
                                "seconds": round(time.monotonic() - t0, 3), "method_seconds": round(e["seconds"], 3)})
        out = {"characters": len(text), "tokens": len(pred["tokens"]), "windows": pred["windows"], "records": records}
        print(json.dumps(out, indent=1))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
    finally:
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
