"""docs/python.md's example session runs as written (from the repository root)."""
import contextlib
import io
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_example_session_in_docs_python_md_runs(model_dir):
    text = (REPO / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/python.md has no python block"
    code = "\n".join(blocks)
    # The doc names the fixture model relative to the repository root, as a reader runs it.
    assert 'MODEL = "../shared/fixtures/reference-bert/model"' in code
    code = code.replace('"../shared/fixtures/reference-bert/model"', repr(model_dir))
    out = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(REPO)
        with contextlib.redirect_stdout(out):
            exec(compile(code, "docs/python.md", "exec"), {"__name__": "__docs__"})
    finally:
        os.chdir(cwd)
    printed = out.getvalue()
    assert "ig" in printed and "comprehensiveness" in printed
