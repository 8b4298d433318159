"""Runs SQL in DuckDB with its `iceberg` and `delta` extensions loaded from
the pip packages `duckdb-ext-iceberg`, `duckdb-ext-delta` and
`duckdb-ext-avro` (built for one DuckDB version, pinned in
requirements-duckext.txt), never from the network. Meant for the Python
of the virtual environment that holds them (scripts/test makes
.venv-duckext), which is not the interop tests' own: that one has
another DuckDB.

    python duckdb_ext_query.py "SQL" ...   prints each result as JSON
    python duckdb_ext_query.py --serve     one JSON request a line on stdin
                                           ({"sql": ...}), one answer a line

The first line `--serve` writes tells the versions and where each
extension was loaded from; an answer is {"columns": [...], "rows":
[[...], ...]} (values JSON does not have as their str()) or {"error":
"..."}. After an error the database is opened again, since DuckDB
refuses all work after an internal error."""

import json
import sys
from pathlib import Path

import duckdb

EXTENSIONS = ["iceberg", "delta"]


def extension_dir() -> Path:
    """The packages' extension directory: duckdb_ext/extensions, laid out
    as DuckDB's own (vVERSION/PLATFORM/NAME.duckdb_extension)."""
    for entry in sys.path:
        d = Path(entry) / "duckdb_ext" / "extensions"
        if d.is_dir():
            return d
    raise SystemExit("no duckdb_ext/extensions on sys.path: pip install -r tests/interop/requirements-duckext.txt")


def connect(ext_dir: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(
        config={
            "extension_directory": str(ext_dir),
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
    )
    for name in EXTENSIONS:
        con.execute(f"LOAD {name}")
    return con


def loaded(con) -> dict:
    rows = con.execute(
        "SELECT extension_name, extension_version, install_path FROM duckdb_extensions() "
        "WHERE loaded AND install_path <> '(BUILT-IN)'"
    ).fetchall()
    return {name: {"version": version, "path": path} for name, version, path in rows}


def answer(con, sql: str) -> dict:
    cur = con.execute(sql)
    columns = [d[0] for d in cur.description] if cur.description else []
    return {"columns": columns, "rows": [list(r) for r in cur.fetchall()]}


def main(argv) -> int:
    ext_dir = extension_dir()
    con = connect(ext_dir)
    if argv[:1] != ["--serve"]:
        for sql in argv:
            print(json.dumps(answer(con, sql), default=str))
        return 0
    hello = {"duckdb": duckdb.__version__, "extension_directory": str(ext_dir), "extensions": loaded(con)}
    print(json.dumps(hello), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = answer(con, json.loads(line)["sql"])
        except Exception as e:  # noqa: BLE001 (every error goes back to the caller)
            out = {"error": f"{type(e).__name__}: {e}"}
            con.close()
            con = connect(ext_dir)
        print(json.dumps(out, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
