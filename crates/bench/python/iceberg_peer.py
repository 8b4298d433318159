"""What a Python user runs today for an Iceberg `lineitem`, for `strata
bench pipeline` beside strata's `--format iceberg`: `tpchgen-cli` writes
the table to Parquet, then pyiceberg creates a table in a `SqlCatalog`
(SQLite) partitioned by month(l_shipdate) and l_returnflag, as strata's
is, and `table.append()` adds the rows (read with pyarrow). pyiceberg
does not sort on write. Each run starts from an emptied directory,
untimed; wall time is both steps together, CPU time the tpchgen-cli
child's plus this process's. Request on stdin, samples on stdout."""

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
        import pyarrow as pa
        import pyarrow.dataset as ds
        from pyiceberg.catalog.sql import SqlCatalog
        from pyiceberg.transforms import IdentityTransform, MonthTransform
    except ImportError as e:
        print(json.dumps({"unavailable": f"pyiceberg is not installed ({e})"}))
        return
    samples = []
    with tempfile.TemporaryDirectory(dir=req["dir"]) as root:
        raw, wh = os.path.join(root, "raw"), os.path.join(root, "warehouse")
        for i in range(req["warmup"] + req["runs"]):
            for d in (raw, wh):
                shutil.rmtree(d, ignore_errors=True)
            os.makedirs(raw)
            os.makedirs(wh)
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
            data = ds.dataset(raw, format="parquet").to_table()
            # tpchgen-cli's strings read as string_view, which pyiceberg's
            # partitioning does not compare: plain strings.
            data = data.cast(pa.schema([
                f.with_type(pa.string()) if f.type == pa.string_view() else f for f in data.schema
            ]))
            catalog = SqlCatalog("bench", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
            catalog.create_namespace("bench")
            table = catalog.create_table(
                "bench.lineitem", schema=data.schema,
                properties={"write.parquet.compression-codec": "zstd"},
            )
            with table.update_spec() as update:
                update.add_field("l_shipdate", MonthTransform(), "l_shipdate_month")
                update.add_field("l_returnflag", IdentityTransform(), "l_returnflag")
            table = catalog.load_table("bench.lineitem")
            table.append(data)
            wall, used = time.perf_counter() - t0, cpu() - c0
            rows = catalog.load_table("bench.lineitem").current_snapshot().summary["total-records"]
            if int(rows) != data.num_rows:
                raise SystemExit(f"pyiceberg holds {rows} rows, not {data.num_rows}")
            if i >= req["warmup"]:
                samples.append({"wall": wall, "cpu": used})
    print(json.dumps({"cases": {req["name"]: samples}}))


main()
