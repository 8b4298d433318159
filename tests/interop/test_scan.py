"""`strata scan` on files written by pyarrow (Arrow C++): dictionaries,
ZSTD and LZ4 buffers, several batches; from local disk and from the S3
test server. The projected output must equal pyarrow's own projection."""

import os
import subprocess
import uuid

import boto3
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest


def make_table(rows: int, seed: int) -> pa.Table:
    words = pa.array([f"word-{i}" * (i % 4 + 1) for i in range(23)])
    ids = pa.array(range(seed, seed + rows), pa.int64())
    keys = pa.array([None if i % 11 == 0 else (i * 7 + seed) % 23 for i in range(rows)], pa.int32())
    city = pa.DictionaryArray.from_arrays(keys, words)
    score = pa.array([None if i % 5 == 0 else (i * 31 % 97) / 7 for i in range(rows)], pa.float64())
    tags = pa.array([[f"t{j}" for j in range(i % 4)] if i % 9 else None for i in range(rows)], pa.list_(pa.string()))
    point = pa.StructArray.from_arrays(
        [pa.array([i % 13 for i in range(rows)], pa.int16()), pa.array([str(i) for i in range(rows)])],
        names=["x", "label"],
    )
    return pa.table({"id": ids, "city": city, "score": score, "tags": tags, "point": point})


def write_ipc(path, table: pa.Table, compression, batch_rows: int = 700) -> None:
    opts = ipc.IpcWriteOptions(compression=compression)
    with ipc.new_file(path, table.schema, options=opts) as w:
        for batch in table.to_batches(max_chunksize=batch_rows):
            w.write_batch(batch)


def scan(strata_bin, location, *args) -> subprocess.CompletedProcess:
    return subprocess.run([strata_bin, "scan", location, *args], capture_output=True, text=True)


def stats_of(stderr: str) -> dict:
    line = stderr.strip().splitlines()[-1]
    out = {}
    for part in line.split(", "):
        name, value = part.rsplit(" ", 1)
        out[name] = float(value)
    return out


@pytest.mark.parametrize("compression", ["zstd", "lz4", None])
def test_projected_reads_of_pyarrow_ipc_files(strata_bin, tmp_path, compression):
    table = make_table(5000, 3)
    src = tmp_path / "py.arrow"
    write_ipc(src, table, compression)
    for cols in [["city"], ["score", "id"], ["point", "city", "tags"], table.column_names]:
        dst = tmp_path / f"out-{len(cols)}.arrow"
        r = scan(strata_bin, str(src), "--columns", ",".join(cols), "-o", str(dst), "--stats")
        assert r.returncode == 0, r.stderr
        got = ipc.open_file(dst).read_all()
        want = table.select(cols)
        assert got.schema.names == cols
        assert got.combine_chunks().equals(want.combine_chunks()), (compression, cols)
        # A file this small is read whole, in the one request that reads
        # its footer.
        assert stats_of(r.stderr)["requests"] == 1, r.stderr

    # A larger file: one column of five costs well under the file.
    big = make_table(200_000, 5)
    src_big = tmp_path / "big.arrow"
    write_ipc(src_big, big, compression, batch_rows=25_000)
    r = scan(strata_bin, str(src_big), "--columns", "score", "--stats", "-o", str(tmp_path / "big-out.arrow"))
    assert r.returncode == 0, r.stderr
    assert ipc.open_file(tmp_path / "big-out.arrow").read_all().combine_chunks().equals(big.select(["score"]).combine_chunks())
    s = stats_of(r.stderr)
    assert s["bytes fetched"] < os.path.getsize(src_big) * 0.5, s

    # Filter and take agree with pyarrow.
    r = scan(strata_bin, str(src), "--columns", "id,city", "--filter", "id >= 5000", "-o", str(tmp_path / "f.arrow"))
    assert r.returncode == 0, r.stderr
    got = ipc.open_file(tmp_path / "f.arrow").read_all()
    assert got.column("id").to_pylist() == list(range(5000, 5003))
    r = scan(strata_bin, str(src), "--columns", "tags,id", "--take", "4999,0,701", "-o", str(tmp_path / "t.arrow"))
    assert r.returncode == 0, r.stderr
    got = ipc.open_file(tmp_path / "t.arrow").read_all()
    assert got.to_pylist() == table.select(["tags", "id"]).take([4999, 0, 701]).to_pylist()


def test_projected_reads_of_pyarrow_parquet_files(strata_bin, tmp_path):
    table = make_table(200_000, 0)
    src = tmp_path / "py.parquet"
    pq.write_table(table, src, row_group_size=40_000, compression="zstd")
    dst = tmp_path / "out.parquet"
    r = scan(strata_bin, str(src), "--columns", "tags,city", "-o", str(dst))
    assert r.returncode == 0, r.stderr
    assert pq.read_table(dst).to_pylist() == table.select(["tags", "city"]).to_pylist()
    # Row groups ruled out by their statistics are not fetched: reading the
    # filter column too costs less than reading both columns everywhere.
    r_all = scan(strata_bin, str(src), "--columns", "score,id", "--stats", "-o", str(tmp_path / "a.jsonl"))
    r_few = scan(strata_bin, str(src), "--columns", "score", "--filter", "id > 190000", "--stats", "-o", str(tmp_path / "b.jsonl"))
    assert r_all.returncode == 0 and r_few.returncode == 0, r_few.stderr
    assert stats_of(r_few.stderr)["bytes fetched"] < stats_of(r_all.stderr)["bytes fetched"]
    lines = (tmp_path / "b.jsonl").read_text().splitlines()
    assert len(lines) == 9999


SQL_FILTERS = [
    "id > 100 AND (score < 5 OR score IS NULL)",
    "city IN ('word-3word-3', 'word-1word-1') OR id BETWEEN 10 AND 20",
    "NOT (id < 5000) AND city LIKE 'word-1%'",
    "city NOT LIKE '%-2%' AND score IS NOT NULL",
    "(id % 7 = 3)",
    "price BETWEEN 1.5 AND 3.25 OR day >= '2024-03-01'",
    "ts < '2024-01-02 00:00:00' AND NOT id IN (1, 2, 3)",
    "score NOT BETWEEN 2 AND 9 OR city ILIKE 'WORD-5%'",
]


@pytest.mark.parametrize("expr", SQL_FILTERS)
def test_sql_filters_agree_with_duckdb(strata_bin, tmp_path, expr):
    import datetime
    import decimal

    import duckdb

    table = make_table(30_000, 0).select(["id", "city", "score"])
    n = table.num_rows
    day = pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 120) for i in range(n)], pa.date32())
    price = pa.array([None if i % 13 == 0 else decimal.Decimal(i % 500) / 100 for i in range(n)], pa.decimal128(9, 2))
    ts = pa.array([i * 7_000 for i in range(n)], pa.timestamp("ms"))
    table = table.append_column("day", day).append_column("price", price).append_column("ts", ts)
    src = tmp_path / "t.parquet"
    pq.write_table(table, src, row_group_size=3_000)
    dst = tmp_path / "f.arrow"
    r = scan(strata_bin, str(src), "--columns", "id", "--filter", expr, "-o", str(dst))
    assert r.returncode == 0, r.stderr
    got = sorted(ipc.open_file(dst).read_all().column("id").to_pylist())
    want = [row[0] for row in duckdb.sql(f"SELECT id FROM read_parquet('{src}') WHERE {expr} ORDER BY id").fetchall()]
    assert got == want, expr


def test_random_sql_filters_agree_with_duckdb(strata_bin, tmp_path):
    """Random filters over typed columns with nulls (comparisons, IN,
    BETWEEN, IS NULL, LIKE, integer arithmetic under AND, OR, NOT), read
    from a file of many row groups: the same rows as DuckDB. (-0.0 is left
    out: filters order floats totally, so -0.0 < 0.0, where DuckDB has
    them equal.)"""
    import datetime
    import decimal
    import random

    import duckdb

    rng = random.Random(7)
    n = 2000

    def maybe(v, i, k):
        return None if i % k == 0 else v

    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "a": pa.array([maybe((i * 37) % 41 - 20, i, 9) for i in range(n)], pa.int32()),
        "x": pa.array([maybe(((i * 13) % 61 - 30) / 4, i, 7) for i in range(n)], pa.float64()),
        "s": pa.array([maybe("".join("abcd"[(i >> k) % 4] for k in range(i % 4)), i, 5) for i in range(n)], pa.string()),
        "p": pa.array([maybe(decimal.Decimal((i * 7) % 900 - 450) / 100, i, 11) for i in range(n)], pa.decimal128(9, 2)),
        "d": pa.array([maybe(datetime.date(2024, 1, 1) + datetime.timedelta(days=(i * 3) % 90), i, 6) for i in range(n)], pa.date32()),
        "b": pa.array([maybe(i % 3 == 0, i, 4) for i in range(n)], pa.bool_()),
    })
    src = tmp_path / "t.parquet"
    pq.write_table(table, src, row_group_size=250)
    lit = {
        "a": lambda: str(rng.randint(-25, 25)) if rng.random() < 0.7 else f"{rng.randint(-50, 50) / 4}",
        "x": lambda: rng.choice([str(rng.randint(-8, 8)), f"{rng.randint(-32, 32) / 4}"]),
        "s": lambda: "'" + "".join(rng.choice("abcde") for _ in range(rng.randint(0, 3))) + "'",
        "p": lambda: rng.choice([f"{rng.randint(-500, 500) / 100}", f"{rng.randint(-5000, 5000) / 1000}", str(rng.randint(-5, 5))]),
        "d": lambda: f"'2024-{rng.randint(1, 3):02}-{rng.randint(1, 28):02}'",
        "b": lambda: rng.choice(["true", "false"]),
    }

    def leaf():
        c = rng.choice(list(lit))
        k = rng.random()
        if k < 0.45:
            return f"{c} {rng.choice(['=', '<>', '<', '<=', '>', '>='])} {lit[c]()}"
        if k < 0.55:
            return f"{c} IS {rng.choice(['', 'NOT '])}NULL"
        if k < 0.68:
            return f"{c} {rng.choice(['', 'NOT '])}IN ({lit[c]()}, {lit[c]()})"
        if k < 0.8:
            return f"{c} {rng.choice(['', 'NOT '])}BETWEEN {lit[c]()} AND {lit[c]()}"
        if k < 0.9:
            return f"s {rng.choice(['LIKE', 'NOT LIKE', 'ILIKE'])} '{rng.choice(['a%', '%b', '_', '%', 'a_', '%c%', 'AB%'])}'"
        return f"a {rng.choice(['+', '-', '*'])} {rng.randint(-3, 3)} {rng.choice(['<', '=', '>='])} {rng.randint(-30, 30)}"

    def expr(depth):
        if depth == 0 or rng.random() < 0.3:
            return leaf()
        k = rng.random()
        if k < 0.4:
            return f"({expr(depth - 1)}) AND ({expr(depth - 1)})"
        if k < 0.8:
            return f"({expr(depth - 1)}) OR ({expr(depth - 1)})"
        return f"NOT ({expr(depth - 1)})"

    dst = tmp_path / "f.arrow"
    for _ in range(120):
        e = expr(rng.randint(0, 3))
        r = scan(strata_bin, str(src), "--columns", "id", "--filter", e, "-o", str(dst), "--overwrite")
        assert r.returncode == 0, (e, r.stderr)
        got = sorted(ipc.open_file(dst).read_all().column("id").to_pylist())
        want = [row[0] for row in duckdb.sql(f"SELECT id FROM read_parquet('{src}') WHERE {e} ORDER BY id").fetchall()]
        assert got == want, e


def s3_client():
    return boto3.client(
        "s3",
        endpoint_url=os.environ["STRATA_S3_ENDPOINT"],
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
    )


@pytest.mark.skipif("STRATA_S3_ENDPOINT" not in os.environ, reason="no S3 test server configured (scripts/test starts one)")
def test_projected_reads_from_s3(strata_bin, tmp_path):
    bucket = os.environ["STRATA_S3_BUCKET"]
    table = make_table(300_000, 1)
    local = tmp_path / "py.arrow"
    write_ipc(local, table, "zstd", batch_rows=50_000)
    pq.write_table(table, tmp_path / "py.parquet", row_group_size=50_000)
    prefix = f"scan-{uuid.uuid4().hex}"
    client = s3_client()
    for name in ["py.arrow", "py.parquet"]:
        client.upload_file(str(tmp_path / name), bucket, f"{prefix}/{name}")
        url = f"s3://{bucket}/{prefix}/{name}"
        dst = tmp_path / f"from-s3-{name}.arrow"
        r = scan(strata_bin, url, "--columns", "score,city", "--stats", "-o", str(dst))
        assert r.returncode == 0, r.stderr
        got = ipc.open_file(dst).read_all()
        assert got.to_pylist() == table.select(["score", "city"]).to_pylist(), name
        s = stats_of(r.stderr)
        assert s["bytes fetched"] < os.path.getsize(tmp_path / name), s
    # A missing key and refused credentials are clear errors.
    r = scan(strata_bin, f"s3://{bucket}/{prefix}/nope.arrow")
    assert r.returncode == 2 and "not found" in r.stderr, r.stderr
    r = scan(strata_bin, f"s3://{bucket}/{prefix}/py.arrow", "--access-key-id", "wrong", "--secret-access-key", "wrong")
    assert r.returncode == 2 and "cannot read" in r.stderr, r.stderr
