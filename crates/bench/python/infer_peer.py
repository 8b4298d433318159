"""DuckDB's SUMMARIZE for `strata bench infer`: every column's min, max,
distinct estimate, mean, standard deviation, quartiles and null share over
the same Parquet files, 2 threads
(`SUMMARIZE SELECT * FROM read_parquet([...])`). Request on stdin, samples
on stdout."""

import json
import sys
import time


def main():
    req = json.load(sys.stdin)
    try:
        import duckdb
    except ImportError as e:
        print(json.dumps({"unavailable": f"duckdb is not installed ({e})"}))
        return
    files = ", ".join("'" + p + "'" for p in req["inputs"])
    samples = []
    for i in range(req["warmup"] + req["runs"]):
        con = duckdb.connect()
        con.execute(f"SET threads TO {req['threads']}")
        con.execute("SET enable_progress_bar = false")
        c0, t0 = time.process_time(), time.perf_counter()
        rows = con.execute(f"SUMMARIZE SELECT * FROM read_parquet([{files}])").fetchall()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        con.close()
        if len(rows) != req["columns"]:
            print(json.dumps({"unavailable": f"SUMMARIZE gave {len(rows)} rows, not {req['columns']}"}))
            return
        if i >= req["warmup"]:
            samples.append({"wall": wall, "cpu": cpu})
    print(json.dumps({"cases": {req["name"]: samples}}))


main()
