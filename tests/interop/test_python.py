"""The `strata` Python module (crates/py): parts generated on a Dask
LocalCluster, as tables and as files, are exactly the single-process
dataset; a part does not depend on the thread count; bad input is a
ValueError that says what is wrong. scripts/test builds the package's wheel
and installs it into the test environment."""

import hashlib
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

try:
    import strata
except ImportError as e:  # pragma: no cover - a set-up problem, not a test failure
    raise ImportError(
        "the strata Python module is not installed in this environment; scripts/test builds it "
        "(or run: pip install . from the repository root)"
    ) from e

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "crates" / "py" / "examples" / "dask_parts.py"
PARTS = 4
SEED = 7
# Rows per spec: enough for several batches in every part.
ROWS = {"contacts": 50_000, "events": 24_000}


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def whole():
    """The single-process table of each spec, made once."""
    cache = {}

    def get(spec):
        if spec not in cache:
            cache[spec] = strata.generate(spec, rows=ROWS[spec], seed=SEED)
        return cache[spec]

    return get


def part_rows(rows, part, parts):
    return rows * (part - 1) // parts, rows * part // parts


def row_digest(table):
    """A hash of the table's rows that ignores their order: each row as
    canonical JSON, sorted."""
    lines = sorted(json.dumps(r, sort_keys=True, default=str) for r in table.to_pylist())
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode())
        h.update(b"\n")
    return h.hexdigest()


def plain_type(t):
    """`t` with every dictionary replaced by its value type (a Parquet
    reader rebuilds dictionaries in its own order)."""
    if pa.types.is_dictionary(t):
        return plain_type(t.value_type)
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(plain_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(plain_type(t.key_type)),
            t.item_field.with_type(plain_type(t.item_type)),
        )
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(plain_type(t.value_type)))
    return t


def decoded(table):
    return table.cast(pa.schema([f.with_type(plain_type(f.type)) for f in table.schema]))


def read_file(path):
    if str(path).endswith(".parquet"):
        return pq.read_table(path)
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


@pytest.mark.parametrize("spec", ["contacts", "events"])
def test_dask_parts_are_the_single_process_table(client, whole, spec):
    rows = ROWS[spec]
    futures = [
        client.submit(strata.generate, spec, part=i, parts=PARTS, rows=rows, seed=SEED, threads=1)
        for i in range(1, PARTS + 1)
    ]
    tables = client.gather(futures)
    expected = whole(spec)
    assert expected.num_rows == rows
    for i, t in enumerate(tables, start=1):
        start, end = part_rows(rows, i, PARTS)
        assert t.num_rows == end - start
        assert t.schema == expected.schema
        assert t.equals(expected.slice(start, end - start)), f"part {i}"
    assert pa.concat_tables(tables).equals(expected)
    assert row_digest(pa.concat_tables(tables[::-1])) == row_digest(expected)


@pytest.mark.parametrize(("spec", "fmt", "compression"), [("contacts", "parquet", "zstd"), ("events", "ipc", "lz4")])
def test_dask_parts_as_files(client, whole, tmp_path, spec, fmt, compression):
    rows = ROWS[spec]
    futures = [
        client.submit(
            strata.generate,
            spec,
            part=i,
            parts=PARTS,
            rows=rows,
            seed=SEED,
            output_dir=str(tmp_path),
            format=fmt,
            compression=compression,
            num_writers=2,
            threads=1,
        )
        for i in range(1, PARTS + 1)
    ]
    summaries = client.gather(futures)
    tables = []
    next_row = 0
    for i, s in enumerate(summaries, start=1):
        start, end = part_rows(rows, i, PARTS)
        assert (s["spec"], s["part"], s["parts"], s["seed"]) == (spec, i, PARTS, SEED)
        assert (s["first_row"], s["records"]) == (start, end - start)
        assert len(s["files"]) == 2
        for j, f in enumerate(s["files"]):
            path = Path(f["path"])
            ext = "parquet" if fmt == "parquet" else "arrow"
            assert path.name == f"{spec}_part{i}of{PARTS}_{j}.{ext}"
            assert path.stat().st_size == f["bytes"]
            assert f["first_row"] == next_row
            t = read_file(path)
            assert t.num_rows == f["rows"]
            next_row += f["rows"]
            tables.append(t)
        assert s["bytes"] == sum(f["bytes"] for f in s["files"])
    assert next_row == rows
    assert len(list(tmp_path.iterdir())) == 2 * PARTS
    got = pa.concat_tables(tables)
    assert decoded(got).equals(decoded(whole(spec)))
    assert row_digest(got) == row_digest(whole(spec))


@pytest.mark.parametrize("spec", ["contacts", "events"])
def test_part_does_not_depend_on_threads_or_batch_size(whole, spec):
    rows = ROWS[spec]
    one = strata.generate(spec, part=2, parts=PARTS, rows=rows, seed=SEED, threads=1)
    two = strata.generate(spec, part=2, parts=PARTS, rows=rows, seed=SEED, threads=2)
    small = strata.generate(spec, part=2, parts=PARTS, rows=rows, seed=SEED, threads=2, batch_size=1000)
    assert one.equals(two)
    assert one.equals(small)
    start, end = part_rows(rows, 2, PARTS)
    assert one.equals(whole(spec).slice(start, end - start))
    other_seed = strata.generate(spec, part=2, parts=PARTS, rows=rows, seed=SEED + 1, threads=1)
    assert not one.equals(other_seed)


def test_parts_from_python_threads(whole):
    """generate releases the GIL: parts made on Python threads at once are
    still exactly the parts."""
    from concurrent.futures import ThreadPoolExecutor

    rows = ROWS["events"]
    with ThreadPoolExecutor(max_workers=PARTS) as pool:
        tables = list(
            pool.map(
                lambda i: strata.generate("events", part=i, parts=PARTS, rows=rows, seed=SEED, threads=1),
                range(1, PARTS + 1),
            )
        )
    assert pa.concat_tables(tables).equals(whole("events"))


def keys(value, prefix=""):
    """The key paths of a JSON value: `a.b` for nested dicts, `a.[].b` in lists."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(prefix + k)
            out |= keys(v, f"{prefix}{k}.")
    elif isinstance(value, list):
        for v in value:
            out |= keys(v, f"{prefix}[].")
    return out


def test_python_summary_has_the_cli_summary_keys(generate, tmp_path):
    _, cli = generate("--target-records", "3000", "--num-writers", "2", "--seed", "5", "--preset", "events")
    py = strata.generate("events", rows=3000, num_writers=2, seed=5, output_dir=str(tmp_path / "py"))
    assert keys(py) == keys(cli)
    for k in ("spec", "seed", "part", "parts", "format", "first_row", "records", "bytes", "threads"):
        assert py[k] == cli[k], k
    assert [f["rows"] for f in py["files"]] == [f["rows"] for f in cli["files"]]
    assert [f["first_row"] for f in py["files"]] == [0, 1500]
    assert py["cpu_s"] >= 0 and py["elapsed_s"] > 0


def test_spec_from_file_path_and_text(tmp_path):
    text = strata.spec_text("events")
    spec_file = tmp_path / "my-events.toml"
    spec_file.write_text(text)
    preset = strata.generate("events", rows=3_000, seed=SEED)
    assert strata.generate(str(spec_file), rows=3_000, seed=SEED).equals(preset)
    assert strata.generate(spec_file, rows=3_000, seed=SEED).equals(preset)
    assert strata.generate(text, rows=3_000, seed=SEED).equals(preset)
    custom = strata.generate(
        'name = "orders"\n\n[[fields]]\nname = "id"\ntype = "int64"\nsequence = { start = 1 }\n',
        rows=10,
    )
    assert custom.column_names == ["id"]
    assert custom["id"].to_pylist() == list(range(1, 11))


def test_presets_and_spec_text():
    assert strata.presets() == ["contacts", "wide-u64", "events", "lineitem", "star", "orders", "tpch"]
    for name in strata.presets():
        assert f'name = "{name}"' in strata.spec_text(name)
    with pytest.raises(ValueError, match="no such preset 'nope'"):
        strata.spec_text("nope")
    assert strata.generate(rows=10).column_names == ["name", "phones"]


def test_bad_inputs_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="no such preset; the presets are contacts, wide-u64, events, lineitem, star, orders, tpch"):
        strata.generate("no-such-preset", rows=10)

    bad = 'name = "bad"\n\n[[fields]]\nname = "user"\ntype = "int64"\nzipf = { s = -1, n = 100 }\n'
    with pytest.raises(ValueError) as e:
        strata.generate(bad, rows=10)
    assert str(e.value) == "<string>:6: field `user`: zipf exponent s must be a positive number, not -1"

    spec_file = tmp_path / "bad.toml"
    spec_file.write_text(bad)
    with pytest.raises(ValueError, match=re.escape(f"{spec_file}:6: field `user`: zipf exponent s")):
        strata.generate(str(spec_file), rows=10)
    with pytest.raises(FileNotFoundError, match="missing.toml"):
        strata.generate(str(tmp_path / "missing.toml"), rows=10)

    cases = [
        (dict(part=5, parts=4), "part must be between 1 and parts (4), got 5"),
        (dict(part=0, parts=4), "part must be between 1 and parts (4), got 0"),
        (dict(part=-1, parts=4), "part must be between 1 and parts (4), got -1"),
        (dict(part=1, parts=0), "parts must be at least 1, got 0"),
        (dict(rows=0), "rows must be at least 1, got 0"),
        (dict(rows=3, part=1, parts=4), "parts (4) exceeds rows (3): a part would be empty"),
        (dict(threads=0), "threads must be at least 1, got 0"),
        (dict(batch_size=0), "batch_size must be at least 1, got 0"),
        (dict(format="csv"), "unknown format 'csv'"),
        (dict(compression="brotli"), "unknown compression 'brotli'"),
        (dict(num_writers=0, output_dir=str(tmp_path / "out")), "num_writers must be at least 1, got 0"),
        (dict(num_writers=20, output_dir=str(tmp_path / "out")), "num_writers (20) exceeds the rows to write (10)"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            strata.generate(**{"rows": 10, **kwargs})
    assert not (tmp_path / "out").exists()


def test_existing_files_need_overwrite(tmp_path):
    first = strata.generate("contacts", rows=1_000, output_dir=tmp_path)
    assert [Path(f["path"]).name for f in first["files"]] == ["contacts_0.parquet"]
    with pytest.raises(FileExistsError):
        strata.generate("contacts", rows=1_000, output_dir=tmp_path)
    again = strata.generate("contacts", rows=1_000, output_dir=tmp_path, overwrite=True)
    assert again["bytes"] == first["bytes"]


@pytest.mark.skipif("STRATA_S3_ENDPOINT" not in os.environ, reason="no S3 test server configured (scripts/test starts one)")
def test_part_to_s3():
    import boto3

    bucket = os.environ["STRATA_S3_BUCKET"]
    prefix = f"py-{uuid.uuid4().hex}"
    s = strata.generate(
        "events", part=3, parts=PARTS, rows=8_000, seed=SEED, output_dir=f"s3://{bucket}/{prefix}", num_writers=2
    )
    assert [f["path"] for f in s["files"]] == [
        f"s3://{bucket}/{prefix}/events_part3of{PARTS}_{j}.parquet" for j in range(2)
    ]
    client = boto3.client(
        "s3",
        endpoint_url=os.environ["STRATA_S3_ENDPOINT"],
        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
    )
    tables = []
    for f in s["files"]:
        key = f["path"].removeprefix(f"s3://{bucket}/")
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        assert len(body) == f["bytes"]
        tables.append(pq.read_table(pa.BufferReader(body)))
    expected = strata.generate("events", part=3, parts=PARTS, rows=8_000, seed=SEED)
    assert decoded(pa.concat_tables(tables)).equals(decoded(expected))


def test_dask_example_script(tmp_path):
    out = tmp_path / "out"
    rows = 20_000
    r = subprocess.run(
        [sys.executable, str(EXAMPLE), str(out), "--spec", "events", "--rows", str(rows), "--seed", str(SEED)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{rows} rows in {PARTS} files" in r.stdout
    names = sorted(p.name for p in out.iterdir())
    assert names == [f"events_part{i}of{PARTS}_0.parquet" for i in range(1, PARTS + 1)]
    got = pa.concat_tables([pq.read_table(out / n) for n in names])
    expected = strata.generate("events", rows=rows, seed=SEED)
    assert decoded(got).equals(decoded(expected))


def test_dataset_tables_by_part_are_the_single_process_tables(client):
    """Parts of every table of a dataset, made by Dask workers, are the
    single-process tables, child tables included; references resolve."""
    assert strata.tables("star") == ["dates", "customers", "products", "stores", "sales"]
    assert strata.tables("contacts") == ["contacts"]
    scale = 0.002
    for spec in ["star", "orders"]:
        for table in strata.tables(spec):
            whole = strata.generate(spec, table=table, scale=scale, seed=SEED)
            futures = [
                client.submit(strata.generate, spec, table=table, scale=scale, part=i, parts=PARTS, seed=SEED, threads=1)
                for i in range(1, PARTS + 1)
            ]
            parts = client.gather(futures)
            assert pa.concat_tables(parts).equals(whole), f"{spec}.{table}"
    orders = strata.generate("orders", table="orders", scale=scale, seed=SEED)
    items = strata.generate("orders", table="lineitem", scale=scale, seed=SEED)
    keys = set(orders.column("o_orderkey").to_pylist())
    assert set(items.column("l_orderkey").to_pylist()) == keys
    assert 1 <= items.num_rows / orders.num_rows <= 7


def test_dataset_files_and_bad_dataset_arguments(tmp_path):
    s = strata.generate("orders", table="lineitem", scale=0.001, part=2, parts=2, output_dir=str(tmp_path), num_writers=2)
    assert [Path(f["path"]).parent.name for f in s["files"]] == ["lineitem", "lineitem"]
    assert s["records"] == sum(f["rows"] for f in s["files"]) == pq.read_table(tmp_path / "lineitem").num_rows
    with pytest.raises(ValueError, match=re.escape("dataset `star` has several tables (dates, customers, products, stores, sales): pass table=NAME")):
        strata.generate("star")
    with pytest.raises(ValueError, match="dataset `star` has no table `nope`"):
        strata.generate("star", table="nope")
    with pytest.raises(ValueError, match="the tables of dataset `star` set their own rows"):
        strata.generate("star", table="sales", rows=10)
    with pytest.raises(ValueError, match="scale applies to a spec of several"):
        strata.generate("contacts", scale=2)
    with pytest.raises(ValueError, match="scale must be a positive number"):
        strata.generate("star", table="sales", scale=-1)


def test_dask_example_script_with_a_dataset(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, str(EXAMPLE), str(out), "--spec", "orders", "--scale", "0.002", "--seed", str(SEED)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["customers", "lineitem", "orders"]
    got = pq.read_table(out / "lineitem")
    expected = strata.generate("orders", table="lineitem", scale=0.002, seed=SEED)
    assert row_digest(got) == row_digest(expected)
    assert "table lineitem: " in r.stdout


DIMENSIONS = """
name = "dims"

[[tables]]
name = "region"
rows = 5

[[tables.fields]]
name = "r_name"
type = "utf8"
values_by_row = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]

[[tables]]
name = "days"
calendar = { start = 2024-02-27, end = 2024-03-02 }

[[tables.fields]]
name = "d_key"
type = "int32"
calendar = "date_key"

[[tables.fields]]
name = "d_day"
type = "utf8"
calendar = "day_name"

[[tables]]
name = "customers"
rows = 50

[[tables.fields]]
name = "c_id"
type = "int64"
sequence = { start = 1 }

[[tables]]
name = "orders"
children_of = "customers"
count = { weighted = { values = [0, 3] } }

[[tables.fields]]
name = "o_cust"
type = "int64"
parent = "c_id"

[[tables.fields]]
name = "o_line"
type = "int32"
sequence = { per_parent = true, start = 1 }
"""


def test_dimension_rows_calendars_and_per_parent_numbers_from_python():
    assert strata.tables(DIMENSIONS) == ["region", "days", "customers", "orders"]
    region = strata.generate(DIMENSIONS, table="region", seed=SEED)
    assert region.column("r_name").to_pylist() == ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
    days = strata.generate(DIMENSIONS, table="days", seed=SEED)
    assert days.column("d_key").to_pylist() == [20240227, 20240228, 20240229, 20240301, 20240302]
    assert days.column("d_day").to_pylist() == ["Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    orders = strata.generate(DIMENSIONS, table="orders", seed=SEED)
    lines = {}
    for c, n in zip(orders.column("o_cust").to_pylist(), orders.column("o_line").to_pylist()):
        lines.setdefault(c, []).append(n)
    assert 0 < len(lines) < 50
    assert all(v == [1, 2, 3] for v in lines.values())
    parts = [strata.generate(DIMENSIONS, table="days", part=i, parts=2, seed=SEED) for i in (1, 2)]
    assert pa.concat_tables(parts).equals(days)
    with pytest.raises(ValueError, match="field `a` has `values_by_row` for 2 rows, but 3 rows were asked for"):
        strata.generate('name = "p"\n[[fields]]\nname = "a"\ntype = "int32"\nvalues_by_row = [1, 2]\n', rows=3)


def test_expression_fields_from_python():
    spec = """
name = "e"
[[fields]]
name = "qty"
type = "int32"
uniform = { min = 0, max = 9 }
[[fields]]
name = "price"
type = "decimal(8, 2)"
uniform = { min = 1.00, max = 99.99 }
[[fields]]
name = "total"
type = "decimal(12, 2)"
expr = "qty * price"
[[fields]]
name = "each"
type = "float64"
expr = "price / qty"
"""
    t = strata.generate(spec, rows=2000, seed=SEED)
    for q, p, total, each in zip(*(t.column(c).to_pylist() for c in ["qty", "price", "total", "each"])):
        assert total == q * p
        assert each is None if q == 0 else abs(each - float(p) / q) < 1e-9
    with pytest.raises(ValueError, match=re.escape("field `total`: `expr` at column 7: unknown name `prise`")):
        strata.generate(spec.replace("qty * price", "qty * prise"), rows=10)


def test_aggregates_of_children_from_python():
    spec = """
name = "agg"
[[tables]]
name = "orders"
rows = 300
[[tables.fields]]
name = "o_key"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "o_qty"
type = "int64"
aggregate = { table = "lines", sum = "l_qty" }
[[tables]]
name = "lines"
children_of = "orders"
count = { uniform = { min = 0, max = 3 } }
[[tables.fields]]
name = "l_key"
type = "int64"
parent = "o_key"
[[tables.fields]]
name = "l_qty"
type = "int64"
uniform = { min = 1, max = 9 }
"""
    orders = strata.generate(spec, table="orders", seed=SEED)
    lines = strata.generate(spec, table="lines", seed=SEED)
    sums = {}
    for k, q in zip(lines.column("l_key").to_pylist(), lines.column("l_qty").to_pylist()):
        sums[k] = sums.get(k, 0) + q
    assert orders.column("o_qty").to_pylist() == [sums.get(k) for k in orders.column("o_key").to_pylist()]


def test_draws_qualified_names_conditions_and_timestamps_from_python():
    spec = (ROOT / "examples" / "specs" / "tpch_lines.toml").read_text()
    ps = strata.generate(spec, table="partsupp", scale=0.1, seed=SEED)
    cost = {
        (k, s): c
        for k, s, c in zip(*(ps.column(x).to_pylist() for x in ["ps_partkey", "ps_suppkey", "ps_supplycost"]))
    }
    orders = strata.generate(spec, table="orders", scale=0.1, seed=SEED)
    date = dict(zip(orders.column("o_orderkey").to_pylist(), orders.column("o_orderdate").to_pylist()))
    lines = strata.generate(spec, table="lineitem", scale=0.1, seed=SEED)
    cols = ["l_orderkey", "l_partkey", "l_suppkey", "l_quantity", "l_extendedprice", "l_margin", "l_shipdate"]
    n = 0
    for o, p, s, q, price, margin, ship in zip(*(lines.column(c).to_pylist() for c in cols)):
        # One draw: the pair is a partsupp row, and the margin reads its cost.
        assert margin == price - q * cost[(p, s)]
        assert 1 <= (ship - date[o]).days <= 121
        n += 1
    assert n > 500
    cases = """
name = "c"
[[fields]]
name = "t"
type = "timestamp(us)"
uniform = { min = 2024-01-01T00:00:00Z, max = 2024-12-31T00:00:00Z }
[[fields]]
name = "later"
type = "timestamp(us)"
expr = "t + INTERVAL 36 HOUR"
[[fields]]
name = "p"
type = "int32"
uniform = { min = 1, max = 9 }
when = [{ condition = "t < TIMESTAMP '2024-07-01 00:00:00'", constant = 0 }]
"""
    t = strata.generate(cases, rows=1000, seed=SEED)
    for ts, later, p in zip(*(t.column(c).to_pylist() for c in ["t", "later", "p"])):
        assert (later - ts).total_seconds() == 36 * 3600
        first_half = ts < ts.replace(year=2024, month=7, day=1, hour=0, minute=0, second=0, microsecond=0)
        assert (p == 0) == first_half
    with pytest.raises(ValueError, match=re.escape("draw name `ps` is used with two tables")):
        strata.generate(
            spec.replace(
                'ref = { table = "partsupp", field = "ps_suppkey", draw = "ps" }',
                'ref = { table = "supplier", field = "s_suppkey", draw = "ps" }',
            ),
            table="lineitem",
            scale=0.1,
        )


def test_word_lists_are_read_next_to_the_spec_file(tmp_path):
    (tmp_path / "words").mkdir()
    (tmp_path / "words" / "c.txt").write_text("# colours\nred\ngreen\n\nblue\n")
    spec = tmp_path / "w.toml"
    spec.write_text('name = "w"\nlists = { colours = { file = "words/c.txt" } }\n[[fields]]\nname = "x"\n'
                    'type = "utf8"\nwords = { list = "colours", distinct = true, min = 3, max = 3 }\n')
    t = strata.generate(str(spec), rows=50)
    assert all(sorted(v.split(" ")) == ["blue", "green", "red"] for v in t.column("x").to_pylist())
    # Given as text, the spec has no directory to read the file from.
    with pytest.raises(ValueError, match="a list's file is read next to its spec file"):
        strata.generate(spec.read_text(), rows=10)


def test_layouts_from_python(tmp_path):
    out = tmp_path / "laid"
    summary = strata.generate(
        "lineitem", rows=30_000, output_dir=str(out), compression="zstd",
        partition_by="l_returnflag, bucket(2, l_orderkey)", sort_by="l_shipdate,l_orderkey",
        target_file_size="64KiB", memory_limit="64MiB",
    )
    assert summary["partitions"] == 6
    assert summary["records"] == 30_000
    dirs = sorted({str(Path(f["path"]).parent.relative_to(out)) for f in summary["files"]})
    assert dirs[0] == "l_returnflag=A/l_orderkey_bucket=0", dirs
    import pyarrow.dataset as ds
    table = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    plain = strata.generate("lineitem", rows=30_000)
    assert table.num_rows == plain.num_rows
    assert sorted(table.column("l_orderkey").to_pylist()) == sorted(plain.column("l_orderkey").to_pylist())
    for f in summary["files"]:
        days = pq.read_table(f["path"], columns=["l_shipdate"]).column(0).to_pylist()
        assert days == sorted(days), f["path"]
    with pytest.raises(ValueError, match="pass output_dir"):
        strata.generate("lineitem", rows=100, sort_by="l_shipdate")
    with pytest.raises(ValueError, match="partition_by"):
        strata.generate("lineitem", rows=100, output_dir=str(tmp_path / "bad"), partition_by="month(l_comment)")


def test_python_writes_and_appends_iceberg_tables(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    db = tmp_path / "catalog.db"
    first = strata.generate("lineitem", rows=4000, seed=1, output_dir=str(tmp_path), format="iceberg",
                            partition_by="month(l_shipdate)", catalog=str(db), namespace="bench",
                            create_namespace=True)
    assert first["iceberg"]["version"] == 1 and first["iceberg"]["rows"] == 4000
    second = strata.generate("lineitem", rows=4000, seed=2, output_dir=str(tmp_path), format="iceberg",
                             partition_by="month(l_shipdate)", catalog=str(db), namespace="bench")
    assert second["iceberg"]["version"] == 2 and second["iceberg"]["total_rows"] == 8000
    table = SqlCatalog("default", uri=f"sqlite:///{db}").load_table(("bench", "lineitem"))
    got = table.scan().to_arrow().sort_by([("l_orderkey", "ascending"), ("l_linenumber", "ascending")])
    want = pa.concat_tables([strata.generate("lineitem", rows=4000, seed=s) for s in (1, 2)])
    want = want.sort_by([("l_orderkey", "ascending"), ("l_linenumber", "ascending")])
    assert got.num_rows == 8000
    assert sorted(got.column("l_comment").to_pylist()) == sorted(want.column("l_comment").to_pylist())
    with pytest.raises(ValueError, match="output_dir"):
        strata.generate("lineitem", rows=10, format="iceberg")


def test_dask_example_commits_an_iceberg_table(tmp_path):
    from pyiceberg.table import StaticTable

    out = tmp_path / "wh"
    rows = 20_000
    r = subprocess.run(
        [sys.executable, str(EXAMPLE), str(out), "--spec", "lineitem", "--rows", str(rows), "--seed", str(SEED),
         "--format", "iceberg"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"version 1, {rows} rows added" in r.stdout, r.stdout
    table = StaticTable.from_metadata(str(out / "lineitem" / "metadata" / "v1.metadata.json"))
    assert len(table.snapshots()) == 1
    key = [("l_orderkey", "ascending"), ("l_linenumber", "ascending")]
    got = table.scan().to_arrow().sort_by(key)
    expected = strata.generate("lineitem", rows=rows, seed=SEED).sort_by(key)
    assert got.num_rows == rows
    assert got.column("l_comment").to_pylist() == expected.column("l_comment").to_pylist()
    # A commit with nothing staged is refused.
    with pytest.raises(ValueError, match="no staged parts"):
        strata.commit_table(str(out / "lineitem"))


def test_report_page_from_python(strata_bin, tmp_path):
    """`strata.report` gives the page `strata report` writes, byte for
    byte, and writes it only where asked, never over a file."""
    out = tmp_path / "events"
    strata.generate("events", rows=5_000, seed=3, output_dir=str(out))
    page = strata.report(str(out), spec="events")
    assert page.startswith("<!DOCTYPE html>") and 'id="summary"' in page
    cli = tmp_path / "cli.html"
    subprocess.run([strata_bin, "report", str(out), "--spec", "events", "-o", str(cli)], check=True, capture_output=True)
    assert cli.read_text() == page
    written = tmp_path / "py.html"
    assert strata.report([str(out)], spec="events", output=str(written)) == page
    assert written.read_text() == page
    with pytest.raises(OSError, match="exists"):
        strata.report(str(out), output=str(written))
    assert strata.report(str(out), output=str(written), overwrite=True) == written.read_text()
    with pytest.raises((OSError, ValueError), match="missing"):
        strata.report(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="no-such-preset"):
        strata.report(str(out), spec="no-such-preset")
