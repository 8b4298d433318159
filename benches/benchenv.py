"""What the benchmark scripts in this directory share: the repository
root, a command's output, and the machine and commit a result is
recorded with."""

import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sh(*cmd):
    """The stripped standard output of `cmd`, run in the repository."""
    return subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout.strip()


def machine():
    """CPU model, logical CPU count and kernel, for results files."""
    model = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


def commit():
    """The short commit, `+dirty` when the tree has uncommitted changes."""
    c = sh("git", "rev-parse", "--short=12", "HEAD")
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0
    return c + ("+dirty" if dirty else "")
