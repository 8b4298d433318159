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


def check_same_rows(con, a_sql: str, b_sql: str, what: str = "", show: int = 5) -> None:
    """Asserts that two DuckDB queries give the same rows as multisets: equal
    counts and nothing left by EXCEPT ALL either way (which, as SQL's set
    operations do, treats two nulls as equal). On failure the message has the
    counts and up to `show` rows from each side."""

    def scalar(sql):
        return con.execute(sql).fetchall()[0][0]

    n_a = scalar(f"SELECT count(*) FROM ({a_sql})")
    n_b = scalar(f"SELECT count(*) FROM ({b_sql})")
    only = {"first": f"({a_sql}) EXCEPT ALL ({b_sql})", "second": f"({b_sql}) EXCEPT ALL ({a_sql})"}
    extra = {side: scalar(f"SELECT count(*) FROM ({sql})") for side, sql in only.items()}
    if n_a == n_b and not any(extra.values()):
        return
    lines = [
        f"{what + ': ' if what else ''}the rows differ: {n_a} rows against {n_b}; "
        f"{extra['first']} only in the first, {extra['second']} only in the second"
    ]
    for side, sql in only.items():
        if extra[side]:
            cur = con.execute(f"SELECT * FROM ({sql}) ORDER BY ALL LIMIT {show}")
            rows = cur.fetchall()
            lines.append(f"only in the {side} ({len(rows)} of {extra[side]}), {tuple(d[0] for d in cur.description)}:")
            lines += [f"  {row}" for row in rows]
    lines += [f"first: {a_sql}", f"second: {b_sql}"]
    raise AssertionError("\n".join(lines))
