"""Arrow C++ through pyarrow for `strata bench parquet-column`.

Writes: the same 1,048,576 values (read from the raw little-endian file
the Rust side wrote) as one column, REQUIRED (non-null int64), OPTIONAL
(nullable, no nulls) or REPEATED (non-null list of one non-null int64),
with the matrix's settings: PLAIN, no dictionary, statistics, data page
v1, 20,000 rows per page (Arrow C++'s default), the codec at level 1 for
ZSTD; into an in-memory buffer. Reads: the very files the Rust side wrote,
from memory, every value in batches of the case's size
(`ParquetFile.iter_batches`, one thread, the footer parsed once): each
batch also pays pyarrow's Python-level overhead (tens of microseconds),
which dominates the 16-value batches. Without a dictionary Arrow C++ writes
PLAIN. Small cases repeat inside one timed
iteration until it takes `min_iteration_s`, and samples are divided by
the repeats, as the Rust side does. Request on stdin, samples on stdout.
"""

import json
import sys
import time


def main():
    req = json.load(sys.stdin)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        print(json.dumps({"unavailable": f"pyarrow is not installed ({e})"}))
        return

    codecs = {"none": "none", "snappy": "snappy", "lz4_raw": "lz4", "zstd(1)": "zstd"}

    def timed(fn):
        fn()
        t0 = time.perf_counter()
        fn()
        once = max(time.perf_counter() - t0, 1e-7)
        k = max(1, min(1 << 20, int(-(-req["min_iteration_s"] // once))))
        for _ in range(req["warmup"]):
            for _ in range(k):
                fn()
        samples = []
        for _ in range(req["runs"]):
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(k):
                fn()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            samples.append({"wall": wall / k, "cpu": cpu / k})
        return samples

    raw = open(req["values_file"], "rb").read()
    n = req["n_write"]
    ints = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(raw)])
    offsets = pa.array(range(n + 1), type=pa.int32())
    item = pa.field("item", pa.int64(), nullable=False)
    tables = {
        "REQUIRED": pa.table([ints], schema=pa.schema([pa.field("v", pa.int64(), nullable=False)])),
        "OPTIONAL": pa.table([ints], schema=pa.schema([pa.field("v", pa.int64(), nullable=True)])),
        "REPEATED": pa.table(
            [pa.ListArray.from_arrays(offsets, ints, type=pa.list_(item))],
            schema=pa.schema([pa.field("v", pa.list_(item), nullable=False)]),
        ),
    }

    cases = {}
    for w in req["writes"]:
        table = tables[w["repetition"]]
        codec = codecs[w["codec"]]

        def write(table=table, codec=codec):
            sink = pa.BufferOutputStream()
            pq.write_table(
                table,
                sink,
                compression=codec,
                compression_level=1 if codec == "zstd" else None,
                use_dictionary=False,
                # parquet-rs writes page indexes by default; so does this.
                write_page_index=True,
                data_page_version="1.0",
                write_statistics=True,
            )
            return sink.getvalue()

        cases[w["name"]] = timed(write)

    for r in req["reads"]:
        data = pa.py_buffer(open(r["path"], "rb").read())
        meta = pq.ParquetFile(pa.BufferReader(data)).metadata
        batch, want = r["batch"], r["values"]

        # A new reader per iteration over the parsed footer, as the Rust
        # side reuses its parsed metadata; one thread, as C++'s benchmark.
        def read(data=data, meta=meta, batch=batch, want=want):
            f = pq.ParquetFile(pa.BufferReader(data), metadata=meta)
            got = 0
            for b in f.iter_batches(batch_size=batch, use_threads=False):
                got += b.num_rows
            if got != want:
                raise SystemExit(f"pyarrow read {got} rows of {want}")

        cases[r["name"]] = timed(read)

    print(json.dumps({"cases": cases}))


main()
