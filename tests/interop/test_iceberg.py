"""Iceberg v2 tables from `generate --format iceberg`, read by pyiceberg:
`lineitem` partitioned by month and sorted, an unpartitioned table, and
every table of the `orders` dataset. The rows equal the plain Parquet run
(DuckDB `EXCEPT ALL` both ways); scans with a partition filter and with a
range on the sort key plan exactly the files whose values can match
(brute force over the files with DuckDB); every file's bounds and null
counts in the manifests equal what DuckDB computes from the file; a
location that holds a Delta table, a schema or partitioning that differs
from the table's, and corrupt or missing metadata are refused and change
nothing; appends add snapshots, also two at once (no commit is lost), and
an append killed at any moment leaves the last committed version."""

import datetime
import subprocess
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.conversions import from_bytes
from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan
from pyiceberg.table import StaticTable
from pyiceberg.types import ListType, MapType, StructType

from conftest import check_same_rows

ROWS = "300000"
BASE = ["generate", "--target-records", ROWS, "--compression", "zstd", "-q"]


def run(strata_bin, *args, check=True):
    done = subprocess.run([strata_bin, *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"strata {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done


@pytest.fixture(scope="module")
def lineitem(strata_bin, tmp_path_factory):
    root = tmp_path_factory.mktemp("iceberg")
    run(strata_bin, *BASE, "--preset", "lineitem", "--output-dir", str(root / "plain"))
    run(
        strata_bin, *BASE, "--preset", "lineitem", "--output-dir", str(root / "ice"), "--format", "iceberg",
        "--partition-by", "month(l_shipdate)", "--sort-by", "l_shipdate,l_orderkey",
    )
    return root


def table(root: Path) -> StaticTable:
    return StaticTable.from_metadata(str(root / "metadata" / "v1.metadata.json"))


def test_rows_equal_the_plain_run(lineitem):
    t = table(lineitem / "ice" / "lineitem")
    con = duckdb.connect()
    con.register("ice", t.scan().to_arrow())
    check_same_rows(con, "SELECT * FROM ice", f"SELECT * FROM read_parquet('{lineitem / 'plain'}/*.parquet')", "iceberg")
    assert [f.transform.__class__.__name__ for f in t.spec().fields] == ["MonthTransform"]
    assert [t.schema().find_column_name(f.source_id) for f in t.sort_order().fields] == ["l_shipdate", "l_orderkey"]
    assert t.properties["write.parquet.compression-codec"] == "zstd"


def files_matching(con, files, where):
    """The data files with at least one row where `where` holds."""
    return {f for f in files if con.execute(f"SELECT count(*) FROM read_parquet('{f}') WHERE {where}").fetchone()[0]}


def test_scans_plan_only_the_files_that_can_match(lineitem):
    t = table(lineitem / "ice" / "lineitem")
    con = duckdb.connect()
    files = [task.file.file_path for task in t.scan().plan_files()]
    assert len(files) == len(list((lineitem / "ice" / "lineitem" / "data").rglob("*.parquet")))
    # A partition filter: two months.
    planned = {
        task.file.file_path
        for task in t.scan(
            row_filter=And(GreaterThanOrEqual("l_shipdate", "1994-01-01"), LessThan("l_shipdate", "1994-03-01"))
        ).plan_files()
    }
    assert planned == files_matching(con, files, "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1994-03-01'")
    assert len(planned) == 2
    # A range on the second sort key: pruned by each file's bounds, so
    # exactly the files whose [min, max] meets the range.
    planned = {task.file.file_path for task in t.scan(row_filter=LessThan("l_orderkey", 40)).plan_files()}
    overlapping = {
        f for f in files if con.execute(f"SELECT min(l_orderkey) FROM read_parquet('{f}')").fetchone()[0] < 40
    }
    assert planned == overlapping
    assert 0 < len(planned) < len(files)


def test_bounds_and_null_counts_are_the_files_own(lineitem):
    t = table(lineitem / "ice" / "lineitem")
    schema = t.schema()
    con = duckdb.connect()
    checked = 0
    for task in t.scan().plan_files():
        f = task.file
        for field in schema.fields:
            name = field.name
            lo, hi, nulls = con.execute(
                f'SELECT min("{name}"), max("{name}"), count(*) - count("{name}") FROM read_parquet(\'{f.file_path}\')'
            ).fetchone()
            if isinstance(lo, str):
                lo, hi = lo.encode(), hi.encode()
            got_lo = from_bytes(field.field_type, f.lower_bounds[field.field_id])
            got_hi = from_bytes(field.field_type, f.upper_bounds[field.field_id])
            if isinstance(got_lo, str):
                got_lo, got_hi = got_lo.encode(), got_hi.encode()
            if isinstance(lo, datetime.date):
                epoch = datetime.date(1970, 1, 1)
                lo, hi = (lo - epoch).days, (hi - epoch).days
            assert (got_lo, got_hi) == (lo, hi), (f.file_path, name)
            assert f.null_value_counts[field.field_id] == nulls, (f.file_path, name)
            checked += 1
        assert f.record_count == con.execute(f"SELECT count(*) FROM read_parquet('{f.file_path}')").fetchone()[0]
        assert f.split_offsets and f.split_offsets[0] == 4
    assert checked > 0


@pytest.mark.parametrize("preset", ["orders", "star"])
def test_every_table_of_a_dataset(strata_bin, tmp_path, preset):
    args = ["generate", "-q", "--preset", preset, "--scale", "0.01"]
    run(strata_bin, *args, "--output-dir", str(tmp_path / "plain"))
    run(strata_bin, *args, "--output-dir", str(tmp_path / "ice"), "--format", "iceberg")
    tables = sorted(p.name for p in (tmp_path / "plain").iterdir() if p.is_dir())
    assert len(tables) > 1
    for name in tables:
        con = duckdb.connect()
        con.register("ice", table(tmp_path / "ice" / name).scan().to_arrow())
        check_same_rows(con, "SELECT * FROM ice", f"SELECT * FROM read_parquet('{tmp_path / 'plain' / name}/*.parquet')", name)
        con.close()


@pytest.mark.parametrize("partition", [[], ["--partition-by", "bucket(4, user_id)", "--sort-by", "event_id"]])
def test_data_files_carry_the_schema_field_ids(strata_bin, tmp_path, partition):
    # Every field of the Parquet schema, nested ones included, has the id
    # of the Iceberg field it holds: the same ids, top-level names to the
    # same id, with and without a layout.
    run(strata_bin, "generate", "-q", "--preset", "events", "--target-records", "3000", "--format", "iceberg",
        "--output-dir", str(tmp_path), *partition)
    t = table(tmp_path / "events")
    schema = t.schema()
    want = {f.field_id for f in schema.fields}
    stack = list(schema.fields)
    while stack:
        f = stack.pop()
        want.add(f.field_id)
        ft = f.field_type
        if isinstance(ft, StructType):
            stack.extend(ft.fields)
        elif isinstance(ft, ListType):
            stack.append(ft.element_field)
        elif isinstance(ft, MapType):
            stack.extend([ft.key_field, ft.value_field])
    files = list(t.scan().plan_files())
    assert files
    for task in files:
        arrow = pq.read_schema(task.file.file_path)
        ids = set()
        stack = [(f, None) for f in arrow]
        while stack:
            f, _ = stack.pop()
            ids.add(int(f.metadata[b"PARQUET:field_id"]))
            ty = f.type
            if pa.types.is_struct(ty):
                stack.extend((ty.field(i), f) for i in range(ty.num_fields))
            elif pa.types.is_map(ty):
                stack.extend([(ty.key_field, f), (ty.item_field, f)])
            elif pa.types.is_list(ty):
                stack.append((ty.value_field, f))
        assert ids == want, task.file.file_path
        assert {f.name: int(f.metadata[b"PARQUET:field_id"]) for f in arrow} == {
            f.name: f.field_id for f in schema.fields
        }


def latest(root: Path) -> StaticTable:
    """The table at its highest committed version."""
    versions = [int(p.name[1:].split(".")[0]) for p in (root / "metadata").glob("v*.metadata.json")]
    return StaticTable.from_metadata(str(root / "metadata" / f"v{max(versions)}.metadata.json"))


def metadata_bytes(root: Path):
    return {p.name: p.read_bytes() for p in (root / "metadata").iterdir()}


def plain_union(strata_bin, tmp_path, preset, rows, seeds, extra=()):
    """DuckDB SQL of the rows of plain runs with each of `seeds`."""
    parts = []
    for s in sorted(set(seeds)):
        out = tmp_path / f"plain-{s}"
        if not out.exists():
            run(strata_bin, "generate", "-q", "--preset", preset, "--target-records", str(rows), "--seed", str(s),
                "--output-dir", str(out), *extra)
        parts += [f"SELECT * FROM read_parquet('{out}/*.parquet')"] * list(seeds).count(s)
    return " UNION ALL ".join(parts)


def test_appends_add_snapshots_and_bad_appends_change_nothing(strata_bin, tmp_path):
    ice = ["generate", "-q", "--preset", "lineitem", "--target-records", "20000", "--format", "iceberg",
           "--output-dir", str(tmp_path / "wh"), "--partition-by", "l_returnflag"]
    for seed in (1, 2, 3):
        run(strata_bin, *ice, "--seed", str(seed))
    root = tmp_path / "wh" / "lineitem"
    t = latest(root)
    assert len(t.snapshots()) == 3
    assert [s.parent_snapshot_id for s in t.snapshots()][1:] == [s.snapshot_id for s in t.snapshots()][:-1]
    con = duckdb.connect()
    con.register("ice", t.scan().to_arrow())
    check_same_rows(con, "SELECT * FROM ice", plain_union(strata_bin, tmp_path, "lineitem", 20000, [1, 2, 3]), "appends")
    before = metadata_bytes(root)
    # Another partitioning, another schema: refused, nothing changes.
    other = run(strata_bin, *ice[:-2], "--partition-by", "l_linestatus", check=False)
    assert other.returncode != 0 and "the table is partitioned by l_returnflag (identity)" in other.stderr
    wrong = run(strata_bin, "generate", "-q", "--preset", "contacts", "--target-records", "100", "--format", "iceberg",
                "--output-dir", str(tmp_path / "wh"), "--output-filename", "lineitem", check=False)
    assert wrong.returncode != 0 and "the schema differs from the table's" in wrong.stderr
    assert metadata_bytes(root) == before
    # Corrupt or missing metadata: a clear error, and the table as it was.
    newest = max((root / "metadata").glob("v*.metadata.json"))
    good = newest.read_bytes()
    newest.write_bytes(good[: len(good) // 2])
    corrupt = run(strata_bin, *ice, "--seed", "9", check=False)
    assert corrupt.returncode != 0 and "not Iceberg table metadata" in corrupt.stderr
    newest.write_bytes(good)
    bare = tmp_path / "bare" / "lineitem" / "metadata"
    bare.mkdir(parents=True)
    (bare / "version-hint.text").write_text("3")
    missing = run(strata_bin, *ice[:-4], "--output-dir", str(tmp_path / "bare"), check=False)
    assert missing.returncode != 0 and "metadata is missing" in missing.stderr
    assert metadata_bytes(root) == before
    # A Delta table's directory is not taken for an Iceberg table.
    delta = tmp_path / "d" / "contacts" / "_delta_log"
    delta.mkdir(parents=True)
    d = run(strata_bin, *BASE, "--preset", "contacts", "--output-dir", str(tmp_path / "d"), "--format", "iceberg", check=False)
    assert d.returncode != 0 and "Delta table" in d.stderr
    assert not (tmp_path / "d" / "contacts" / "metadata").exists()


def test_concurrent_appends_lose_no_commit(strata_bin, tmp_path):
    # lineitem: pyiceberg 0.12 reads a null list (contacts' phones) as an
    # empty one, which is the reader's doing, not the table's.
    base = [strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "2000", "--format", "iceberg",
            "--output-dir", str(tmp_path / "wh")]
    seeds = []
    for round_ in range(20):
        pair = [2 * round_ + 1, 2 * round_ + 2]
        procs = [subprocess.Popen([*base, "--seed", str(s)], stderr=subprocess.PIPE, text=True) for s in pair]
        for p in procs:
            _, err = p.communicate()
            assert p.returncode == 0, err
        seeds += pair
    t = latest(tmp_path / "wh" / "lineitem")
    assert len(t.snapshots()) == 40
    con = duckdb.connect()
    con.register("ice", t.scan().to_arrow())
    check_same_rows(con, "SELECT * FROM ice", plain_union(strata_bin, tmp_path, "lineitem", 2000, seeds), "concurrent appends")


def test_a_killed_append_leaves_the_last_committed_version(strata_bin, tmp_path):
    import random
    import signal
    import time

    rng = random.Random(7)
    root = tmp_path / "wh" / "lineitem"
    base = [strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "150000", "--format", "iceberg",
            "--output-dir", str(tmp_path / "wh"), "--partition-by", "month(l_shipdate)"]
    committed = []
    for i in range(20):
        versions = len(list((root / "metadata").glob("v*.metadata.json"))) if root.exists() else 0
        p = subprocess.Popen([*base, "--seed", str(100 + i)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, 2.5))
        p.send_signal(signal.SIGKILL)
        p.wait()
        after = len(list((root / "metadata").glob("v*.metadata.json"))) if root.exists() else 0
        assert after in (versions, versions + 1)
        if after == versions + 1:
            committed.append(100 + i)
    assert committed, "no append finished: give them more time"
    t = latest(root)
    assert len(t.snapshots()) == len(committed)
    con = duckdb.connect()
    con.register("ice", t.scan().to_arrow())
    check_same_rows(con, "SELECT * FROM ice", plain_union(strata_bin, tmp_path, "lineitem", 150000, committed), "after kills")
    # The killed runs' files are orphans: `strata table clean` removes
    # them (and keeps them under a minimum age), and the table is as it was.
    planned = {Path(f.file.file_path) for f in t.scan().plan_files()}
    on_disk = set((root / "data").rglob("*"))
    on_disk = {p for p in on_disk if p.is_file()}
    assert planned <= on_disk
    # Within the minimum age only the temporaries of dead processes go.
    kept = run(strata_bin, "table", "clean", str(root))
    removed = [line.split(" ", 1)[1] for line in kept.stdout.splitlines()[:-1]]
    assert all(".strata-tmp" in r for r in removed), removed
    young = {p for p in on_disk - planned if ".strata-tmp" not in str(p)}
    if young:
        assert f"kept {len(young)} unreferenced files younger than --older-than" in kept.stdout, kept.stdout
    done = run(strata_bin, "table", "clean", str(root), "--older-than", "0")
    assert f"removed {len(young)} unreferenced files" in done.stdout, done.stdout
    left = set((root / "data").rglob("*"))
    assert {p for p in left if p.is_file()} == planned
    assert not [p for p in left if p.name.startswith(".")]
    assert not [p for p in left if p.is_dir() and not any(p.iterdir())]
    assert not [p for p in (root / "metadata").iterdir() if p.name.startswith(".")]
    con = duckdb.connect()
    con.register("cleaned", latest(root).scan().to_arrow())
    check_same_rows(con, "SELECT * FROM cleaned",
                    plain_union(strata_bin, tmp_path / "again", "lineitem", 150000, committed), "after clean")


def test_a_sql_catalog_opens_every_table(strata_bin, tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    args = ["generate", "-q", "--preset", "orders", "--scale", "0.01"]
    run(strata_bin, *args, "--output-dir", str(tmp_path / "plain"))
    db = tmp_path / "wh" / "catalog.db"
    ice = [*args, "--format", "iceberg", "--catalog", f"sqlite:{db}", "--namespace", "bench"]
    # The namespace must exist unless it is to be created; nothing is
    # written before that is known.
    missing = run(strata_bin, *ice, "--output-dir", str(tmp_path / "wh"), check=False)
    assert missing.returncode != 0 and "namespace `bench` does not exist" in missing.stderr
    assert not (tmp_path / "wh" / "orders").exists()
    run(strata_bin, *ice, "--output-dir", str(tmp_path / "wh"), "--create-namespace")
    catalog = SqlCatalog("default", uri=f"sqlite:///{db}")
    tables = sorted(t[1] for t in catalog.list_tables("bench"))
    assert tables == sorted(p.name for p in (tmp_path / "plain").iterdir() if p.is_dir())
    for name in tables:
        con = duckdb.connect()
        con.register("ice", catalog.load_table(("bench", name)).scan().to_arrow())
        check_same_rows(con, "SELECT * FROM ice", f"SELECT * FROM read_parquet('{tmp_path / 'plain' / name}/*.parquet')", name)
        con.close()
    # A table the catalog has elsewhere is refused, and the catalog is
    # unchanged.
    before = db.read_bytes()
    elsewhere = run(strata_bin, *ice, "--output-dir", str(tmp_path / "wh2"), check=False)
    assert elsewhere.returncode != 0 and "which is not the current version of" in elsewhere.stderr
    assert db.read_bytes() == before
    assert not (tmp_path / "wh2").exists()
    # An append moves the catalog's entry to the new version.
    run(strata_bin, *ice, "--output-dir", str(tmp_path / "wh"), "--seed", "5")
    orders = SqlCatalog("default", uri=f"sqlite:///{db}").load_table(("bench", "orders"))
    assert len(orders.snapshots()) == 2
    assert orders.metadata_location.endswith("v2.metadata.json")


def test_a_file_that_is_not_a_catalog_is_refused(strata_bin, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n" * 300)
    r = run(strata_bin, *BASE, "--preset", "contacts", "--output-dir", str(tmp_path / "wh"), "--format", "iceberg",
            "--catalog", f"sqlite:{notes}", "--create-namespace", check=False)
    assert r.returncode != 0 and "notes.txt" in r.stderr
    assert notes.read_text() == "not a database\n" * 300
    assert not (tmp_path / "wh").exists()


def test_snapshots_split_one_run_into_appends(strata_bin, tmp_path):
    args = ["generate", "-q", "--preset", "lineitem", "--target-records", "30000"]
    run(strata_bin, *args, "--output-dir", str(tmp_path / "plain"))
    run(strata_bin, *args, "--output-dir", str(tmp_path / "wh"), "--format", "iceberg",
        "--partition-by", "month(l_shipdate)", "--snapshots", "6")
    t = latest(tmp_path / "wh" / "lineitem")
    assert len(t.snapshots()) == 6
    assert [int(s.summary["added-records"]) for s in t.snapshots()] == [5000] * 6
    con = duckdb.connect()
    con.register("ice", t.scan().to_arrow())
    check_same_rows(con, "SELECT * FROM ice", f"SELECT * FROM read_parquet('{tmp_path / 'plain'}/*.parquet')", "snapshots")
    bad = run(strata_bin, *args, "--output-dir", str(tmp_path / "x"), "--snapshots", "3", check=False)
    assert bad.returncode != 0 and "add --format iceberg" in bad.stderr


def test_parts_commit_as_one_snapshot(strata_bin, tmp_path):
    args = ["generate", "-q", "--preset", "lineitem", "--target-records", "40000", "--format", "iceberg",
            "--partition-by", "month(l_shipdate)", "--sort-by", "l_shipdate,l_orderkey"]
    run(strata_bin, *args, "--output-dir", str(tmp_path / "one"))
    parts = [*args, "--output-dir", str(tmp_path / "parts"), "--parts", "4"]
    for i in (1, 2, 4):
        run(strata_bin, *parts, "--part", str(i))
    table = tmp_path / "parts" / "lineitem"
    # A part written twice, and a commit with a part missing, are refused.
    twice = run(strata_bin, *parts, "--part", "2", check=False)
    assert twice.returncode != 0 and "part 2 of 4" in twice.stderr and "already staged" in twice.stderr
    missing = run(strata_bin, "table", "commit", str(table), check=False)
    assert missing.returncode != 0 and "part(s) 3 of 4 are not staged" in missing.stderr
    assert not (table / "metadata").exists()
    # A fragment that does not read is a clear error, and nothing is
    # committed.
    (table / "_strata_parts" / "part-9-of-4.json").write_text('{"table": "lineitem", "part":')
    broken = run(strata_bin, "table", "commit", str(table), check=False)
    assert broken.returncode != 0 and "not a staged part" in broken.stderr, broken.stderr
    (table / "_strata_parts" / "part-9-of-4.json").unlink()
    assert not (table / "metadata").exists()
    bad_catalog = run(strata_bin, "table", "commit", str(table), "--catalog", "postgres://x", check=False)
    assert bad_catalog.returncode != 0 and "expected sqlite:PATH" in bad_catalog.stderr
    run(strata_bin, *parts, "--part", "3")
    run(strata_bin, "table", "commit", str(table))
    assert not (table / "_strata_parts").exists()
    t = latest(table)
    assert len(t.snapshots()) == 1
    one = latest(tmp_path / "one" / "lineitem")
    assert t.spec() == one.spec() and t.sort_order() == one.sort_order() and t.schema() == one.schema()
    con = duckdb.connect()
    con.register("parts", t.scan().to_arrow())
    con.register("one", one.scan().to_arrow())
    check_same_rows(con, "SELECT * FROM parts", "SELECT * FROM one", "4 parts against one run")


def test_row_offset_append_continues_the_keys(strata_bin, tmp_path):
    args = ["generate", "-q", "--preset", "lineitem", "--target-records", "1000", "--format", "iceberg",
            "--output-dir", str(tmp_path / "wh"), "--row-offset", "append", "--partition-by", "l_returnflag"]
    for _ in range(3):
        run(strata_bin, *args)
    t = latest(tmp_path / "wh" / "lineitem")
    assert len(t.snapshots()) == 3
    con = duckdb.connect()
    con.register("ice", t.scan().to_arrow())
    check_same_rows(con, "SELECT * FROM ice", plain_union(strata_bin, tmp_path, "lineitem", 3000, [42]), "row offsets")
