"""`strata compact table` over Iceberg and Delta tables with a history
(20 versions of `orders`, merge-on-read deletes or deletion vectors):
the plan reads only the metadata, the overlap depth and file count drop
as predicted, the readers read the same rows before and after, an
append running during the compaction loses nothing, and a table whose
sort column has no bounds in its metadata is refused."""

import re
import subprocess
import threading

import duckdb
import pyarrow as pa
import pytest
from deltalake import DeltaTable, QueryBuilder, write_deltalake
from pyiceberg.table import StaticTable

from conftest import check_same_rows

SPEC = """
name = "orders"
primary_key = "id"
changes = { versions = 20, insert = 0.02, update = 0.05, delete = 0.01, keys = { zipf = 1.1 } }

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[fields]]
name = "status"
type = "utf8"
weighted = { values = ["open", "paid", "shipped"], weights = [5, 3, 2] }

[[fields]]
name = "amount"
type = "float64"
uniform = { min = 1.0, max = 500.0 }
"""


def run(strata_bin, *args, check=True):
    return subprocess.run([strata_bin, *args], check=check, capture_output=True, text=True)


def iceberg(table):
    metas = sorted((table / "metadata").glob("v*.metadata.json"), key=lambda m: int(m.name[1:].split(".")[0]))
    return StaticTable.from_metadata(str(metas[-1]))


def delta_rows(table, version=None):
    dt = DeltaTable(str(table), version=version)
    return QueryBuilder().register("t", dt).execute("SELECT * FROM t").read_all()


def depth(out):
    m = re.search(r"(\d+) data files in .* overlap depth by `id`: max (\d+), average ([\d.]+)", out)
    return int(m.group(1)), int(m.group(2)), float(m.group(3))


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_compaction_keeps_the_rows_and_lowers_the_depth_as_planned(strata_bin, tmp_path, fmt):
    (tmp_path / "orders.toml").write_text(SPEC)
    mode = [] if fmt == "iceberg" else ["--write-mode", "deletion-vectors"]
    run(strata_bin, "generate", "-q", "--spec", str(tmp_path / "orders.toml"), "--target-records", "20000",
        "--num-writers", "4", "--format", fmt, "--output-dir", str(tmp_path / "t"), *mode)
    table = tmp_path / "t" / "orders"
    before = iceberg(table).scan().to_arrow() if fmt == "iceberg" else delta_rows(table)
    dry = run(strata_bin, "compact", "table", str(table), "--sort-by", "id", "--budget-mb", "64", "--dry-run").stdout
    files, max_depth, _ = depth(dry)
    assert max_depth > 10 and files > 20, dry
    assert re.search(r"overlap depth max 1, average 1.00", dry.splitlines()[-1]), dry
    done = run(strata_bin, "compact", "table", str(table), "--sort-by", "id", "--budget-mb", "64").stdout
    assert re.search(r"compacted: \d+ files \(\d+ deleted rows applied\) into 1, ", done), done
    after_report = run(strata_bin, "compact", "table", str(table), "--sort-by", "id", "--budget-mb", "64",
                       "--dry-run").stdout
    assert depth(after_report) == (1, 1, 1.0), after_report
    assert " 0 delete files" in after_report
    if fmt == "iceberg":
        t = iceberg(table)
        assert t.snapshots()[-1].summary.operation.value == "replace"
        after = t.scan().to_arrow()
    else:
        assert DeltaTable(str(table)).history(1)[0]["operation"] == "OPTIMIZE"
        after = delta_rows(table)
    con = duckdb.connect()
    con.register("before", before)
    con.register("after", after)
    check_same_rows(con, "SELECT * FROM after", "SELECT * FROM before", f"{fmt} compacted")


def test_an_append_during_compaction_loses_nothing(strata_bin, tmp_path):
    (tmp_path / "orders.toml").write_text(SPEC)
    plain = SPEC.split("changes =")[0] + SPEC.split("keys = { zipf = 1.1 } }")[1]
    (tmp_path / "plain.toml").write_text(plain.replace('primary_key = "id"\n', ""))
    for trial in range(10):
        out = tmp_path / f"t{trial}"
        run(strata_bin, "generate", "-q", "--spec", str(tmp_path / "orders.toml"), "--target-records", "5000",
            "--num-writers", "4", "--format", "iceberg", "--output-dir", str(out))
        table = out / "orders"
        before = iceberg(table).scan().to_arrow()
        results = {}

        def compact():
            results["compact"] = run(strata_bin, "compact", "table", str(table), "--sort-by", "id",
                                     "--budget-mb", "64", check=False)

        def append():
            results["append"] = run(strata_bin, "generate", "-q", "--spec", str(tmp_path / "plain.toml"),
                                    "--target-records", "500", "--seed", str(1000 + trial), "--format", "iceberg",
                                    "--output-dir", str(out), "--output-filename", "orders", check=False)

        threads = [threading.Thread(target=compact), threading.Thread(target=append)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results["append"].returncode == 0, results["append"].stderr
        # The compaction lands, or aborts as a conflict having changed
        # nothing; either way every row is there once.
        c = results["compact"]
        assert c.returncode == 0 or "conflict" in c.stderr.lower() or "another writer" in c.stderr, c.stderr
        run(strata_bin, "generate", "-q", "--spec", str(tmp_path / "plain.toml"), "--target-records", "500",
            "--seed", str(1000 + trial), "--output-dir", str(out / "plain"))
        con = duckdb.connect()
        con.register("before", before)
        con.register("now", iceberg(table).scan().to_arrow())
        check_same_rows(con, "SELECT * FROM now",
                        f"SELECT * FROM before UNION ALL SELECT * FROM read_parquet('{out}/plain/*.parquet')",
                        f"trial {trial}")


def test_a_sort_column_without_bounds_in_the_metadata_is_refused(strata_bin, tmp_path):
    table = tmp_path / "nostats"
    data = pa.table({"id": pa.array(range(100), pa.int64()), "v": pa.array([str(i) for i in range(100)])})
    write_deltalake(str(table), data, configuration={"delta.dataSkippingNumIndexedCols": "0"})
    write_deltalake(str(table), data, mode="append", configuration={"delta.dataSkippingNumIndexedCols": "0"})
    log = sorted((table / "_delta_log").glob("*.json"))
    before = [p.read_bytes() for p in log]
    r = run(strata_bin, "compact", "table", str(table), "--sort-by", "id", "--budget-mb", "8", check=False)
    assert r.returncode != 0 and "has no bounds for `id` in the table's log" in r.stderr, r.stderr
    assert [p.read_bytes() for p in sorted((table / "_delta_log").glob("*.json"))] == before
    r = run(strata_bin, "compact", "table", str(table), "--sort-by", "nope", "--budget-mb", "8", check=False)
    assert r.returncode != 0 and "no top-level primitive column `nope`" in r.stderr, r.stderr
    r = run(strata_bin, "compact", "table", str(tmp_path / "none"), "--sort-by", "id", "--budget-mb", "8", check=False)
    assert r.returncode != 0 and "holds no Iceberg or Delta table" in r.stderr, r.stderr


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_a_killed_compaction_changes_no_row(strata_bin, tmp_path, fmt):
    # kill -9 at random moments during the compaction, 20 times: the table
    # always loads at a committed version (before the rewrite or after
    # it) with exactly the rows it had.
    import random
    import shutil
    import signal
    import time

    (tmp_path / "orders.toml").write_text(SPEC)
    mode = [] if fmt == "iceberg" else ["--write-mode", "deletion-vectors"]
    run(strata_bin, "generate", "-q", "--spec", str(tmp_path / "orders.toml"), "--target-records", "20000",
        "--num-writers", "4", "--format", fmt, "--output-dir", str(tmp_path / "t"), *mode)
    template = tmp_path / "t" / "orders"
    rows = iceberg(template).scan().to_arrow() if fmt == "iceberg" else delta_rows(template)
    rng = random.Random(9 if fmt == "iceberg" else 10)
    outcomes = set()
    for trial in range(20):
        if fmt == "iceberg":
            # Iceberg's metadata names its files by absolute path: a copy
            # would still read the template's, so each trial writes its own.
            run(strata_bin, "generate", "-q", "--spec", str(tmp_path / "orders.toml"), "--target-records", "20000",
                "--num-writers", "4", "--format", fmt, "--output-dir", str(tmp_path / f"g{trial}"), *mode)
            table = tmp_path / f"g{trial}" / "orders"
        else:
            table = tmp_path / f"k{trial}"
            shutil.copytree(template, table)
        p = subprocess.Popen([strata_bin, "compact", "table", str(table), "--sort-by", "id", "--budget-mb", "64"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, 1.0))
        p.send_signal(signal.SIGKILL)
        p.wait()
        if fmt == "iceberg":
            t = iceberg(table)
            outcomes.add(t.snapshots()[-1].summary.operation.value)
            now = t.scan().to_arrow()
        else:
            outcomes.add(DeltaTable(str(table)).history(1)[0]["operation"])
            now = delta_rows(table)
        con = duckdb.connect()
        con.register("rows", rows)
        con.register("now", now)
        check_same_rows(con, "SELECT * FROM now", "SELECT * FROM rows", f"{fmt} trial {trial}")
        # What the killed run left, `strata table clean` removes.
        run(strata_bin, "table", "clean", str(table), "--older-than", "0")
    assert outcomes, outcomes
    print(fmt, "last operations seen after kills:", sorted(outcomes))


@pytest.mark.parametrize("damage", ["data", "deletion vector"])
def test_a_damaged_file_is_an_error_and_the_table_stays(strata_bin, tmp_path, damage):
    # A truncated data file, or deletion vectors whose bytes are not
    # bitmaps (their checksums fail): a clear error naming the file, no panic, and no new version
    # or file left in the table.
    (tmp_path / "orders.toml").write_text(SPEC)
    run(strata_bin, "generate", "-q", "--spec", str(tmp_path / "orders.toml"), "--target-records", "5000",
        "--num-writers", "2", "--format", "delta", "--write-mode", "deletion-vectors",
        "--output-dir", str(tmp_path / "t"))
    table = tmp_path / "t" / "orders"
    if damage == "data":
        victim = sorted(table.glob("*.parquet"))[0]
        victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    else:
        # Every vector file (those of older versions are no longer read).
        for victim in table.glob("deletion_vector_*.bin"):
            body = bytearray(victim.read_bytes())
            body[5:13] = b"\xff" * 8
            victim.write_bytes(bytes(body))
    listing = sorted(p.relative_to(table) for p in table.rglob("*"))
    r = run(strata_bin, "compact", "table", str(table), "--sort-by", "id", "--budget-mb", "64", check=False)
    assert r.returncode != 0, r.stdout
    assert "panicked" not in r.stderr and r.stderr.startswith("strata: error:"), r.stderr
    named = victim.name if damage == "data" else "deletion vector"
    assert named in r.stderr, r.stderr
    assert sorted(p.relative_to(table) for p in table.rglob("*")) == listing
