"""Shared fixtures of the Python package's tests: the salient binary (to compare against the CLI),
the shared fixtures directory and the reference model in it."""
import os
import subprocess
from pathlib import Path

import pytest

import salient  # noqa: F401  first: it asks OpenBLAS for the kernels the CLI runs (salient/__init__.py)

REPO = Path(__file__).resolve().parents[2]


def _shared():
    env = os.environ.get("SALIENT_SHARED")
    if env:
        return Path(env)
    for d in [REPO, *REPO.parents]:
        if (d / "shared" / "fixtures").is_dir():
            return d / "shared"
    raise RuntimeError("shared data not found (set SALIENT_SHARED)")


@pytest.fixture(scope="session")
def shared():
    return _shared()


@pytest.fixture(scope="session")
def model_dir(shared):
    path = shared / "fixtures" / "reference-bert" / "model"
    assert path.is_dir(), f"{path}: the reference model is missing"
    return str(path)


@pytest.fixture(scope="session")
def salient_bin():
    path = os.environ.get("SALIENT_BIN") or str(REPO / "build" / "salient")
    assert Path(path).exists(), f"{path}: build salient first (scripts/build.sh)"
    return path


@pytest.fixture(scope="session")
def run_cli(salient_bin):
    """Runs `salient --quiet ARGS` on stdin; returns stdout, raising on a non-zero exit."""
    def run(args, stdin=""):
        r = subprocess.run([salient_bin, "--quiet", *args], input=stdin, capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"salient {' '.join(args)} failed: {r.stderr}")
        return r.stdout
    return run


# scripts/sanitize.sh runs this suite with SALIENT_SANITIZED=1, SALIENT_BIN set to the sanitized
# build's binary and the plain build's Python module. There the tests that compare the CLI's numbers
# with the module's bit for bit (two builds: -O1 and -O3 round float sums differently) and those that
# measure memory (AddressSanitizer keeps freed memory in quarantine) do not apply.
def pytest_configure(config):
    config.addinivalue_line("markers", "same_build: compares the CLI's and the Python module's numbers bit for bit")
    config.addinivalue_line("markers", "measures_memory: asserts on the binary's peak memory")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("SALIENT_SANITIZED") != "1":
        return
    for item in items:
        if "same_build" in item.keywords:
            item.add_marker(pytest.mark.skip(reason="sanitized CLI vs plain Python module: two builds"))
        if "measures_memory" in item.keywords:
            item.add_marker(pytest.mark.skip(reason="AddressSanitizer's quarantine holds freed memory"))
