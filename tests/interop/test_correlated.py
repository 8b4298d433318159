"""Correlated references, qualified names, `when` conditions, timestamps
and the `orders` preset's computed fields, with DuckDB as the oracle: a
line's (part, supplier) pair is one `partsupp` row (a join on both keys
misses nothing), values read through `ps.` and `parent.` equal the joined
rows', and the parts of a run together hold exactly the single run's
rows."""

import subprocess
from pathlib import Path

import duckdb
import pytest
from conftest import check_same_rows

TPCH_LINES = Path(__file__).resolve().parents[2] / "examples" / "specs" / "tpch_lines.toml"
TABLES = ["supplier", "part", "partsupp", "orders", "lineitem"]


def run(strata_bin, out, *args):
    subprocess.run([strata_bin, "generate", "-q", "--output-dir", str(out), *args], check=True)


def count(con, sql):
    return con.execute(sql).fetchone()[0]


def views(con, out, tables):
    for t in tables:
        con.execute(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM '{out}/{t}/*.parquet'").fetchall()


@pytest.mark.parametrize(("scale", "parts"), [("0.5", 1), ("1.5", 4)])
def test_one_draw_is_one_partsupp_row_and_qualified_names_read_it(strata_bin, tmp_path, scale, parts):
    out = tmp_path / "out"
    for i in range(1, parts + 1):
        run(strata_bin, out, "--spec", str(TPCH_LINES), "--scale", scale, "--seed", "4",
            "--parts", str(parts), "--part", str(i))
    con = duckdb.connect()
    views(con, out, TABLES)
    s = float(scale)
    assert count(con, "SELECT count(*) FROM partsupp") == round(8000 * s)
    assert count(con, "SELECT count(DISTINCT (ps_partkey, ps_suppkey)) FROM partsupp") == round(8000 * s)
    n = count(con, "SELECT count(*) FROM lineitem")
    assert n > 4 * 1500 * s * 0.9
    # The pair is one partsupp row: a join on both keys misses nothing.
    assert count(con, """SELECT count(*) FROM lineitem l ANTI JOIN partsupp ps
                         ON l.l_partkey = ps.ps_partkey AND l.l_suppkey = ps.ps_suppkey""") == 0
    # Two independent draws would miss about 3 in 4: the pair is one draw.
    assert count(con, "SELECT count(*) FROM lineitem l JOIN part p ON l.l_partkey = p.p_partkey") == n
    assert count(con, "SELECT count(*) FROM lineitem l JOIN supplier s ON l.l_suppkey = s.s_suppkey") == n
    # `ps.ps_supplycost`: the margin re-derives from the joined row, exactly.
    assert count(con, """SELECT count(*) FROM lineitem l JOIN partsupp ps
                         ON l.l_partkey = ps.ps_partkey AND l.l_suppkey = ps.ps_suppkey
                         WHERE l.l_margin <> l.l_extendedprice - l.l_quantity * ps.ps_supplycost""") == 0
    # The price is quantity times the part's retail price (TPC-H's formula).
    assert count(con, """SELECT count(*) FROM lineitem l JOIN part p ON l.l_partkey = p.p_partkey
                         WHERE l.l_extendedprice <> l.l_quantity * p.p_retailprice""") == 0
    assert count(con, """SELECT count(*) FROM part WHERE p_retailprice <>
                         CAST((90000 + ((p_partkey // 10) % 20001) + 100 * (p_partkey % 1000)) AS DECIMAL(15,2)) / 100""") == 0
    # `parent.o_orderdate`: ships 1 to 121 days after its own order.
    lo, hi = con.execute("""SELECT min(l.l_shipdate - o.o_orderdate), max(l.l_shipdate - o.o_orderdate)
                            FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey""").fetchone()
    assert (lo, hi) == (1, 121)
    assert count(con, """SELECT count(*) FROM lineitem WHERE l_linestatus <>
                         CASE WHEN l_shipdate > DATE '1995-06-17' THEN 'O' ELSE 'F' END""") == 0
    # An order's total is the sum of its lines' prices.
    check_same_rows(
        con,
        "SELECT o_orderkey, o_totalprice FROM orders",
        "SELECT l_orderkey, sum(l_extendedprice) FROM lineitem GROUP BY 1",
        "totals",
    )
    # Every line number runs 1..n within its order.
    assert count(con, """SELECT count(*) FROM (SELECT l_orderkey, count(*) c, max(l_linenumber) m,
                         count(DISTINCT l_linenumber) d FROM lineitem GROUP BY 1) WHERE c <> m OR c <> d""") == 0
    if parts > 1:
        whole = tmp_path / "whole"
        run(strata_bin, whole, "--spec", str(TPCH_LINES), "--scale", scale, "--seed", "4")
        for t in TABLES:
            check_same_rows(con, f"SELECT * FROM '{whole}/{t}/*.parquet'", f"SELECT * FROM {t}", t)


def test_a_draw_name_with_two_tables_is_refused(strata_bin, tmp_path):
    text = TPCH_LINES.read_text().replace(
        'ref = { table = "partsupp", field = "ps_suppkey", draw = "ps" }',
        'ref = { table = "supplier", field = "s_suppkey", draw = "ps" }',
    )
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    r = subprocess.run([strata_bin, "spec", "check", str(spec)], capture_output=True, text=True)
    assert r.returncode != 0
    assert "draw name `ps` is used with two tables: `partsupp` (field `l_partkey`) and `supplier`" in r.stderr
    r = subprocess.run([strata_bin, "generate", "-q", "--spec", str(spec), "--output-dir", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and not (tmp_path / "o").exists()


WHEN_TS = """
name = "cases"

[[tables]]
name = "events"
rows_per_scale = 4000

[[tables.fields]]
name = "a"
type = "int32"
uniform = { min = 1, max = 9 }
null_rate = 0.1

[[tables.fields]]
name = "d"
type = "date32"
uniform = { min = 1995-01-01, max = 1995-12-31 }

[[tables.fields]]
name = "t"
type = "timestamp(ms, UTC)"
uniform = { min = 1995-01-01T00:00:00Z, max = 1995-12-31T23:59:59Z }

[[tables.fields]]
name = "p"
type = "int64"
uniform = { min = 1, max = 100 }
when = [
  { condition = "d < DATE '1995-03-01'", constant = 1000 },
  { condition = "a BETWEEN 2 AND 3 OR t >= TIMESTAMP '1995-11-01 12:00:00'", null_rate = 1.0 },
]
"""

# (name, type, SQL, DuckDB type): timestamps and intervals, checked
# against DuckDB evaluating the same SQL.
TS_FIELDS = [
    ("t2", "timestamp(us)", "t + INTERVAL 90 MINUTE + a * INTERVAL 1 SECOND", "TIMESTAMP"),
    ("t3", "timestamp(ms, UTC)", "d + INTERVAL 3 HOUR", "TIMESTAMP"),
    ("d2", "date32", "CAST(t AS DATE) + INTERVAL 2 DAY", "DATE"),
    ("late", "boolean", "t > TIMESTAMP '1995-06-17 12:00:00' AND d <= CAST(t AS DATE)", "BOOLEAN"),
    ("text", "utf8", "CAST(t AS VARCHAR)", "VARCHAR"),
    ("g", "timestamp(us)", "greatest(t, d)", "TIMESTAMP"),
    ("hundreds", "int64", "round(a * 1234, -2)", "BIGINT"),
    ("nested", "int64", "CASE WHEN a > 100 THEN d - DATE '1900-01-01' + 9223372036854775000 ELSE a END", "BIGINT"),
]


@pytest.mark.parametrize(("scale", "parts"), [("1", 1), ("2", 4)])
def test_when_conditions_and_timestamps_equal_duckdb(strata_bin, tmp_path, scale, parts):
    body = WHEN_TS + "".join(
        f'\n[[tables.fields]]\nname = "{n}"\ntype = "{ty}"\nexpr = "{sql}"\n' for n, ty, sql, _ in TS_FIELDS
    )
    spec = tmp_path / "cases.toml"
    spec.write_text(body)
    out = tmp_path / "out"
    for i in range(1, parts + 1):
        run(strata_bin, out, "--spec", str(spec), "--scale", scale, "--seed", "6", "--parts", str(parts), "--part", str(i))
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    views(con, out, ["events"])
    n = count(con, "SELECT count(*) FROM events")
    assert n == 4000 * int(scale)
    # The first true condition decides; a null test is false.
    first = "d < DATE '1995-03-01'"
    second = "(a BETWEEN 2 AND 3 OR t >= TIMESTAMP '1995-11-01 12:00:00') IS TRUE"
    assert count(con, f"SELECT count(*) FROM events WHERE {first} AND p IS DISTINCT FROM 1000") == 0
    assert count(con, f"SELECT count(*) FROM events WHERE NOT ({first}) AND {second} AND p IS NOT NULL") == 0
    assert count(con, f"SELECT count(*) FROM events WHERE NOT ({first}) AND NOT {second} AND p NOT BETWEEN 1 AND 100") == 0
    assert count(con, f"SELECT count(*) FROM events WHERE NOT ({first}) AND NOT {second}") > 0.2 * n
    for name, _, sql, duck in TS_FIELDS:
        # Timestamps as DuckDB reads them back (naive, UTC).
        sql = sql.replace(" t ", " CAST(t AS TIMESTAMP) ").replace("(t ", "(CAST(t AS TIMESTAMP) ")
        sql = sql.replace("(t)", "(CAST(t AS TIMESTAMP))").replace("(t,", "(CAST(t AS TIMESTAMP),")
        if sql.startswith("t "):
            sql = "CAST(t AS TIMESTAMP)" + sql[1:]
        got = f"CAST({name} AS TIMESTAMP)" if duck == "TIMESTAMP" else name
        bad = count(con, f"SELECT count(*) FROM events WHERE {got} IS DISTINCT FROM CAST(({sql}) AS {duck})")
        assert bad == 0, (name, sql)
    if parts > 1:
        whole = tmp_path / "whole"
        run(strata_bin, whole, "--spec", str(spec), "--scale", scale, "--seed", "6")
        check_same_rows(con, f"SELECT * FROM '{whole}/events/*.parquet'", "SELECT * FROM events", "events")


@pytest.mark.parametrize("scale", ["0.01", "0.02"])
def test_orders_prices_flags_and_totals_follow_their_sql(strata_bin, tmp_path, scale):
    out = tmp_path / "out"
    run(strata_bin, out, "--preset", "orders", "--scale", scale, "--seed", "2")
    con = duckdb.connect()
    views(con, out, ["orders", "lineitem"])
    assert count(con, """SELECT count(*) FROM lineitem WHERE l_extendedprice <> l_quantity *
                         CAST(90000 + ((l_partkey // 10) % 20001) + 100 * (l_partkey % 1000) AS DECIMAL(15, 2)) * 0.01""") == 0
    # Received 1 to 30 days after shipping: by the cutoff, R or A; after it, N.
    assert count(con, """SELECT count(*) FROM lineitem WHERE l_returnflag IN ('R', 'A')
                         AND l_shipdate + 1 > DATE '1995-06-17'""") == 0
    assert count(con, """SELECT count(*) FROM lineitem WHERE l_returnflag = 'N'
                         AND l_shipdate + 30 <= DATE '1995-06-17'""") == 0
    flags = dict(con.execute("SELECT l_returnflag, count(*) FROM lineitem GROUP BY 1").fetchall())
    assert set(flags) == {"A", "N", "R"}
    assert abs(flags["A"] - flags["R"]) < 0.1 * (flags["A"] + flags["R"])
    check_same_rows(
        con,
        "SELECT o_orderkey, o_totalprice FROM orders",
        "SELECT l_orderkey, sum(l_extendedprice) FROM lineitem GROUP BY 1",
        "totals",
    )


def test_draws_conditions_and_timestamps_validate_against_the_json_schema(strata_bin):
    import json
    import tomllib

    import jsonschema

    schema = json.loads(subprocess.run([strata_bin, "spec", "schema"], check=True, capture_output=True).stdout)
    validator = jsonschema.Draft202012Validator(schema)
    for text in [TPCH_LINES.read_text(), WHEN_TS, COUNT_CASES]:
        doc = json.loads(json.dumps(tomllib.loads(text), default=str))
        errors = list(validator.iter_errors(doc))
        assert not errors, errors[0].message
    # What the checker refuses, the schema refuses where it can see it.
    doc = json.loads(json.dumps(tomllib.loads(WHEN_TS), default=str))
    doc["tables"][0]["fields"][3]["when"][0]["field"] = "a"
    assert list(validator.iter_errors(doc))
    doc = json.loads(json.dumps(tomllib.loads(TPCH_LINES.read_text()), default=str))
    lines = doc["tables"][-1]["fields"]
    lines[2]["ref"]["via"] = "l_orderkey"
    assert list(validator.iter_errors(doc))
    lines[2]["ref"].pop("via")
    lines[2]["ref"]["draw"] = "parent"
    assert list(validator.iter_errors(doc))


COUNT_CASES = (Path(__file__).resolve().parents[1] / "specs" / "count_cases.toml").read_text()


@pytest.mark.parametrize(("scale", "parts"), [("1", 1), ("2", 4)])
def test_child_counts_follow_cases_on_the_parent_row(strata_bin, tmp_path, scale, parts):
    spec = tmp_path / "counts.toml"
    spec.write_text(COUNT_CASES)
    out = tmp_path / "out"
    for i in range(1, parts + 1):
        run(strata_bin, out, "--spec", str(spec), "--scale", scale, "--seed", "5", "--parts", str(parts), "--part", str(i))
    con = duckdb.connect()
    views(con, out, ["orders", "lines"])
    per = """SELECT o.o_key, o.o_pri, o.o_date, o.o_lines, count(l.l_key) n
             FROM orders o LEFT JOIN lines l ON l.l_key = o.o_key GROUP BY ALL"""
    wrong = f"""SELECT count(*) FROM ({per}) WHERE NOT CASE
                  WHEN o_pri = 'URGENT' THEN n BETWEEN 5 AND 7
                  WHEN o_date < DATE '1995-01-01' THEN n = 0
                  ELSE n BETWEEN 1 AND 3 END"""
    assert count(con, wrong) == 0
    # The orders' own aggregate counts the same children.
    assert count(con, f"SELECT count(*) FROM ({per}) WHERE o_lines <> n") == 0
    assert count(con, f"SELECT count(*) FROM ({per}) WHERE n = 0") > 0.1 * 2000 * int(scale)
    assert count(con, "SELECT count(*) FROM (SELECT l_key, max(l_no) m, count(*) c FROM lines GROUP BY 1) WHERE m <> c") == 0
    if parts > 1:
        whole = tmp_path / "whole"
        run(strata_bin, whole, "--spec", str(spec), "--scale", scale, "--seed", "5")
        for t in ["orders", "lines"]:
            check_same_rows(con, f"SELECT * FROM '{whole}/{t}/*.parquet'", f"SELECT * FROM {t}", t)
