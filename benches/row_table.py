#!/usr/bin/env python3
"""Prints the strata-row vs arrow-row table from Criterion's saved estimates.

Run `cargo bench -p strata-row --bench row` first; this reads
target/criterion/{encode,decode}_*/{arrow-row,strata}/new/estimates.json.
"""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")


def median_us(group, impl):
    p = root / group / impl / "new" / "estimates.json"
    return json.loads(p.read_text())["median"]["point_estimate"] / 1000.0


rows = []
for group in sorted(p.name for p in root.iterdir() if p.is_dir()):
    if not (group.startswith("encode_") or group.startswith("decode_")):
        continue
    try:
        theirs, ours = median_us(group, "arrow-row"), median_us(group, "strata")
    except FileNotFoundError:
        continue
    op, _, case = group.partition("_")
    rows.append((case, op, theirs, ours))

print("| case | op | arrow-row 60.1 median (µs) | strata median (µs) | speed-up |")
print("|---|---|---:|---:|---:|")
for case, op, theirs, ours in sorted(rows, key=lambda r: (r[0], r[1] != "encode")):
    print(f"| {case} | {op} | {theirs:.1f} | {ours:.1f} | {theirs / ours:.2f}x |")
