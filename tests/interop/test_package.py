"""The Python package as `pip install .` installs it (scripts/test builds
the wheel from the root pyproject.toml and installs it here): the `strata`
command and `python -m strata` run the binary's code, so from a directory
outside the clone they write byte-identical files, print the same version,
help and errors, and exit with the same statuses; `import strata` works
there too; Ctrl-C ends a run as it ends the binary's."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The console entry point pip wrote next to this interpreter.
SCRIPT = Path(sys.executable).parent / "strata"

FRONT_ENDS = ["binary", "script", "module"]


@pytest.fixture
def front_end(strata_bin):
    """The three ways to run the command line, each as an argv prefix."""

    def argv(kind: str) -> list[str]:
        if kind == "binary":
            return [strata_bin]
        if kind == "script":
            if not SCRIPT.exists():
                pytest.fail(f"{SCRIPT} is missing: the package's console entry point was not installed")
            return [str(SCRIPT)]
        return [sys.executable, "-m", "strata"]

    return argv


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_all_front_ends_write_the_same_dataset(front_end, tmp_path):
    # Outside the clone, as a user of the installed package would be.
    assert ROOT not in tmp_path.parents
    outputs = {}
    for kind in FRONT_ENDS:
        cwd = tmp_path / kind
        cwd.mkdir()
        r = run([*front_end(kind), "generate", "--preset", "orders", "--scale", "0.01"], cwd)
        assert r.returncode == 0, (kind, r.stderr)
        assert "wrote" in r.stdout, (kind, r.stdout)
        files = tree(cwd / "output_parquet")
        assert any(name.endswith(".parquet") for name in files), (kind, list(files))
        outputs[kind] = files
    assert outputs["script"] == outputs["binary"]
    assert outputs["module"] == outputs["binary"]


@pytest.mark.parametrize(
    "args, status",
    [
        (["--version"], 0),
        (["spec", "show", "orders"], 0),
        (["generate", "--no-such-flag"], 2),
        (["spec", "show", "no-such-preset"], 2),
        (["completions", "bash"], 0),
        # The default build leaves the benchmark suites out, and says so.
        (["bench", "sort"], 2),
    ],
)
def test_same_output_and_status(front_end, tmp_path, args, status):
    results = {kind: run([*front_end(kind), *args], tmp_path) for kind in FRONT_ENDS}
    for kind, r in results.items():
        assert r.returncode == status, (kind, r.stdout, r.stderr)
        assert (r.stdout, r.stderr) == (results["binary"].stdout, results["binary"].stderr), kind


def test_version_names_the_commit(front_end, tmp_path):
    out = run([*front_end("script"), "--version"], tmp_path).stdout
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    assert out.startswith("strata "), out
    if head.returncode == 0:
        assert head.stdout.strip()[:12] in out, (out, head.stdout)


def test_import_outside_the_clone(tmp_path):
    code = (
        "import strata, pyarrow as pa; "
        "t = strata.generate('events', rows=1000); "
        "assert isinstance(t, pa.Table) and t.num_rows == 1000; "
        "assert 'orders' in strata.presets(); "
        "print(strata.__file__)"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    # The installed package, not the sources.
    assert ROOT / "python" not in Path(r.stdout.strip()).parents, r.stdout


def test_ctrl_c_removes_the_unfinished_run(front_end, tmp_path):
    out = tmp_path / "out"

    def staged():
        # Where a run stages its files until they are complete.
        return [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")]

    proc = subprocess.Popen(
        [*front_end("script"), "generate", "-q", "--target-records", "500000000", "--output-dir", str(out)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Wait (for an event, not a time) until the run has started writing.
    deadline = time.monotonic() + 120
    while not staged() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert staged(), "the run never started writing"
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, stderr)
    assert "interrupted; unfinished outputs removed" in stderr, stderr
    assert not out.exists()
    assert staged() == []
