"""Table histories (`changes` in a spec): `strata generate` writes version
0 and the change stream of every later version
(`NAME_changes/version=K/`), read here by DuckDB. Applying the stream to
version 0, version by version, every update's and delete's `before` is
the row as it then is, and inserts are new keys; the shares of each
operation are the spec's within 5 standard errors; parts write the same
stream as one run; and the hot-key skew is reported."""

import math
import re
import subprocess
from pathlib import Path

import duckdb
import pytest

from conftest import check_same_rows

SPEC = """
name = "orders"
primary_key = "id"
changes = { versions = 5, insert = 0.03, update = 0.08, delete = 0.02, keys = { zipf = 1.05 }, update_fields = ["status", "amount", "tags"] }

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[fields]]
name = "customer"
type = "int32"
uniform = { min = 1, max = 500 }

[[fields]]
name = "status"
type = "utf8"
weighted = { values = ["open", "paid", "shipped"], weights = [5, 3, 2] }

[[fields]]
name = "amount"
type = "decimal(12, 2)"
uniform = { min = "1.00", max = "900.00" }

[[fields]]
name = "tags"
type = "list"
length = { uniform = { min = 0, max = 3 } }

[fields.item]
type = "utf8"
zipf = { s = 1.2, values = ["new", "sale", "gift", "vip"] }
"""

ROWS = 20000


def run(strata_bin, *args, check=True):
    return subprocess.run([strata_bin, *args], check=check, capture_output=True, text=True)


@pytest.fixture(scope="module")
def history(strata_bin, tmp_path_factory):
    root = tmp_path_factory.mktemp("changes")
    (root / "orders.toml").write_text(SPEC)
    done = run(strata_bin, "generate", "--spec", str(root / "orders.toml"), "--target-records", str(ROWS),
               "--output-dir", str(root / "one"))
    return root, done.stdout


def test_the_stream_replays_onto_version_0(history):
    root, _ = history
    con = duckdb.connect()
    con.sql(f"CREATE TABLE state AS SELECT * FROM read_parquet('{root}/one/orders_*.parquet')")
    assert con.sql("SELECT count(*) FROM state").fetchall()[0][0] == ROWS
    for v in range(1, 6):
        con.sql(f"CREATE OR REPLACE TABLE s AS SELECT * FROM "
                f"read_parquet('{root}/one/orders_changes/version={v}/*.parquet', hive_partitioning = false)")
        assert con.sql("SELECT count(*) FROM s WHERE version <> ?", params=[v]).fetchall()[0][0] == 0
        # Every update's and delete's before image is the row as it is.
        stale = con.sql("""
            SELECT count(*) FROM s LEFT JOIN state t ON t.id = s.id
            WHERE s.op IN ('u', 'd') AND (t.id IS NULL OR t <> s.before)""").fetchall()[0][0]
        assert stale == 0, f"version {v}"
        # Inserts are new keys; updates keep the key and the customer.
        assert con.sql("SELECT count(*) FROM s JOIN state USING (id) WHERE op = 'c'").fetchall()[0][0] == 0
        assert con.sql("""SELECT count(*) FROM s WHERE op = 'u'
            AND (before.id <> after.id OR before.customer <> after.customer)""").fetchall()[0][0] == 0
        assert con.sql("""SELECT count(*) FROM s WHERE (op = 'c' AND (before IS NOT NULL OR after IS NULL))
            OR (op = 'd' AND (after IS NOT NULL OR before IS NULL))""").fetchall()[0][0] == 0
        con.sql("DELETE FROM state WHERE id IN (SELECT id FROM s WHERE op IN ('u', 'd'))")
        con.sql("INSERT INTO state SELECT unnest(after) FROM s WHERE op IN ('c', 'u')")
        assert con.sql("SELECT count(*) - count(DISTINCT id) FROM state").fetchall()[0][0] == 0


def test_operation_shares_match_the_spec(history):
    root, out = history
    lines = [ln for ln in out.splitlines() if ln.startswith("changes of orders version")]
    assert len(lines) == 5
    for ln in lines:
        m = re.search(r"(\d+) inserts, (\d+) updates, (\d+) deletes of (\d+) rows alive before", ln)
        ins, upd, dele, alive = map(int, m.groups())
        for got, p in ((upd, 0.08), (dele, 0.02)):
            se = math.sqrt(alive * p * (1 - p))
            assert abs(got - alive * p) < 5 * se, ln
        assert abs(ins - 0.03 * alive) <= 0.03 * alive * 0.05 + 1, ln
    skew = re.search(r"([\d.]+)% of the updates and deletes fall on the hottest 1% of rows", out)
    assert skew and float(skew.group(1)) > 3.0, out


def test_parts_write_the_same_stream(strata_bin, history):
    root, _ = history
    for i in (1, 2, 3):
        run(strata_bin, "generate", "-q", "--spec", str(root / "orders.toml"), "--target-records", str(ROWS),
            "--output-dir", str(root / "parts"), "--parts", "3", "--part", str(i))
    con = duckdb.connect()
    for v in (1, 5):
        check_same_rows(
            con,
            f"SELECT * FROM read_parquet('{root}/parts/orders_changes/version={v}/*.parquet', hive_partitioning = false)",
            f"SELECT * FROM read_parquet('{root}/one/orders_changes/version={v}/*.parquet', hive_partitioning = false)",
            f"version {v}",
        )
    assert len(list((root / "parts" / "orders_changes" / "version=1").glob("*.parquet"))) == 3


def test_a_history_refuses_a_row_offset(strata_bin, history):
    root, _ = history
    r = run(strata_bin, "generate", "-q", "--spec", str(root / "orders.toml"), "--target-records", "100",
            "--row-offset", "10", "--output-dir", str(root / "off"), check=False)
    assert r.returncode != 0 and "leave out --row-offset" in r.stderr, r.stderr


def test_spec_check_describes_the_history(strata_bin, history):
    root, _ = history
    out = run(strata_bin, "spec", "check", str(root / "orders.toml")).stdout
    assert ("history: 5 versions after version 0 (primary key `id`): per version insert 0.03, update 0.08, "
            "delete 0.02 of the rows alive; updates on hot rows (zipf 1.05); update fields status, amount, tags; "
            "on delete cascade") in out, out
    bad = root / "bad.toml"
    bad.write_text(SPEC.replace('primary_key = "id"\n', ""))
    r = run(strata_bin, "spec", "check", str(bad), check=False)
    assert r.returncode != 0 and "needs a `primary_key`" in r.stderr, r.stderr


def test_versions_agree_across_the_stream_iceberg_and_delta(strata_bin, history):
    # For every version k: DuckDB's replay of the stream onto version 0,
    # pyiceberg's snapshot k (merge-on-read position deletes) and
    # deltalake's version k (copy-on-write MERGE) hold the same rows.
    from deltalake import DeltaTable
    from pyiceberg.table import StaticTable

    root, _ = history
    args = ["generate", "-q", "--spec", str(root / "orders.toml"), "--target-records", str(ROWS),
            "--num-writers", "4"]
    run(strata_bin, *args, "--format", "delta", "--output-dir", str(root / "delta"))
    run(strata_bin, *args, "--format", "iceberg", "--output-dir", str(root / "ice"))
    ice = StaticTable.from_metadata(str(root / "ice" / "orders" / "metadata" / "v6.metadata.json"))
    snaps = ice.snapshots()
    assert [s.summary.operation.value for s in snaps] == ["append"] + ["overwrite"] * 5
    dt = DeltaTable(str(root / "delta" / "orders"))
    assert dt.version() == 5
    assert [h["operation"] for h in dt.history()] == ["MERGE"] * 5 + ["WRITE"]
    con = duckdb.connect()
    con.sql(f"CREATE TABLE state AS SELECT * FROM read_parquet('{root}/one/orders_*.parquet')")
    for v in range(0, 6):
        if v > 0:
            con.sql(f"CREATE OR REPLACE TABLE s AS SELECT * FROM "
                    f"read_parquet('{root}/one/orders_changes/version={v}/*.parquet', hive_partitioning = false)")
            con.sql("DELETE FROM state WHERE id IN (SELECT id FROM s WHERE op IN ('u', 'd'))")
            con.sql("INSERT INTO state SELECT unnest(after) FROM s WHERE op IN ('c', 'u')")
        con.register("delta_v", DeltaTable(str(root / "delta" / "orders"), version=v).to_pyarrow_table())
        con.register("ice_v", ice.scan(snapshot_id=snaps[v].snapshot_id).to_arrow())
        check_same_rows(con, "SELECT * FROM delta_v", "SELECT * FROM state", f"delta version {v}")
        check_same_rows(con, "SELECT * FROM ice_v", "SELECT * FROM state", f"iceberg snapshot {v}")
    # Version 5's deletes are position deletes in the Iceberg table.
    summary = snaps[5].summary
    assert int(summary["added-position-deletes"]) > 0, summary
    # A history of a table is one run: no parts.
    r = run(strata_bin, *args, "--format", "delta", "--output-dir", str(root / "dp"), "--parts", "2", "--part", "1",
            check=False)
    assert r.returncode != 0 and "leave out --parts" in r.stderr, r.stderr


def test_the_scd2_table_is_current_at_the_last_version(history):
    # The slowly changing dimension's current rows are the last version
    # (the stream replayed onto version 0); every key's rows follow each
    # other without gaps or overlaps.
    root, out = history
    assert "slowly changing dimension" in out
    con = duckdb.connect()
    scd = f"read_parquet('{root}/one/orders_scd2/*.parquet')"
    con.sql(f"CREATE TABLE state AS SELECT * FROM read_parquet('{root}/one/orders_*.parquet')")
    for v in range(1, 6):
        con.sql(f"CREATE OR REPLACE TABLE s AS SELECT * FROM "
                f"read_parquet('{root}/one/orders_changes/version={v}/*.parquet', hive_partitioning = false)")
        con.sql("DELETE FROM state WHERE id IN (SELECT id FROM s WHERE op IN ('u', 'd'))")
        con.sql("INSERT INTO state SELECT unnest(after) FROM s WHERE op IN ('c', 'u')")
    check_same_rows(con, f"SELECT * EXCLUDE (valid_from, valid_to, is_current) FROM {scd} WHERE is_current",
                    "SELECT * FROM state", "scd2 current")
    gaps = con.sql(f"""SELECT count(*) FROM (
        SELECT valid_from, lag(valid_to) OVER (PARTITION BY id ORDER BY valid_from) AS prev FROM {scd})
        WHERE prev IS NOT NULL AND prev <> valid_from""").fetchall()[0][0]
    assert gaps == 0
    assert con.sql(f"SELECT count(*) FROM {scd} WHERE is_current <> (valid_to IS NULL)").fetchall()[0][0] == 0
    # A row per image: version 0's rows, one more per update.
    updates = sum(int(re.search(r"(\d+) updates", ln).group(1)) for ln in out.splitlines()
                  if ln.startswith("changes of orders version"))
    inserts = sum(int(re.search(r"(\d+) inserts", ln).group(1)) for ln in out.splitlines()
                  if ln.startswith("changes of orders version"))
    assert con.sql(f"SELECT count(*) FROM {scd}").fetchall()[0][0] == ROWS + inserts + updates


@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_a_killed_history_leaves_a_committed_version(strata_bin, history, tmp_path, fmt):
    # kill -9 at random moments while the versions are written, 20 times
    # per format: the table always loads at its last committed version k,
    # with exactly the rows of the stream replayed to k.
    import random
    import signal
    import time

    from deltalake import DeltaTable
    from pyiceberg.table import StaticTable

    root, _ = history
    rng = random.Random(5 if fmt == "delta" else 6)
    con = duckdb.connect()
    states = {0: "SELECT * FROM state0"}
    con.sql(f"CREATE TABLE state0 AS SELECT * FROM read_parquet('{root}/one/orders_*.parquet')")
    for v in range(1, 6):
        con.sql(f"CREATE TABLE state{v} AS SELECT * FROM state{v - 1}")
        con.sql(f"CREATE OR REPLACE TABLE s AS SELECT * FROM "
                f"read_parquet('{root}/one/orders_changes/version={v}/*.parquet', hive_partitioning = false)")
        con.sql(f"DELETE FROM state{v} WHERE id IN (SELECT id FROM s WHERE op IN ('u', 'd'))")
        con.sql(f"INSERT INTO state{v} SELECT unnest(after) FROM s WHERE op IN ('c', 'u')")
        states[v] = f"SELECT * FROM state{v}"
    seen = set()
    for trial in range(20):
        out = tmp_path / f"t{trial}"
        p = subprocess.Popen([strata_bin, "generate", "-q", "--spec", str(root / "orders.toml"), "--target-records",
                              str(ROWS), "--num-writers", "4", "--format", fmt, "--output-dir", str(out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, 0.8))
        p.send_signal(signal.SIGKILL)
        p.wait()
        table = out / "orders"
        if fmt == "delta":
            if not (table / "_delta_log").exists() or not list((table / "_delta_log").glob("*.json")):
                continue
            dt = DeltaTable(str(table))
            k, rows = dt.version(), dt.to_pyarrow_table()
        else:
            metas = list((table / "metadata").glob("v*.metadata.json")) if table.exists() else []
            if not metas:
                continue
            newest = max(metas, key=lambda m: int(m.name[1:].split(".")[0]))
            t = StaticTable.from_metadata(str(newest))
            k, rows = len(t.snapshots()) - 1, t.scan().to_arrow()
        con.register("got", rows)
        check_same_rows(con, "SELECT * FROM got", states[k], f"{fmt} killed at version {k}")
        seen.add(k)
    assert seen, "no trial committed a version: give them more time"
    print(fmt, "versions seen after kills:", sorted(seen))


SHOP = """
name = "shop"

[[tables]]
name = "orders"
rows = 3000
primary_key = "id"
changes = { versions = 4, insert = 0.05, update = 0.1, delete = 0.05, on_delete = "POLICY" }
fields = [{ name = "id", type = "int64", sequence = { start = 1 } },
          { name = "status", type = "utf8", weighted = { values = ["a", "b"], weights = [1, 1] } }]

[[tables]]
name = "lines"
children_of = "orders"
count = { uniform = { min = 0, max = 4 } }
fields = [{ name = "order_id", type = "int64", parent = "id" },
          { name = "n", type = "int32", position = 1 },
          { name = "qty", type = "int32", uniform = { min = 1, max = 9 } }]
"""


@pytest.mark.parametrize("policy", ["cascade", "keep_parent", "orphan"])
def test_child_tables_follow_their_parent_rows(strata_bin, tmp_path, policy):
    # A child table's rows follow their parent's: inserted with it, and
    # deleted with it under cascade; under keep_parent a parent with
    # children is never deleted; under orphan they stay. For every
    # version, the stream replayed, deltalake and pyiceberg agree, and no
    # child is orphaned but under `orphan`.
    from deltalake import DeltaTable
    from pyiceberg.table import StaticTable

    spec = tmp_path / "shop.toml"
    spec.write_text(SHOP.replace("POLICY", policy))
    for fmt in ("parquet", "delta", "iceberg"):
        run(strata_bin, "generate", "-q", "--spec", str(spec), "--output-dir", str(tmp_path / fmt), "--format", fmt)
    con = duckdb.connect()
    for t in ("orders", "lines"):
        con.sql(f"CREATE TABLE {t}_s AS SELECT * FROM read_parquet('{tmp_path}/parquet/{t}/*.parquet')")

    def ice(t):
        metas = sorted((tmp_path / "iceberg" / t / "metadata").glob("v*.metadata.json"),
                       key=lambda m: int(m.name[1:].split(".")[0]))
        return StaticTable.from_metadata(str(metas[-1]))

    ice_tables = {t: ice(t) for t in ("orders", "lines")}
    orphans = []
    for v in range(1, 5):
        for t in ("orders", "lines"):
            con.sql(f"CREATE OR REPLACE TABLE s AS SELECT * FROM "
                    f"read_parquet('{tmp_path}/parquet/{t}_changes/version={v}/*.parquet', hive_partitioning = false)")
            if t == "orders":
                con.sql("DELETE FROM orders_s WHERE id IN (SELECT id FROM s WHERE op IN ('u', 'd'))")
            else:
                con.sql("DELETE FROM lines_s WHERE (order_id, n) IN (SELECT before.order_id, before.n FROM s WHERE op = 'd')")
            con.sql(f"INSERT INTO {t}_s SELECT unnest(after) FROM s WHERE op IN ('c', 'u')")
        for t in ("orders", "lines"):
            snaps = ice_tables[t].snapshots()
            dv = DeltaTable(str(tmp_path / "delta" / t), version=min(v, DeltaTable(str(tmp_path / "delta" / t)).version()))
            con.register("dd", dv.to_pyarrow_table())
            con.register("ii", ice_tables[t].scan(snapshot_id=snaps[min(v, len(snaps) - 1)].snapshot_id).to_arrow())
            cols = ", ".join(dv.schema().to_arrow().names)
            check_same_rows(con, f"SELECT {cols} FROM dd", f"SELECT {cols} FROM {t}_s", f"{policy} delta {t} v{v}")
            check_same_rows(con, f"SELECT {cols} FROM ii", f"SELECT {cols} FROM {t}_s", f"{policy} iceberg {t} v{v}")
        orphans.append(con.sql("SELECT count(*) FROM lines_s l ANTI JOIN orders_s o ON l.order_id = o.id").fetchall()[0][0])
    if policy == "orphan":
        assert orphans[-1] > 0, orphans
    else:
        assert orphans == [0, 0, 0, 0], orphans
    # A child table changes with its parent: its rows are deleted by
    # position, never by a key of its own.
    bad = run(strata_bin, "generate", "-q", "--spec", str(spec), "--output-dir", str(tmp_path / "eq"), "--format",
              "iceberg", "--write-mode", "equality-deletes", check=False)
    assert bad.returncode != 0 and "equality deletes are on a table's own primary key" in bad.stderr, bad.stderr
    assert not list((tmp_path / "eq").glob("*/metadata")), "a table was written before the refusal"
    if policy == "keep_parent":
        # Every deleted order had no lines.
        deleted = con.sql(f"""SELECT count(*) FROM read_parquet('{tmp_path}/parquet/orders_changes/*/*.parquet',
            hive_partitioning = false) s JOIN read_parquet('{tmp_path}/parquet/lines/*.parquet') l
            ON l.order_id = s.id WHERE s.op = 'd'""").fetchall()[0][0]
        assert deleted == 0


def test_write_modes_and_the_change_data_feed(strata_bin, history):
    # Iceberg copy-on-write, Delta deletion vectors with the change data
    # feed, and Delta copy-on-write with it: every version agrees with the
    # stream replayed, and Delta's change data feed holds the stream's
    # changes (an update as its pre- and post-image).
    from deltalake import DeltaTable, QueryBuilder
    from pyiceberg.table import StaticTable

    root, _ = history
    args = ["generate", "-q", "--spec", str(root / "orders.toml"), "--target-records", str(ROWS),
            "--num-writers", "4"]
    run(strata_bin, *args, "--format", "iceberg", "--write-mode", "copy-on-write", "--output-dir", str(root / "icow"))
    run(strata_bin, *args, "--format", "delta", "--write-mode", "deletion-vectors", "--change-data-feed",
        "--output-dir", str(root / "ddv"))
    run(strata_bin, *args, "--format", "delta", "--change-data-feed", "--output-dir", str(root / "dcdf"))
    ice = StaticTable.from_metadata(str(root / "icow" / "orders" / "metadata" / "v6.metadata.json"))
    snaps = ice.snapshots()
    assert all(s.summary.get("total-position-deletes", "0") == "0" for s in snaps)
    assert DeltaTable(str(root / "ddv" / "orders")).protocol().reader_features == ["deletionVectors"]
    con = duckdb.connect()
    con.sql(f"CREATE TABLE state AS SELECT * FROM read_parquet('{root}/one/orders_*.parquet')")
    for v in range(1, 6):
        con.sql(f"CREATE OR REPLACE TABLE s AS SELECT * FROM "
                f"read_parquet('{root}/one/orders_changes/version={v}/*.parquet', hive_partitioning = false)")
        con.sql("DELETE FROM state WHERE id IN (SELECT id FROM s WHERE op IN ('u', 'd'))")
        con.sql("INSERT INTO state SELECT unnest(after) FROM s WHERE op IN ('c', 'u')")
        con.register("icow", ice.scan(snapshot_id=snaps[v].snapshot_id).to_arrow())
        dv = DeltaTable(str(root / "ddv" / "orders"), version=v)
        con.register("ddv", QueryBuilder().register("t", dv).execute("SELECT * FROM t").read_all())
        con.register("dcdf", DeltaTable(str(root / "dcdf" / "orders"), version=v).to_pyarrow_table())
        for t in ("icow", "ddv", "dcdf"):
            check_same_rows(con, f"SELECT * FROM {t}", "SELECT * FROM state", f"{t} version {v}")
    stream = f"read_parquet('{root}/one/orders_changes/*/*.parquet', hive_partitioning = false)"
    want = dict(con.sql(f"SELECT op, count(*) FROM {stream} GROUP BY op").fetchall())
    for t in ("dcdf", "ddv"):
        con.register("cdf", DeltaTable(str(root / t / "orders")).load_cdf(starting_version=1).read_all())
        got = dict(con.sql("SELECT _change_type, count(*) FROM cdf GROUP BY 1").fetchall())
        assert got == {"insert": want["c"], "update_preimage": want["u"], "update_postimage": want["u"],
                       "delete": want["d"]}, (t, got, want)
        check_same_rows(con, "SELECT * EXCLUDE (_change_type, _commit_version, _commit_timestamp) FROM cdf "
                             "WHERE _change_type = 'update_postimage'",
                        f"SELECT unnest(after) FROM {stream} WHERE op = 'u'", f"{t} post-images")
    bad = run(strata_bin, *args, "--format", "iceberg", "--write-mode", "deletion-vectors",
              "--output-dir", str(root / "bad"), check=False)
    assert bad.returncode != 0 and "deletion-vectors is Delta's" in bad.stderr, bad.stderr
    bad = run(strata_bin, *args, "--format", "delta", "--write-mode", "equality-deletes",
              "--output-dir", str(root / "bad"), check=False)
    assert bad.returncode != 0 and "equality-deletes is Iceberg's" in bad.stderr, bad.stderr
    assert not (root / "bad").exists()


def test_stream_formats_hold_the_same_changes(strata_bin, history):
    # `--stream-format ipc`, `jsonl` and `debezium` write the changes the
    # Parquet stream holds: the same table in IPC; one JSON object per
    # change with the envelope's fields; Debezium's event value (before,
    # after, source, op, ts_ms) with `before` null for inserts and `after`
    # null for deletes.
    import json

    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    root, _ = history
    args = ["generate", "-q", "--spec", str(root / "orders.toml"), "--target-records", str(ROWS)]
    for fmt in ("ipc", "jsonl", "debezium"):
        run(strata_bin, *args, "--stream-format", fmt, "--output-dir", str(root / fmt))

    def one(fmt, v, ext):
        files = list((root / fmt / "orders_changes" / f"version={v}").glob(f"*.{ext}"))
        assert len(files) == 1, files
        return files[0]

    for v in range(1, 6):
        want = pq.read_table(one("one", v, "parquet"))
        assert ipc.open_file(one("ipc", v, "arrow")).read_all().equals(want), f"ipc version {v}"
        rows = want.to_pylist()
        lines = [json.loads(line) for line in one("jsonl", v, "jsonl").read_text().splitlines()]
        events = [json.loads(line) for line in one("debezium", v, "jsonl").read_text().splitlines()]
        assert len(lines) == len(events) == len(rows) > 0
        for line, event, r in zip(lines, events, rows):
            assert (line["op"], line["id"], line["version"], line["ts_ms"]) == (r["op"], r["id"], v, r["ts_ms"])
            assert set(event) == {"before", "after", "source", "op", "ts_ms"}, event
            assert event["source"] == {"connector": "strata", "table": "orders", "version": v}, event
            assert (event["op"], event["ts_ms"]) == (r["op"], r["ts_ms"])
            for image in ("before", "after"):
                assert (line[image] is None) == (event[image] is None) == (r[image] is None), (line, r)
                if r[image] is not None:
                    for got in (line[image], event[image]):
                        assert (got["id"], got["status"], got["customer"]) == (
                            r[image]["id"], r[image]["status"], r[image]["customer"])
            assert (event["before"] is None) == (r["op"] == "c")
            assert (event["after"] is None) == (r["op"] == "d")
    bad = run(strata_bin, *args, "--format", "delta", "--stream-format", "jsonl", "--output-dir",
              str(root / "bad"), check=False)
    assert bad.returncode != 0 and "--stream-format is the change stream's" in bad.stderr, bad.stderr


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_a_history_over_a_laid_out_table_is_refused_before_writing(strata_bin, history, tmp_path, fmt):
    # A history is written over files of contiguous rows: a layout is
    # refused before version 0 is written, so no table is left behind.
    root, _ = history
    bad = run(strata_bin, "generate", "-q", "--spec", str(root / "orders.toml"), "--target-records", str(ROWS),
              "--format", fmt, "--partition-by", "status", "--output-dir", str(tmp_path / "out"), check=False)
    assert bad.returncode != 0 and "a history is written over a table without a layout" in bad.stderr, bad.stderr
    assert not (tmp_path / "out" / "orders").exists()
