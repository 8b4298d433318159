"""What users run today for a partitioned, sorted TPC-H lineitem, for
`strata bench pipeline` beside strata's laid-out `lineitem`: `tpchgen-cli`
writes the table to Parquet, then DuckDB rewrites it, sorted and
partitioned: `COPY (SELECT *, strftime(l_shipdate, '%Y-%m') AS
l_shipdate_month FROM read_parquet(...) ORDER BY l_shipdate, l_orderkey)
TO OUT (FORMAT parquet, PARTITION_BY (l_shipdate_month, l_returnflag),
COMPRESSION zstd)`, with DuckDB's threads set to the request's. Each run
starts from an emptied directory, untimed; wall time is both steps
together, CPU time the tpchgen-cli child's plus this process's (DuckDB
runs in it). Request on stdin, samples on stdout."""

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def program():
    here = os.path.dirname(sys.executable)
    for name in ("tpchgen-cli", "tpchgen-cli.exe"):
        path = os.path.join(here, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def cpu():
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    s = resource.getrusage(resource.RUSAGE_SELF)
    return c.ru_utime + c.ru_stime + s.ru_utime + s.ru_stime


def main():
    req = json.load(sys.stdin)
    cli = program()
    if cli is None:
        print(json.dumps({"unavailable": f"tpchgen-cli is not installed next to {sys.executable}"}))
        return
    try:
        import duckdb
    except ImportError:
        print(json.dumps({"unavailable": "duckdb is not installed"}))
        return
    samples = []
    with tempfile.TemporaryDirectory(dir=req["dir"]) as root:
        raw, out = os.path.join(root, "raw"), os.path.join(root, "out")
        for i in range(req["warmup"] + req["runs"]):
            for d in (raw, out):
                shutil.rmtree(d, ignore_errors=True)
            os.makedirs(raw)
            c0, t0 = cpu(), time.perf_counter()
            done = subprocess.run(
                [cli, "parquet", "--scale-factor", str(req["scale_factor"]), "--tables", "lineitem",
                 "--compression", "ZSTD(1)", "--num-threads", str(req["threads"]), "--output-dir", raw,
                 "--no-progress", "--quiet"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            )
            if done.returncode != 0:
                err = done.stderr.decode(errors="replace").strip().splitlines()
                raise SystemExit(f"tpchgen-cli failed ({done.returncode}): {err[-1] if err else ''}")
            con = duckdb.connect()
            con.execute(f"SET threads = {int(req['threads'])}")
            con.execute(
                f"""COPY (SELECT *, strftime(l_shipdate, '%Y-%m') AS l_shipdate_month
                          FROM read_parquet('{raw}/*.parquet')
                          ORDER BY l_shipdate, l_orderkey)
                    TO '{out}' (FORMAT parquet, PARTITION_BY (l_shipdate_month, l_returnflag),
                                COMPRESSION zstd)"""
            )
            con.close()
            wall, used = time.perf_counter() - t0, cpu() - c0
            if not any(f.endswith(".parquet") for _, _, fs in os.walk(out) for f in fs):
                raise SystemExit("DuckDB wrote no partitioned files")
            if i >= req["warmup"]:
                samples.append({"wall": wall, "cpu": used})
    print(json.dumps({"cases": {req["name"]: samples}}))


main()
