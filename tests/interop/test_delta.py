"""Delta Lake tables from `generate --format delta`, read by the `deltalake`
package (delta-rs): `lineitem` partitioned by l_returnflag and sorted
holds the rows of the plain Parquet run (DuckDB `EXCEPT ALL` both ways);
a partition filter selects exactly that partition's files; every file's
statistics in the log equal what DuckDB computes from the file; the
history is one WRITE; every table of a dataset, nested types, timestamps
in partition directories, unsigned integers and `timestamp_ntz` read back
as written; a location that already holds a table is refused and left
unchanged, and so is a partition field with a transform; a table of 13
versions has a checkpoint at version 10 that deltalake loads the table
from once the entries before it are gone, and strata appends on it."""

import json
import subprocess
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from conftest import check_same_rows

ROWS = "300000"
BASE = ["generate", "--target-records", ROWS, "--compression", "zstd", "-q"]
LOG = Path("_delta_log") / "00000000000000000000.json"


def run(strata_bin, *args, check=True):
    return subprocess.run([strata_bin, *args], check=check, capture_output=True, text=True)


@pytest.fixture(scope="module")
def lineitem(strata_bin, tmp_path_factory):
    root = tmp_path_factory.mktemp("delta")
    run(strata_bin, *BASE, "--preset", "lineitem", "--output-dir", str(root / "plain"))
    done = run(
        strata_bin, "generate", "--target-records", ROWS, "--compression", "zstd", "--preset", "lineitem",
        "--output-dir", str(root / "delta"), "--format", "delta",
        "--partition-by", "l_returnflag", "--sort-by", "l_shipdate,l_orderkey",
    )
    assert f"delta table {root / 'delta' / 'lineitem'}: version 0, 3 files, {ROWS} rows" in done.stdout
    return root


def same_rows(table: pa.Table, plain: Path, what: str):
    """The rows of `table` against the Parquet files of `plain`, column by
    column in the plain run's order."""
    con = duckdb.connect()
    con.register("t", table)
    names = [r[0] for r in con.sql(f"DESCRIBE SELECT * FROM read_parquet('{plain}/*.parquet')").fetchall()]
    assert sorted(names) == sorted(table.column_names), what
    cols = ", ".join(f'"{n}"' for n in names)
    check_same_rows(con, f"SELECT {cols} FROM t", f"SELECT {cols} FROM read_parquet('{plain}/*.parquet')", what)
    con.close()


def test_rows_equal_the_plain_run(lineitem):
    dt = DeltaTable(str(lineitem / "delta" / "lineitem"))
    assert dt.version() == 0
    p = dt.protocol()
    assert (p.min_reader_version, p.min_writer_version) == (1, 2)
    assert not p.reader_features and not p.writer_features
    assert dt.metadata().partition_columns == ["l_returnflag"]
    same_rows(dt.to_pyarrow_table(), lineitem / "plain", "delta")
    # By Delta's convention the partition column is in the log and the
    # directory names, not in the files.
    for f in dt.file_uris():
        assert "l_returnflag" not in pq.read_schema(f).names, f


def test_a_partition_filter_selects_its_files(lineitem):
    root = lineitem / "delta" / "lineitem"
    dt = DeltaTable(str(root))
    for flag in ["A", "N", "R"]:
        on_disk = {str(p) for p in (root / f"l_returnflag={flag}").glob("*.parquet")}
        assert on_disk
        assert set(dt.file_uris(file_pruning_predicate=[("l_returnflag", "=", flag)])) == on_disk
    assert len(dt.file_uris()) == len(list(root.rglob("*.parquet")))


STATS_COLUMNS = ["l_orderkey", "l_partkey", "l_linenumber", "l_quantity", "l_extendedprice", "l_shipdate",
                 "l_receiptdate", "l_shipmode", "l_comment"]


def test_statistics_are_the_files_own(lineitem):
    root = lineitem / "delta" / "lineitem"
    dt = DeltaTable(str(root))
    actions = pa.table(dt.get_add_actions(flatten=True)).to_pylist()
    assert len(actions) == 3
    con = duckdb.connect()
    types = {r[0]: r[1] for r in con.sql(f"DESCRIBE SELECT * FROM read_parquet('{root}/*/*.parquet')").fetchall()}
    assert {types[c] for c in STATS_COLUMNS} == {"BIGINT", "INTEGER", "DECIMAL(15,2)", "DATE", "VARCHAR"}
    for a in actions:
        f = root / a["path"]
        assert a["partition.l_returnflag"] == f.parent.name.split("=", 1)[1]
        assert a["num_records"] == con.execute(f"SELECT count(*) FROM read_parquet('{f}')").fetchone()[0]
        assert a["size_bytes"] == f.stat().st_size
        for c in STATS_COLUMNS:
            lo, hi, nulls = con.execute(
                f"SELECT min({c}), max({c}), count(*) - count({c}) FROM read_parquet('{f}')"
            ).fetchone()
            assert (a[f"min.{c}"], a[f"max.{c}"], a[f"null_count.{c}"]) == (lo, hi, nulls), (f, c)


def test_the_history_is_one_write(lineitem):
    history = DeltaTable(str(lineitem / "delta" / "lineitem")).history()
    assert len(history) == 1
    h = history[0]
    assert (h["version"], h["operation"]) == (0, "WRITE")
    assert h["operationParameters"] == {"mode": "ErrorIfExists", "partitionBy": '["l_returnflag"]'}


def test_nested_types_and_timestamp_partitions(strata_bin, tmp_path):
    # Structs, lists and a map; a timestamp with a zone in the directory
    # names (its `:` escaped there, the escape encoded again in the log).
    base = ["generate", "-q", "--preset", "events", "--target-records", "2000"]
    run(strata_bin, *base, "--output-dir", str(tmp_path / "plain"))
    run(strata_bin, *base, "--output-dir", str(tmp_path / "flat"), "--format", "delta")
    run(strata_bin, *base, "--output-dir", str(tmp_path / "by_ts"), "--format", "delta",
        "--partition-by", "ts", "--max-partitions", "100000")
    same_rows(DeltaTable(str(tmp_path / "flat" / "events")).to_pyarrow_table(), tmp_path / "plain", "events")
    dt = DeltaTable(str(tmp_path / "by_ts" / "events"))
    t = dt.to_pyarrow_table()
    same_rows(t, tmp_path / "plain", "events by ts")
    first = min(t.column("ts").to_pylist())
    (only,) = dt.file_uris(file_pruning_predicate=[("ts", "=", first)])
    assert "%3A" in only and Path(only).exists()


def test_every_table_of_a_dataset(strata_bin, tmp_path):
    args = ["generate", "-q", "--preset", "orders", "--scale", "0.01"]
    run(strata_bin, *args, "--output-dir", str(tmp_path / "plain"))
    run(strata_bin, *args, "--output-dir", str(tmp_path / "d"), "--format", "delta")
    tables = sorted(p.name for p in (tmp_path / "plain").iterdir() if p.is_dir())
    assert len(tables) > 1
    for name in tables:
        same_rows(DeltaTable(str(tmp_path / "d" / name)).to_pyarrow_table(), tmp_path / "plain" / name, name)


SPEC = """
name = "t"
[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }
[[fields]]
name = "u8"
type = "uint8"
uniform = { min = 0, max = 255 }
[[fields]]
name = "u32"
type = "uint32"
uniform = { min = 0, max = 4000000000 }
[[fields]]
name = "big"
type = "decimal(38, 10)"
uniform = { min = "-922337203.6854775807", max = "922337203.6854775807" }
[[fields]]
name = "local"
type = "timestamp(us)"
uniform = { min = 2024-01-01T00:00:00Z, max = 2024-01-03T00:00:00Z }
[[fields]]
name = "day"
type = "date32"
uniform = { min = "2024-01-01", max = "2024-01-04" }
[[fields]]
name = "ok"
type = "bool"
null_rate = 0.1
probability = 0.5
"""


def test_unsigned_integers_and_timestamp_ntz(strata_bin, tmp_path):
    spec = tmp_path / "t.toml"
    spec.write_text(SPEC)
    base = ["generate", "-q", "--spec", str(spec), "--target-records", "20000"]
    run(strata_bin, *base, "--output-dir", str(tmp_path / "plain"))
    run(strata_bin, *base, "--output-dir", str(tmp_path / "d"), "--format", "delta", "--partition-by", "day")
    dt = DeltaTable(str(tmp_path / "d" / "t"))
    p = dt.protocol()
    assert (p.min_reader_version, p.min_writer_version) == (3, 7)
    assert p.reader_features == ["timestampNtz"] and p.writer_features == ["timestampNtz"]
    t = dt.to_pyarrow_table()
    assert t.schema.field("u8").type == pa.int16() and t.schema.field("u32").type == pa.int64()
    assert t.schema.field("local").type == pa.timestamp("us")
    same_rows(t, tmp_path / "plain", "spec")
    # Each file's bounds of the types the lineitem test has not.
    con = duckdb.connect()
    root = tmp_path / "d" / "t"
    for a in pa.table(dt.get_add_actions(flatten=True)).to_pylist():
        for c in ["u8", "u32", "big", "local", "ok"]:
            got = (a[f"min.{c}"], a[f"max.{c}"], a[f"null_count.{c}"])
            want = con.execute(
                f"SELECT min({c}), max({c}), count(*) - count({c}) FROM read_parquet('{root / a['path']}')"
            ).fetchone()
            assert got == want, (a["path"], c)


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_appends_add_commits_and_bad_appends_change_nothing(strata_bin, tmp_path):
    args = ["generate", "-q", "--preset", "lineitem", "--target-records", "20000", "--format", "delta",
            "--output-dir", str(tmp_path / "d"), "--partition-by", "l_returnflag"]
    for seed in (1, 2, 3):
        run(strata_bin, *args, "--seed", str(seed))
    table = tmp_path / "d" / "lineitem"
    dt = DeltaTable(str(table))
    assert dt.version() == 2
    history = dt.history()
    assert [h["operationParameters"]["mode"] for h in history] == ["Append", "Append", "ErrorIfExists"]
    plains = []
    for seed in (1, 2, 3):
        out = tmp_path / f"plain-{seed}"
        run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "20000", "--seed", str(seed),
            "--output-dir", str(out))
        plains.append(f"SELECT * FROM read_parquet('{out}/*.parquet')")
    con = duckdb.connect()
    con.register("delta", dt.to_pyarrow_table())
    columns = ", ".join(f'"{c}"' for c in dt.schema().to_arrow().names)
    check_same_rows(con, f"SELECT {columns} FROM delta", f"SELECT {columns} FROM ({' UNION ALL '.join(plains)})", "appends")
    before = tree(table)
    # Another partitioning or schema: refused, nothing changes.
    other = run(strata_bin, *args[:-2], "--partition-by", "l_linestatus", check=False)
    assert other.returncode != 0 and "the table is partitioned by [l_returnflag]" in other.stderr, other.stderr
    wrong = run(strata_bin, "generate", "-q", "--preset", "contacts", "--target-records", "100", "--format", "delta",
                "--output-dir", str(tmp_path / "d"), "--output-filename", "lineitem", check=False)
    # (Partitioning is compared first; the schema check has a unit test.)
    assert wrong.returncode != 0 and "this run is partitioned by []" in wrong.stderr, wrong.stderr
    assert tree(table) == before


def test_another_format_is_refused_and_kept(strata_bin, tmp_path):
    # An Iceberg table's directory is not taken for a Delta table.
    run(strata_bin, *BASE, "--preset", "contacts", "--output-dir", str(tmp_path / "i"), "--format", "iceberg")
    iceberg = tmp_path / "i" / "contacts"
    before = tree(iceberg)
    other = run(strata_bin, *BASE, "--preset", "contacts", "--output-dir", str(tmp_path / "i"), "--format", "delta",
                check=False)
    assert other.returncode != 0 and "holds an Iceberg table" in other.stderr, other.stderr
    assert tree(iceberg) == before


def test_a_partition_transform_is_refused(strata_bin, tmp_path):
    out = tmp_path / "d"
    r = run(strata_bin, *BASE, "--preset", "lineitem", "--output-dir", str(out), "--format", "delta",
            "--partition-by", "month(l_shipdate)", check=False)
    assert r.returncode != 0
    assert "`month(l_shipdate)`: Delta Lake partitions by column values" in r.stderr, r.stderr
    assert not out.exists()


def test_a_checkpoint_every_ten_versions_and_the_table_loads_from_it(strata_bin, tmp_path):
    # A new table and 12 appends: versions 0 to 12, a checkpoint at 10.
    out = tmp_path / "d"
    args = ["generate", "--preset", "lineitem", "--target-records", "26000", "--format", "delta",
            "--output-dir", str(out), "--partition-by", "l_returnflag"]
    done = run(strata_bin, *args, "--snapshots", "13")
    table = out / "lineitem"
    log = table / "_delta_log"
    assert "checkpoint at version 10 (" in done.stdout, done.stdout
    assert sorted(p.name for p in log.glob("*.checkpoint.parquet")) == ["00000000000000000010.checkpoint.parquet"]
    last = json.loads((log / "_last_checkpoint").read_text())
    assert last["version"] == 10 and last["numOfAddFiles"] > 0
    # The checkpoint holds the protocol, the metaData and one add per live
    # file of versions 0 to 10, as pyarrow reads it.
    cp = pq.read_table(log / "00000000000000000010.checkpoint.parquet")
    assert cp.num_rows == last["size"]
    adds = [a for a in cp.column("add").to_pylist() if a is not None]
    assert len(adds) == last["numOfAddFiles"]
    assert sum(json.loads(a["stats"])["numRecords"] for a in adds) == 11 * 2000
    assert all(dict(a["partitionValues"]).keys() == {"l_returnflag"} for a in adds)
    plain = tmp_path / "plain"
    run(strata_bin, *BASE[:1], "-q", "--preset", "lineitem", "--target-records", "26000", "--output-dir", str(plain))

    def check(version):
        dt = DeltaTable(str(table))
        assert dt.version() == version
        con = duckdb.connect()
        con.register("delta", dt.to_pyarrow_table())
        columns = ", ".join(f'"{c}"' for c in dt.schema().to_arrow().names)
        check_same_rows(con, f"SELECT {columns} FROM delta",
                        f"SELECT {columns} FROM read_parquet('{plain}/*.parquet')", f"version {version}")
        return dt

    check(12)
    # Without the entries before the checkpoint (as a log clean-up leaves
    # it), the table loads from the checkpoint, and strata appends on top
    # of it: the same rows again, a version more.
    for v in range(10):
        (log / f"{v:020}.json").unlink()
    dt = check(12)
    assert len(dt.history()) == 3  # versions 10, 11 and 12 are left
    run(strata_bin, *args, "-q")
    dt = DeltaTable(str(table))
    assert dt.version() == 13
    assert dt.to_pyarrow_table().num_rows == 2 * 26000


def test_parts_commit_as_one_version(strata_bin, tmp_path):
    # Four parts, staged, then one commit: one version holding the rows of
    # the single-process table; a missing part commits nothing.
    out = tmp_path / "d"
    common = ["generate", "-q", "--preset", "lineitem", "--target-records", "40000", "--format", "delta",
              "--output-dir", str(out), "--partition-by", "l_returnflag", "--sort-by", "l_shipdate"]
    for i in (1, 2, 4):
        run(strata_bin, *common, "--parts", "4", "--part", str(i))
    table = out / "lineitem"
    assert not (table / "_delta_log").exists()
    missing = run(strata_bin, "table", "commit", str(table), check=False)
    assert missing.returncode != 0 and "part(s) 3 of 4 are not staged" in missing.stderr, missing.stderr
    again = run(strata_bin, *common, "--parts", "4", "--part", "2", check=False)
    assert again.returncode != 0 and "part 2 of 4" in again.stderr and "already staged" in again.stderr
    run(strata_bin, *common, "--parts", "4", "--part", "3")
    done = run(strata_bin, "table", "commit", str(table))
    assert f"delta table {table}: version 0," in done.stdout, done.stdout
    assert not (table / "_strata_parts").exists()
    single = tmp_path / "single"
    run(strata_bin, *common[:-6], "--output-dir", str(single), "--partition-by", "l_returnflag",
        "--sort-by", "l_shipdate")
    a, b = DeltaTable(str(table)), DeltaTable(str(single / "lineitem"))
    assert a.version() == 0 and len(a.history()) == 1
    con = duckdb.connect()
    con.register("a", a.to_pyarrow_table())
    con.register("b", b.to_pyarrow_table())
    columns = ", ".join(f'"{c}"' for c in b.schema().to_arrow().names)
    check_same_rows(con, f"SELECT {columns} FROM a", f"SELECT {columns} FROM b", "parts")


def test_clean_removes_only_what_no_version_names(strata_bin, tmp_path):
    # Orphans (a killed run's data file, a dead process's temporary) go;
    # the table's files, a staged part's files, the log and directories
    # of others (`_other/`) stay, and the table reads as before.
    out = tmp_path / "d"
    common = ["generate", "-q", "--preset", "lineitem", "--target-records", "20000", "--format", "delta",
              "--output-dir", str(out), "--partition-by", "l_returnflag"]
    run(strata_bin, *common)
    run(strata_bin, *common, "--seed", "2")
    table = out / "lineitem"
    before = DeltaTable(str(table)).to_pyarrow_table()
    run(strata_bin, *common, "--seed", "3", "--parts", "2", "--part", "1")
    staged = set(json.loads(next((table / "_strata_parts").glob("*.json")).read_text())["files"])
    assert staged
    (table / "l_returnflag=A" / "lineitem-dead_0.parquet").write_bytes(b"x" * 10)
    (table / "l_returnflag=Z").mkdir()
    (table / "l_returnflag=Z" / ".lineitem-y_0.parquet.999999999.strata-tmp").write_bytes(b"y")
    (table / "_other").mkdir()
    (table / "_other" / "keep.txt").write_text("k")
    dry = run(strata_bin, "table", "clean", str(table), "--older-than", "0", "--dry-run")
    assert "would remove 2 unreferenced files (11 bytes)" in dry.stdout, dry.stdout
    assert (table / "l_returnflag=A" / "lineitem-dead_0.parquet").exists()
    young = run(strata_bin, "table", "clean", str(table))
    assert "removed 1 unreferenced files (1 bytes)" in young.stdout, young.stdout
    assert "kept 1 unreferenced files younger than --older-than" in young.stdout, young.stdout
    done = run(strata_bin, "table", "clean", str(table), "--older-than", "0")
    assert "delta table" in done.stdout and "removed 1 unreferenced files (10 bytes)" in done.stdout, done.stdout
    assert not (table / "l_returnflag=A" / "lineitem-dead_0.parquet").exists()
    assert not (table / "l_returnflag=Z").exists()
    assert (table / "_other" / "keep.txt").exists()
    assert all((table / f).exists() for f in staged)
    after = DeltaTable(str(table)).to_pyarrow_table()
    assert after.num_rows == before.num_rows == 40000
    con = duckdb.connect()
    con.register("a", before)
    con.register("b", after)
    check_same_rows(con, "SELECT * FROM a", "SELECT * FROM b", "clean")
    bad = run(strata_bin, "table", "clean", str(tmp_path / "nothing"), check=False)
    assert bad.returncode != 0 and "holds no Iceberg or Delta table" in bad.stderr, bad.stderr


def plain_union(strata_bin, tmp_path, rows, seeds):
    """DuckDB SQL of the rows of plain lineitem runs with each of `seeds`."""
    parts = []
    for s in seeds:
        out = tmp_path / f"plain-{s}"
        run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", str(rows), "--seed", str(s),
            "--output-dir", str(out))
        parts.append(f"SELECT * FROM read_parquet('{out}/*.parquet')")
    return " UNION ALL ".join(parts)


def same_as(table: Path, sql: str, what: str):
    dt = DeltaTable(str(table))
    con = duckdb.connect()
    con.register("delta", dt.to_pyarrow_table())
    columns = ", ".join(f'"{c}"' for c in dt.schema().to_arrow().names)
    check_same_rows(con, f"SELECT {columns} FROM delta", f"SELECT {columns} FROM ({sql})", what)
    return dt


def test_concurrent_appends_lose_no_commit(strata_bin, tmp_path):
    # Two processes append at once, 20 times: 40 versions (and the
    # checkpoints at 10, 20 and 30), every append's rows exactly once.
    base = [strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "2000", "--format", "delta",
            "--output-dir", str(tmp_path / "d"), "--partition-by", "l_returnflag"]
    seeds = []
    for round_ in range(20):
        pair = [2 * round_ + 1, 2 * round_ + 2]
        procs = [subprocess.Popen([*base, "--seed", str(s)], stderr=subprocess.PIPE, text=True) for s in pair]
        for p in procs:
            _, err = p.communicate()
            assert p.returncode == 0, err
        seeds += pair
    table = tmp_path / "d" / "lineitem"
    dt = same_as(table, plain_union(strata_bin, tmp_path, 2000, seeds), "concurrent appends")
    assert dt.version() == 39 and len(dt.history()) == 40
    # One writer created the table (the first round may race for version
    # 0: the loser appends as version 1).
    modes = [h["operationParameters"]["mode"] for h in dt.history()]
    assert modes.count("ErrorIfExists") == 1 and modes.count("Append") == 39
    log = table / "_delta_log"
    assert sorted(p.name[:20] for p in log.glob("*.checkpoint.parquet")) == [f"{v:020}" for v in (10, 20, 30)]


def test_a_killed_append_leaves_the_last_committed_version(strata_bin, tmp_path):
    import random
    import signal
    import time

    rng = random.Random(11)
    table = tmp_path / "d" / "lineitem"
    base = [strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "150000", "--format", "delta",
            "--output-dir", str(tmp_path / "d"), "--partition-by", "l_returnflag", "--sort-by", "l_shipdate"]
    committed = []
    for i in range(20):
        log = table / "_delta_log"
        versions = len(list(log.glob("*.json"))) if log.exists() else 0
        p = subprocess.Popen([*base, "--seed", str(100 + i)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, 2.5))
        p.send_signal(signal.SIGKILL)
        p.wait()
        after = len(list(log.glob("*.json"))) if log.exists() else 0
        assert after in (versions, versions + 1)
        if after == versions + 1:
            committed.append(100 + i)
    assert committed, "no append finished: give them more time"
    dt = same_as(table, plain_union(strata_bin, tmp_path, 150000, committed), "after kills")
    assert dt.version() == len(committed) - 1
    # Every file the log does not name goes with `strata table clean`.
    from urllib.parse import unquote, urlparse

    named = {unquote(urlparse(u).path) if u.startswith("file:") else u for u in dt.file_uris()}
    run(strata_bin, "table", "clean", str(table), "--older-than", "0")
    left = {str(p) for p in table.rglob("*.parquet") if "_delta_log" not in p.parts}
    assert left == named
    same_as(table, plain_union(strata_bin, tmp_path / "again", 150000, committed), "after clean")


def test_a_corrupt_or_missing_log_entry_is_refused_and_kept(strata_bin, tmp_path):
    args = ["generate", "-q", "--preset", "lineitem", "--target-records", "2000", "--format", "delta",
            "--output-dir", str(tmp_path / "d")]
    for seed in (1, 2):
        run(strata_bin, *args, "--seed", str(seed))
    table = tmp_path / "d" / "lineitem"
    entry = table / "_delta_log" / f"{1:020}.json"
    entry.write_text("{not json\n")
    before = tree(table)
    bad = run(strata_bin, *args, "--seed", "3", check=False)
    assert bad.returncode != 0 and "not a Delta log action" in bad.stderr and entry.name in bad.stderr, bad.stderr
    assert tree(table) == before
    entry.unlink()
    (table / "_delta_log" / f"{2:020}.json").write_text((table / "_delta_log" / f"{0:020}.json").read_text())
    before = tree(table)
    gone = run(strata_bin, *args, "--seed", "3", check=False)
    assert gone.returncode != 0 and "the log has no entry for version 1" in gone.stderr, gone.stderr
    assert tree(table) == before


def test_row_offset_append_continues_the_keys(strata_bin, tmp_path):
    # Three appends of 1000 rows from where the table stops, then three
    # snapshots in one run: the rows of one plain run of 6000 rows, every
    # key once.
    args = ["generate", "-q", "--preset", "lineitem", "--target-records", "1000", "--format", "delta",
            "--output-dir", str(tmp_path / "d"), "--row-offset", "append"]
    for _ in range(3):
        run(strata_bin, *args)
    run(strata_bin, *args[:5], "3000", *args[6:], "--snapshots", "3")
    plain = tmp_path / "plain"
    run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "6000", "--output-dir", str(plain))
    dt = same_as(tmp_path / "d" / "lineitem", f"SELECT * FROM read_parquet('{plain}/*.parquet')", "row offsets")
    assert dt.version() == 5
    # An offset by number is the same as a part of a larger run.
    run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "2000", "--row-offset", "4000",
        "--output-dir", str(tmp_path / "tail"))
    run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "6000", "--parts", "3", "--part",
        "3", "--output-dir", str(tmp_path / "part"))
    con = duckdb.connect()
    check_same_rows(con, f"SELECT * FROM read_parquet('{tmp_path / 'tail'}/*.parquet')",
                    f"SELECT * FROM read_parquet('{tmp_path / 'part'}/*.parquet')", "offset as a part")
    plain_append = run(strata_bin, "generate", "-q", "--preset", "lineitem", "--row-offset", "append",
                       "--output-dir", str(tmp_path / "x"), check=False)
    assert plain_append.returncode != 0 and "add --format iceberg or delta" in plain_append.stderr
    dataset = run(strata_bin, "generate", "-q", "--preset", "orders", "--scale", "0.01", "--row-offset", "10",
                  "--output-dir", str(tmp_path / "y"), check=False)
    assert dataset.returncode != 0 and "related row by row" in dataset.stderr, dataset.stderr
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
