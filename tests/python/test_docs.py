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


def test_the_python_lines_in_the_readme_run(model_dir, shared, tmp_path, monkeypatch):
    """README's Python block as written, on the fixture model instead of the quick start's (which a
    test machine has not trained), from a scratch directory (it writes runs/expnet)."""
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "README.md has one python block"
    code = blocks[0]
    assert '"models/sst2-minilm-quick"' in code, "the README's Python lines use the quick start's model"
    code = code.replace('"models/sst2-minilm-quick"', repr(model_dir))
    monkeypatch.setenv("SALIENT_SHARED", str(shared))  # the data specs, from another directory
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    finally:
        os.chdir(cwd)
    assert (tmp_path / "runs" / "expnet").is_dir()


def test_the_readme_and_the_guides_stay_short():
    """Issue #51's bounds: a README a newcomer reads in minutes (200 lines) and one guide per paper
    and for the explainers of at most 250 lines; dated run records go to docs/results/."""
    limits = {"README.md": 200}
    for guide in ["attattr", "expnet", "smat", "sst", "explainers", "pretraining", "library", "python"]:
        limits[f"docs/{guide}.md"] = 250
    too_long = {}
    for path, limit in limits.items():
        lines = len((REPO / path).read_text().splitlines())
        if lines > limit:
            too_long[path] = (lines, limit)
    assert not too_long, f"over the line limit (lines, limit): {too_long}"
