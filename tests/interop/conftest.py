"""Shared fixtures: the strata binary and a runner for it."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def strata_bin() -> str:
    path = os.environ.get("STRATA_BIN", str(ROOT / "target" / "debug" / "strata"))
    if not Path(path).exists():
        pytest.fail(f"strata binary not found at {path}; build it or set STRATA_BIN")
    return path


@pytest.fixture
def generate(strata_bin, tmp_path):
    """Runs `strata generate ARGS` into a fresh directory; returns (dir, summary)."""

    def run(*args: str):
        out = tmp_path / "out"
        summary = tmp_path / "summary.json"
        cmd = [strata_bin, "generate", "-q", "--output-dir", str(out), "--summary-json", str(summary), *args]
        subprocess.run(cmd, check=True)
        return out, json.loads(summary.read_text())

    return run
