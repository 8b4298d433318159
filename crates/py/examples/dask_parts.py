"""Writes a strata dataset from a Dask cluster, one task per part.

    python crates/py/examples/dask_parts.py OUTPUT_DIR [--spec events]
        [--rows 1000000 | --scale 1] [--parts 4] [--workers 2] [--scheduler ADDRESS]

Each task calls ``strata.generate(spec, part=i, parts=N, rows=T,
output_dir=OUTPUT_DIR)`` on a worker and returns its summary. For a spec
of several tables (``--spec star``, ``--spec orders``, or a file of
``[[tables]]``), each task makes one part of one table,
``strata.generate(spec, table=NAME, scale=S, part=i, parts=N, ...)``, into
OUTPUT_DIR/NAME/; references between tables resolve whichever worker
makes which part. A row's
content depends only on (spec, seed, row index), so the parts can run on
any worker, in any order, and their files, in part order, hold exactly the
rows of a single-process run. With ``--format iceberg`` each part stages
its data files in the table and, once every part is written, one
``strata.commit_table(location)`` commits them as one snapshot of an
Iceberg table at OUTPUT_DIR/NAME. Without ``--scheduler`` the script starts a
LocalCluster of ``--workers`` processes; with one, OUTPUT_DIR should be a
location every worker can write to (a shared directory or
``s3://bucket/prefix``).
"""

import argparse
import sys
import time
from pathlib import Path

from dask.distributed import Client, LocalCluster

import strata


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("output_dir", help="directory or s3://bucket/prefix for the files")
    p.add_argument("--spec", default="contacts", help="preset name, .toml spec file or TOML text (default: contacts)")
    p.add_argument("--rows", type=int, default=1_000_000, help="rows in the whole dataset (default: 1000000)")
    p.add_argument("--scale", type=float, default=None, help="scale of a spec of several tables (default: 1)")
    p.add_argument("--parts", type=int, default=4, help="parts, one Dask task each (default: 4)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--format", default="parquet", help="parquet, ipc, or iceberg (a table committed once every part is staged)")
    p.add_argument("--compression", default="zstd", help="none, snappy, lz4 or zstd[:LEVEL] (default: zstd)")
    p.add_argument("--threads", type=int, default=None, help="threads per part (default: all cores of the worker)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default: 2)")
    p.add_argument("--scheduler", help="address of a running Dask scheduler instead of a LocalCluster")
    p.add_argument("--overwrite", action="store_true", help="replace existing files")
    return p.parse_args(argv)


def spec_for_workers(spec):
    """A spec file is read here and sent as text, so workers need not see it."""
    if "\n" not in spec and spec.endswith(".toml"):
        return Path(spec).read_text()
    return spec


def is_dataset(spec, args):
    """Whether `spec` is a dataset of several tables (or `--scale` says so)."""
    return len(strata.tables(spec)) > 1 or args.scale is not None


def run(client, args):
    spec = spec_for_workers(args.spec)
    common = dict(
        parts=args.parts,
        seed=args.seed,
        output_dir=args.output_dir,
        format=args.format,
        compression=args.compression,
        threads=args.threads,
        overwrite=args.overwrite,
    )
    if is_dataset(spec, args):
        # One task per part of each table: table=NAME, scale=S.
        scale = args.scale if args.scale is not None else 1.0
        tasks = [
            (dict(table=t, scale=scale, part=i), f"strata-{t}-part-{i}-of-{args.parts}")
            for t in strata.tables(spec)
            for i in range(1, args.parts + 1)
        ]
    else:
        tasks = [
            (dict(rows=args.rows, part=i), f"strata-part-{i}-of-{args.parts}")
            for i in range(1, args.parts + 1)
        ]
    futures = [client.submit(strata.generate, spec, **common, **kw, key=key) for kw, key in tasks]
    summaries = client.gather(futures)
    if args.format == "iceberg":
        # Every part is staged: one commit per table, here.
        for location in sorted({s["iceberg"]["location"] for s in summaries}):
            c = strata.commit_table(location)
            print(f"iceberg table {location}: version {c['version']}, {c['rows']} rows added")
    return summaries


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    start = time.perf_counter()
    if args.scheduler:
        with Client(args.scheduler) as client:
            summaries = run(client, args)
    else:
        with LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, Client(cluster) as client:
            summaries = run(client, args)
    elapsed = time.perf_counter() - start

    for s in summaries:
        print(
            f"part {s['part']}/{s['parts']}: rows {s['first_row']}..{s['first_row'] + s['records']} "
            f"in {len(s['files'])} file(s), {s['bytes']} bytes, {s['elapsed_s']:.2f} s"
        )
        for f in s["files"]:
            print(f"  {f['path']}  rows {f['first_row']}..{f['first_row'] + f['rows']}")
    rows = sum(s["records"] for s in summaries)
    files = sum(len(s["files"]) for s in summaries)
    print(f"{rows} rows in {files} files, {sum(s['bytes'] for s in summaries)} bytes, {elapsed:.2f} s in all")
    if is_dataset(spec_for_workers(args.spec), args):
        for table in sorted({s["spec"] for s in summaries}):
            n = sum(s["records"] for s in summaries if s["spec"] == table)
            print(f"table {table}: {n} rows")
    elif rows != args.rows:
        print(f"error: the parts hold {rows} rows, expected {args.rows}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
