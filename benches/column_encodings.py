#!/usr/bin/env python3
"""Which value encoding pays, per leaf column of every preset.

Generates each preset with `strata generate` (release build), reads it
back with pyarrow, and writes every leaf column on its own through
pyarrow's Parquet writer (Arrow C++) once per candidate encoding, with the
dictionary off, uncompressed and with zstd level 1: PLAIN, and where the
type allows DELTA_BINARY_PACKED (integers), BYTE_STREAM_SPLIT (floats and
fixed-width integers) and DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY
(strings), plus RLE_DICTIONARY (the dictionary on). Reports each
column's bytes and write time (median of --runs) per encoding, relative
to PLAIN, and appends the table to benches/results/encodings.md with the
date, machine and commit.

    benches/column_encodings.py                 # 1,000,000 rows per preset
    benches/column_encodings.py --rows 200000 --no-save
"""

import argparse
import datetime as dt
import io
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchenv import ROOT, commit, machine


def leaves(table):
    """(dotted path, flat array of present values) per leaf column."""
    out = []

    def walk(name, arr):
        t = arr.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(f"{name}.{t.field(i).name}", pc.struct_field(arr, [i]))
        elif pa.types.is_map(t):
            walk(f"{name}.key", arr.keys)
            walk(f"{name}.value", arr.items)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(f"{name}.item", arr.flatten())
        else:
            out.append((name, arr))

    for name in table.column_names:
        walk(name, table.column(name).combine_chunks())
    return out


def candidates(t):
    if pa.types.is_dictionary(t):
        return []
    if pa.types.is_integer(t) or pa.types.is_timestamp(t) or pa.types.is_date(t):
        encs = ["PLAIN", "DELTA_BINARY_PACKED"]
        if t.bit_width in (32, 64):
            encs.append("BYTE_STREAM_SPLIT")
        return encs + ["RLE_DICTIONARY"]
    if pa.types.is_floating(t):
        return ["PLAIN", "BYTE_STREAM_SPLIT", "RLE_DICTIONARY"]
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t):
        return ["PLAIN", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY"]
    return []


def write(arr, enc, codec, runs):
    table = pa.table({"c": arr})
    kw = dict(compression=codec, write_statistics=True)
    if enc == "RLE_DICTIONARY":
        kw["use_dictionary"] = True
    else:
        kw["use_dictionary"] = False
        kw["column_encoding"] = {"c": enc}
    times, size = [], 0
    for _ in range(runs):
        buf = io.BytesIO()
        t0 = time.perf_counter()
        pq.write_table(table, buf, **kw)
        times.append(time.perf_counter() - t0)
        size = buf.tell()
    return size, statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "strata"], check=True, cwd=ROOT)
    strata = str(ROOT / "target" / "release" / "strata")
    lines = [
        "| preset | column | type | codec | " + "encoding: bytes vs PLAIN, write time vs PLAIN | best |",
        "|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as work:
        for preset in ["contacts", "wide-u64", "events"]:
            out = Path(work) / preset
            subprocess.run(
                [strata, "generate", "-q", "--preset", preset, "--target-records", str(args.rows),
                 "--num-writers", "1", "--output-dir", str(out)],
                check=True,
            )
            table = pq.read_table(out)
            seen_types = set()
            for path, arr in leaves(table):
                encs = candidates(arr.type)
                if not encs:
                    continue
                # wide-u64's 50 columns are alike: one is enough.
                if preset == "wide-u64":
                    if "u64" in seen_types:
                        continue
                    seen_types.add("u64")
                arr = arr.drop_null()
                for codec in ["none", "zstd"]:
                    results = {e: write(arr, e, codec, args.runs) for e in encs}
                    plain_size, plain_time = results["PLAIN"]
                    cells = []
                    for e in encs:
                        size, t = results[e]
                        cells.append(f"{e} {size / 1e6:.2f} MB ({size / plain_size:.2f}x, {t / plain_time:.2f}x time)")
                    best = min(encs, key=lambda e: results[e][0])
                    lines.append(f"| {preset} | {path} | {arr.type} | {codec} | {'; '.join(cells)} | {best} |")
                    print(lines[-1], flush=True)
    if args.no_save:
        return
    c = commit()
    results_file = ROOT / "benches" / "results" / "encodings.md"
    if not results_file.exists():
        results_file.write_text(
            "# Value encodings per column\n\nAppended by `benches/column_encodings.py`: each leaf column of every "
            "preset written alone by pyarrow's Parquet writer (Arrow C++), once per encoding, dictionary "
            "off unless the encoding is RLE_DICTIONARY; bytes of the file and median write time relative "
            "to PLAIN.\n"
        )
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with results_file.open("a") as f:
        f.write(f"\n### {now}, commit {c}\n\nMachine: {machine()}. {args.rows:,} rows per preset, "
                f"pyarrow {pa.__version__}, median of {args.runs} writes.\n\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
