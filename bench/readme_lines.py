"""Times each line of the README's Python block (README.md, "From Python"), run in order in one
namespace, on MODEL in place of the quick start's model (a MiniLM classifier: the quick start's own,
or any fine-tuned from the packaged encoder). The README says each line finishes within a minute.

  PYTHONPATH=build/python python3 bench/readme_lines.py MODEL_DIR [--out DIR]
"""
import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--out", help="where lines that write (runs/...) write; default: a temporary folder")
    a = ap.parse_args()
    block = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)[0]
    out = Path(a.out or tempfile.mkdtemp(prefix="readme_lines_"))
    namespace = {"__name__": "__readme__"}
    worst = 0.0
    for line in block.splitlines():
        code = line.split("  #")[0].rstrip()
        if not code:
            continue
        code = code.replace('"models/sst2-minilm-quick"', repr(a.model)).replace('out="runs/', f'out="{out}/')
        t0 = time.perf_counter()
        exec(compile(code, "README.md", "exec"), namespace)
        seconds = time.perf_counter() - t0
        worst = max(worst, seconds)
        print(f"{seconds:7.1f} s  {code}", flush=True)
    print(f"slowest line: {worst:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
