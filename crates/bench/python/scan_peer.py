"""pyarrow reads for `strata bench scan`: the IPC file through
`pyarrow.feather.read_table(columns=...)` and the Parquet file through
`pyarrow.parquet.read_table(columns=...)`, memory-mapped (as strata and
the arrow-rs mmap reader read local files), one thread per core
(pyarrow's default). Request on stdin, samples on stdout."""

import json
import sys
import time


def main():
    req = json.load(sys.stdin)
    try:
        import pyarrow.feather as feather
        import pyarrow.parquet as pq
    except ImportError as e:
        print(json.dumps({"unavailable": f"pyarrow is not installed ({e})"}))
        return
    cases = {}
    rows = req["rows"]
    for fmt, path in (("ipc", req["ipc"]), ("parquet", req["parquet"])):
        for what, cols in (("2 of 50 columns", req["columns"]), ("all 50 columns", None)):
            if fmt == "ipc":
                def read():
                    return feather.read_table(path, columns=cols, memory_map=True)
            else:
                def read():
                    return pq.read_table(path, columns=cols, memory_map=True)
            for _ in range(req["warmup"]):
                read()
            samples = []
            for _ in range(req["runs"]):
                c0, t0 = time.process_time(), time.perf_counter()
                t = read()
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                if t.num_rows != rows:
                    raise SystemExit(f"pyarrow read {t.num_rows} rows of {rows}")
                samples.append({"wall": wall, "cpu": cpu})
            cases[f"{fmt} {rows} rows, {what}"] = samples
    print(json.dumps({"cases": cases}))


main()
