"""Multi-table datasets as DuckDB reads them: every reference resolves
(anti-joins are empty), copied fields equal the parent row's, references
inside list<struct> items resolve too, Zipf references show the declared
skew, and the parts of a run together hold exactly the single run's rows."""

import json
import math
import os
import subprocess
import tomllib
from pathlib import Path

import duckdb
import pytest

from conftest import check_same_rows

SHOP = """
name = "shop"

[[tables]]
name = "customers"
rows_per_scale = 2000

[[tables.fields]]
name = "c_id"
type = "int64"
sequence = { start = 100, step = 3 }

[[tables.fields]]
name = "c_segment"
type = "utf8"
weighted = { values = ["retail", "smb", "enterprise"], weights = [70, 25, 5] }

[[tables.fields]]
name = "c_since"
type = "date32"
uniform = { min = 2020-01-01, max = 2024-12-31 }
null_rate = 0.1

[[tables]]
name = "products"
rows = 500

[[tables.fields]]
name = "p_id"
type = "int32"
sequence = { start = 1 }

[[tables.fields]]
name = "p_price"
type = "decimal(9, 2)"
uniform = { min = 0.99, max = 499.99 }

[[tables]]
name = "orders"
rows_per_scale = 10000

[[tables.fields]]
name = "o_id"
type = "int64"
sequence = { start = 1 }

[[tables.fields]]
name = "o_cust"
type = "int64"
ref = { table = "customers", field = "c_id", zipf = { s = 1.1 } }

[[tables.fields]]
name = "o_segment"
type = "utf8"
ref = { table = "customers", field = "c_segment", via = "o_cust" }

[[tables.fields]]
name = "o_since"
type = "date32"
ref = { table = "customers", field = "c_since", via = "o_cust" }

[[tables.fields]]
name = "items"
type = "list"
length = { uniform = { min = 0, max = 4 } }

[tables.fields.item]
type = "struct"

[[tables.fields.item.fields]]
name = "product"
type = "int32"
ref = { table = "products", field = "p_id", zipf = { s = 0.8 } }

[[tables.fields.item.fields]]
name = "price"
type = "decimal(9, 2)"
ref = { table = "products", field = "p_price", via = "product" }

[[tables.fields.item.fields]]
name = "qty"
type = "int32"
uniform = { min = 1, max = 9 }
"""


@pytest.fixture
def shop(tmp_path):
    spec = tmp_path / "shop.toml"
    spec.write_text(SHOP)
    return spec


def run(strata_bin, spec, out, *args):
    subprocess.run(
        [strata_bin, "generate", "-q", "--spec", str(spec), "--output-dir", str(out), "--num-writers", "2", *args],
        check=True,
    )


def run_parts(strata_bin, spec, out, parts, *args):
    """Runs parts 1 to `parts` of `parts` into one directory."""
    for i in range(1, parts + 1):
        run(strata_bin, spec, out, *args, "--parts", str(parts), "--part", str(i))


def count(con, sql):
    return con.execute(sql).fetchall()[0][0]


def scan(out, table):
    """SQL for the rows of `table` in the run in `out`."""
    return f"SELECT * FROM '{out}/{table}/*.parquet'"


def views(out, tables):
    """A DuckDB connection with a view over each of the run's `tables`."""
    con = duckdb.connect()
    for t in tables:
        con.execute(f"CREATE VIEW {t} AS {scan(out, t)}")
    return con


@pytest.fixture(scope="module")
def validator(strata_bin):
    import jsonschema

    schema = json.loads(subprocess.run([strata_bin, "spec", "schema"], check=True, capture_output=True).stdout)
    return jsonschema.Draft202012Validator(schema)


def spec_doc(text):
    """A TOML spec as the JSON document the schema checks (dates as strings)."""
    return json.loads(json.dumps(tomllib.loads(text), default=str))


@pytest.mark.parametrize("scale", ["1", "2.5"])
def test_references_resolve_and_copy_their_parent_rows(strata_bin, shop, tmp_path, scale):
    out = tmp_path / "out"
    run(strata_bin, shop, out, "--scale", scale, "--seed", "5")
    con = views(out, ["customers", "products", "orders"])
    s = float(scale)
    assert count(con, "SELECT count(*) FROM customers") == round(2000 * s)
    assert count(con, "SELECT count(*) FROM products") == 500
    n_orders = count(con, "SELECT count(*) FROM orders")
    assert n_orders == round(10000 * s)
    # Every key resolves.
    assert count(con, "SELECT count(*) FROM orders o ANTI JOIN customers c ON o.o_cust = c.c_id") == 0
    # Copied fields are the referenced row's (nulls included).
    assert (
        count(
            con,
            """SELECT count(*) FROM orders o JOIN customers c ON o.o_cust = c.c_id
               WHERE o.o_segment IS DISTINCT FROM c.c_segment OR o.o_since IS DISTINCT FROM c.c_since""",
        )
        == 0
    )
    assert count(con, "SELECT count(*) FROM orders WHERE o_since IS NULL") > 0
    # References inside list<struct> items.
    con.execute("CREATE VIEW items AS SELECT o_id, unnest(items, recursive := true) FROM orders").fetchall()
    n_items = count(con, "SELECT count(*) FROM items")
    assert n_items > n_orders
    assert count(con, "SELECT count(*) FROM items i ANTI JOIN products p ON i.product = p.p_id") == 0
    assert count(con, "SELECT count(*) FROM items i JOIN products p ON i.product = p.p_id WHERE i.price <> p.p_price") == 0
    # Zipf skew: the most referenced customer's share is rank 1's.
    n = round(2000 * s)
    top = count(con, "SELECT max(k) FROM (SELECT count(*) k FROM orders GROUP BY o_cust)")
    p1 = 1 / sum(k**-1.1 for k in range(1, n + 1))
    se = math.sqrt(p1 * (1 - p1) / n_orders)
    assert abs(top / n_orders - p1) < 5 * se, (top, n_orders, p1)
    # ... and it is not simply the table's first row.
    hot = con.execute("SELECT o_cust FROM orders GROUP BY o_cust ORDER BY count(*) DESC LIMIT 3").fetchall()
    assert any(k != 100 for (k,) in hot)


def test_parts_together_are_the_single_run(strata_bin, shop, tmp_path):
    whole = tmp_path / "whole"
    run(strata_bin, shop, whole, "--seed", "9")
    parts = tmp_path / "parts"
    run_parts(strata_bin, shop, parts, 5, "--seed", "9")
    con = duckdb.connect()
    for t in ["customers", "products", "orders"]:
        assert len(list((parts / t).glob("*.parquet"))) == 10
        check_same_rows(con, scan(whole, t), scan(parts, t), t)


def test_some_tables_still_reference_the_others(strata_bin, shop, tmp_path):
    out = tmp_path / "out"
    run(strata_bin, shop, out, "--tables", "orders", "--seed", "5")
    assert sorted(p.name for p in out.iterdir()) == ["orders"]
    full = tmp_path / "full"
    run(strata_bin, shop, full, "--seed", "5")
    con = duckdb.connect()
    check_same_rows(con, scan(out, "orders"), scan(full, "orders"))
    assert count(con, f"SELECT count(*) FROM ({scan(out, 'orders')})") == 10000


def test_datasets_validate_against_the_json_schema(validator):
    doc = spec_doc(SHOP)
    errors = list(validator.iter_errors(doc))
    assert not errors, errors[0].message
    # The schema rejects what the checker rejects, where it can see it:
    # two generators, a table without a row count, both `fields` and `tables`.
    two = json.loads(json.dumps(doc))
    two["tables"][2]["fields"][1]["uniform"] = {"min": 1, "max": 2}
    assert list(validator.iter_errors(two))
    no_rows = json.loads(json.dumps(doc))
    del no_rows["tables"][0]["rows_per_scale"]
    assert list(validator.iter_errors(no_rows))
    both = json.loads(json.dumps(doc))
    both["fields"] = both["tables"][0]["fields"]
    assert list(validator.iter_errors(both))


@pytest.mark.parametrize("scale", ["0.01", "0.02"])
def test_orders_line_items_are_the_children_of_their_orders(strata_bin, tmp_path, scale):
    out = tmp_path / "out"
    subprocess.run(
        [strata_bin, "generate", "-q", "--preset", "orders", "--scale", scale, "--output-dir", str(out)], check=True
    )
    con = views(out, ["customers", "orders", "lineitem"])
    s = float(scale)
    n_orders = count(con, "SELECT count(*) FROM orders")
    assert n_orders == round(1_500_000 * s)
    assert count(con, "SELECT count(*) FROM orders o ANTI JOIN customers c ON o.o_custkey = c.c_custkey") == 0
    assert count(con, "SELECT count(*) FROM lineitem l ANTI JOIN orders o ON l.l_orderkey = o.o_orderkey") == 0
    # Every order has 1 to 7 line items (uniform), numbered 1..n.
    assert count(con, "SELECT count(*) FROM orders o ANTI JOIN lineitem l ON l.l_orderkey = o.o_orderkey") == 0
    per = con.execute(
        """SELECT n, count(*) FROM (
             SELECT l_orderkey, count(*) n, min(l_linenumber) lo, max(l_linenumber) hi,
                    count(DISTINCT l_linenumber) d
             FROM lineitem GROUP BY 1 HAVING lo = 1 AND hi = n AND d = n)
           GROUP BY 1 ORDER BY 1"""
    ).fetchall()
    assert [n for n, _ in per] == list(range(1, 8))
    assert sum(c for _, c in per) == n_orders
    p = 1 / 7
    se = math.sqrt(p * (1 - p) / n_orders)
    for n, c in per:
        assert abs(c / n_orders - p) < 5 * se, (n, c, n_orders)
    # Dates follow their order's.
    (ship_lo, ship_hi, commit_lo, commit_hi) = con.execute(
        """SELECT min(l_shipdate - o_orderdate), max(l_shipdate - o_orderdate),
                  min(l_commitdate - o_orderdate), max(l_commitdate - o_orderdate)
           FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey"""
    ).fetchall()[0]
    assert (ship_lo, ship_hi, commit_lo, commit_hi) == (1, 121, 30, 90)
    # The copied segment is the customer's.
    assert (
        count(
            con,
            "SELECT count(*) FROM orders o JOIN customers c ON o.o_custkey = c.c_custkey WHERE o.o_mktsegment <> c.c_mktsegment",
        )
        == 0
    )


def test_parts_of_a_child_table_are_the_children_of_the_parents_parts(strata_bin, tmp_path):
    whole = tmp_path / "whole"
    args = [strata_bin, "generate", "-q", "--preset", "orders", "--scale", "0.004", "--seed", "3"]
    subprocess.run([*args, "--output-dir", str(whole)], check=True)
    parts = tmp_path / "parts"
    for i in range(1, 6):
        subprocess.run([*args, "--output-dir", str(parts), "--parts", "5", "--part", str(i)], check=True)
    con = duckdb.connect()
    for t in ["customers", "orders", "lineitem"]:
        check_same_rows(con, scan(whole, t), scan(parts, t), t)
    # Part I of the line items holds exactly the children of part I of the orders.
    for i in range(1, 6):
        o = f"'{parts}/orders/orders_part{i}of5_*.parquet'"
        li = f"'{parts}/lineitem/lineitem_part{i}of5_*.parquet'"
        assert count(con, f"SELECT count(*) FROM {li} l ANTI JOIN {o} o ON l.l_orderkey = o.o_orderkey") == 0
        assert count(con, f"SELECT count(*) FROM {o} o ANTI JOIN {li} l ON l.l_orderkey = o.o_orderkey") == 0


@pytest.mark.parametrize(("scale", "parts"), [("0.05", 1), ("0.02", 5)])
def test_star_references_resolve_with_their_skew(strata_bin, tmp_path, scale, parts):
    out = tmp_path / "out"
    for i in range(1, parts + 1):
        subprocess.run(
            [strata_bin, "generate", "-q", "--preset", "star", "--scale", scale, "--output-dir", str(out),
             "--parts", str(parts), "--part", str(i)],
            check=True,
        )
    con = views(out, ["dates", "customers", "products", "stores", "sales"])
    n = count(con, "SELECT count(*) FROM sales")
    assert n == round(1_000_000 * float(scale))
    assert count(con, "SELECT count(*) FROM customers") == round(100_000 * float(scale))
    assert count(con, "SELECT count(DISTINCT f_id) FROM sales") == n
    for fk, dim, key in [
        ("f_datekey", "dates", "d_datekey"),
        ("f_customer", "customers", "c_id"),
        ("f_product", "products", "p_id"),
        ("f_store", "stores", "s_id"),
    ]:
        assert count(con, f"SELECT count(*) FROM sales f ANTI JOIN {dim} d ON f.{fk} = d.{key}") == 0, fk
    assert count(con, "SELECT count(*) FROM sales f JOIN products p ON f.f_product = p.p_id WHERE f.f_unit_price <> p.p_price") == 0
    assert count(con, "SELECT count(*) FROM sales f JOIN dates d ON f.f_datekey = d.d_datekey WHERE f.f_date <> d.d_date") == 0
    # The hottest store's share is Zipf rank 1's (s = 0.9 over 200 stores).
    top = count(con, "SELECT max(k) FROM (SELECT count(*) k FROM sales GROUP BY f_store)")
    p1 = 1 / sum(k**-0.9 for k in range(1, 201))
    se = math.sqrt(p1 * (1 - p1) / n)
    assert abs(top / n - p1) < 5 * se, (top, n, p1)


@pytest.mark.skipif("STRATA_S3_ENDPOINT" not in os.environ, reason="no S3 test server configured (scripts/test starts one)")
def test_a_dataset_to_s3_is_uploaded_table_by_table(strata_bin, tmp_path):
    import uuid

    import boto3
    import pyarrow as pa
    import pyarrow.parquet as pq

    bucket = os.environ["STRATA_S3_BUCKET"]
    prefix = f"ds-{uuid.uuid4().hex}"
    args = ["generate", "-q", "--preset", "orders", "--scale", "0.001", "--num-writers", "2"]
    subprocess.run([strata_bin, *args, "--output-dir", f"s3://{bucket}/{prefix}"], check=True)
    local = tmp_path / "local"
    subprocess.run([strata_bin, *args, "--output-dir", str(local)], check=True)
    client = boto3.client(
        "s3",
        endpoint_url=os.environ["STRATA_S3_ENDPOINT"],
        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
    )
    keys = sorted(o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"])
    want = sorted(f"{prefix}/{t}/{t}_{j}.parquet" for t in ["customers", "orders", "lineitem"] for j in range(2))
    assert keys == want
    for key in keys:
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        got = pq.read_table(pa.BufferReader(body))
        assert got.equals(pq.read_table(local / key.removeprefix(f"{prefix}/"))), key


DIMS = """
name = "dims"

[[tables]]
name = "region"
rows = 5

[[tables.fields]]
name = "r_regionkey"
type = "int32"
sequence = { start = 0 }

[[tables.fields]]
name = "r_name"
type = "utf8"
values_by_row = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]

[[tables]]
name = "nation"
rows = 25

[[tables.fields]]
name = "n_nationkey"
type = "int32"
sequence = { start = 0 }

[[tables.fields]]
name = "n_regionkey"
type = "int32"
values_by_row = { values = [0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1] }

[[tables.fields]]
name = "n_band"
type = "dictionary"
values_by_row = { values = ["low", "mid", "high"], cycle = true }

[[tables]]
name = "date_dim"
calendar = { start = 1998-01-01, end = 2003-12-31 }

[[tables]]
name = "customers"
rows_per_scale = 3000

[[tables.fields]]
name = "c_id"
type = "int64"
sequence = { start = 1 }

[[tables.fields]]
name = "c_first"
type = "int32"
ref = { table = "date_dim", field = "date_key" }

[[tables]]
name = "orders"
children_of = "customers"
count = { weighted = { values = [0, 1, 2, 6], weights = [33, 30, 20, 17] } }

[[tables.fields]]
name = "o_cust"
type = "int64"
parent = "c_id"

[[tables.fields]]
name = "o_number"
type = "int32"
sequence = { per_parent = true, start = 1 }

[[tables.fields]]
name = "o_day"
type = "utf8"
ref = { table = "date_dim", field = "day_name" }
"""

REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
NATION_REGIONS = [0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1]


@pytest.mark.parametrize(("scale", "parts"), [("1", 1), ("2", 4)])
def test_dimension_rows_calendars_and_per_parent_numbers(strata_bin, tmp_path, scale, parts):
    spec = tmp_path / "dims.toml"
    spec.write_text(DIMS)
    out = tmp_path / "out"
    run_parts(strata_bin, spec, out, parts, "--scale", scale, "--seed", "4")
    tables = ["region", "nation", "date_dim", "customers", "orders"]
    con = views(out, tables)
    # values_by_row: row i holds value i, whatever the parts.
    assert con.execute("SELECT r_regionkey, r_name FROM region ORDER BY 1").fetchall() == list(enumerate(REGIONS))
    rows = con.execute("SELECT n_nationkey, n_regionkey, n_band FROM nation ORDER BY 1").fetchall()
    assert rows == [(i, r, ["low", "mid", "high"][i % 3]) for i, r in enumerate(NATION_REGIONS)]
    # The calendar: one row per day, every part as DuckDB computes it.
    assert count(con, "SELECT count(*) FROM date_dim") == 2191
    assert count(con, "SELECT count(DISTINCT date) FROM date_dim") == 2191
    assert con.execute("SELECT min(date)::VARCHAR, max(date)::VARCHAR FROM date_dim").fetchall() == [
        ("1998-01-01", "2003-12-31")
    ]
    bad = count(
        con,
        """SELECT count(*) FROM date_dim WHERE
             date_key <> strftime(date, '%Y%m%d')::INT OR year <> year(date) OR quarter <> quarter(date)
             OR month <> month(date) OR day_of_month <> day(date) OR day_of_year <> dayofyear(date)
             OR day_of_week <> isodow(date) OR week_of_year <> weekofyear(date)
             OR day_name <> dayname(date) OR month_name <> monthname(date)
             OR weekend <> (isodow(date) >= 6)""",
    )
    assert bad == 0
    # References into the calendar resolve.
    assert count(con, "SELECT count(*) FROM customers c ANTI JOIN date_dim d ON c.c_first = d.date_key") == 0
    assert count(con, "SELECT count(*) FROM orders o ANTI JOIN date_dim d ON o.o_day = d.day_name") == 0
    # Per-parent numbers run 1..n with no gap; a third of customers, about, have none.
    n_cust = count(con, "SELECT count(*) FROM customers")
    assert n_cust == 3000 * int(scale)
    assert (
        count(
            con,
            """SELECT count(*) FROM (SELECT o_cust, count(*) n, min(o_number) lo, max(o_number) hi,
                      count(DISTINCT o_number) d FROM orders GROUP BY 1)
               WHERE lo <> 1 OR hi <> n OR d <> n""",
        )
        == 0
    )
    sizes = dict(con.execute("SELECT n, count(*) FROM (SELECT count(*) n FROM orders GROUP BY o_cust) GROUP BY 1").fetchall())
    assert set(sizes) == {1, 2, 6}
    without = count(con, "SELECT count(*) FROM customers c ANTI JOIN orders o ON o.o_cust = c.c_id")
    se = math.sqrt(0.33 * 0.67 / n_cust)
    assert abs(without / n_cust - 0.33) < 5 * se, without
    if parts > 1:
        whole = tmp_path / "whole"
        run(strata_bin, spec, whole, "--scale", scale, "--seed", "4")
        for t in tables:
            check_same_rows(con, scan(whole, t), scan(out, t), t)


def test_dimension_specs_validate_against_the_json_schema(validator):
    doc = spec_doc(DIMS)
    errors = list(validator.iter_errors(doc))
    assert not errors, errors[0].message
    # A calendar table with a row count, or a field with two generators, is refused.
    rows = json.loads(json.dumps(doc))
    rows["tables"][2]["rows"] = 10
    assert list(validator.iter_errors(rows))
    two = json.loads(json.dumps(doc))
    two["tables"][0]["fields"][1]["constant"] = "x"
    assert list(validator.iter_errors(two))


EXPRS = """
name = "exprs"

[[tables]]
name = "lines"
rows_per_scale = 5000

[[tables.fields]]
name = "qty"
type = "int32"
uniform = { min = -2, max = 50 }
null_rate = 0.05

[[tables.fields]]
name = "price"
type = "decimal(12, 2)"
uniform = { min = 0.01, max = 9999.99 }

[[tables.fields]]
name = "discount"
type = "decimal(4, 2)"
weighted = { values = [0.00, 0.04, 0.10] }

[[tables.fields]]
name = "ship"
type = "date32"
uniform = { min = 1995-01-01, max = 1998-12-31 }

[[tables.fields]]
name = "delay"
type = "int32"
uniform = { min = 1, max = 30 }
"""

# (name, type, SQL): each is a field of `lines` and is checked against
# DuckDB evaluating the same SQL over the generated inputs.
EXPR_FIELDS = [
    ("extended", "decimal(15, 2)", "qty * price"),
    ("net", "decimal(15, 2)", "qty * price * (1 - discount)"),
    ("receipt", "date32", "ship + delay"),
    ("weekly", "date32", "ship - INTERVAL 2 WEEK"),
    ("status", "utf8", "CASE WHEN ship + delay < DATE '1996-06-17' THEN 'F' WHEN qty IS NULL THEN 'N' ELSE 'O' END"),
    ("per_unit", "float64", "price / qty"),
    ("halves", "int64", "qty // 2 + qty % 7"),
    ("code", "utf8", "'Clerk#' || lpad(CAST(delay AS VARCHAR), 9, '0')"),
    ("tag", "utf8", "concat('q', qty, '/', discount)"),
    ("bounded", "int64", "greatest(least(qty, 40), coalesce(qty, 3) - 5, 0)"),
    ("dollars", "int32", "CAST(price / 100 AS INTEGER)"),
    ("tenths", "decimal(9, 1)", "round(price, 1)"),
    ("flag", "boolean", "qty BETWEEN 10 AND 20 OR discount IN (0.10, 0.04) AND NOT delay > 20"),
    ("span", "int64", "(ship + delay) - ship"),
    ("cut", "utf8", "substring(code, qty - 20, delay - 15)"),
    ("tail", "utf8", "substr(tag, delay - 10)"),
    ("bucket", "utf8", "CASE delay % 6 WHEN 0 THEN 'a' WHEN 1 THEN 'b' WHEN 2 THEN 'c' WHEN 3 THEN 'd' WHEN 4 THEN NULL ELSE 'z' END"),
    ("steps", "int64", "CASE WHEN delay < 3 THEN qty WHEN delay < 6 THEN qty * 2 WHEN delay < 9 THEN qty * 3 WHEN delay < 12 THEN delay ELSE -1 END"),
    ("item", "utf8", "['a', 'b', NULL, 'd'][delay % 7 - 3]"),
    ("mixed", "decimal(15, 2)", "[price, 1, qty * 2.5][delay % 4]"),
]


def exprs_spec():
    body = EXPRS
    for name, ty, sql in EXPR_FIELDS:
        body += f'\n[[tables.fields]]\nname = "{name}"\ntype = "{ty}"\nexpr = "{sql}"\n'
    body += '\n[[tables.fields]]\nname = "jitter"\ntype = "date32"\nexpr = "ship + uniform(1, 30)"\n'
    return body


DUCK_TYPES = {"decimal(15, 2)": "DECIMAL(15,2)", "decimal(9, 1)": "DECIMAL(9,1)", "date32": "DATE",
              "utf8": "VARCHAR", "float64": "DOUBLE", "int64": "BIGINT", "int32": "INTEGER", "boolean": "BOOLEAN"}


@pytest.mark.parametrize(("scale", "parts"), [("1", 1), ("3", 4)])
def test_expression_fields_equal_duckdb_evaluating_the_same_sql(strata_bin, tmp_path, scale, parts):
    spec = tmp_path / "exprs.toml"
    spec.write_text(exprs_spec())
    out = tmp_path / "out"
    run_parts(strata_bin, spec, out, parts, "--scale", scale, "--seed", "8")
    con = views(out, ["lines"])
    n = count(con, "SELECT count(*) FROM lines")
    assert n == 5000 * int(scale)
    for name, ty, sql in EXPR_FIELDS:
        # Division by zero is null in strata (DuckDB's `//` and `%` agree;
        # its floating-point `/` gives infinity, so the oracle says null).
        duck = sql.replace("price / qty", "CASE WHEN qty <> 0 THEN price / qty END")
        bad = count(
            con,
            f"SELECT count(*) FROM lines WHERE {name} IS DISTINCT FROM CAST(({duck}) AS {DUCK_TYPES[ty]})",
        )
        assert bad == 0, (name, sql)
    # Every case is exercised: nulls in, divisions by zero, both statuses.
    assert count(con, "SELECT count(*) FROM lines WHERE qty = 0 AND per_unit IS NULL") > 0
    assert count(con, "SELECT count(DISTINCT status) FROM lines") == 3
    lo, hi = con.execute("SELECT min(jitter - ship), max(jitter - ship) FROM lines").fetchall()[0]
    assert (lo, hi) == (1, 30)
    if parts > 1:
        whole = tmp_path / "whole"
        run(strata_bin, spec, whole, "--scale", scale, "--seed", "8")
        check_same_rows(con, scan(whole, "lines"), scan(out, "lines"))


def test_expression_specs_validate_against_the_json_schema(validator):
    doc = spec_doc(exprs_spec())
    errors = list(validator.iter_errors(doc))
    assert not errors, errors[0].message
    two = json.loads(json.dumps(doc))
    two["tables"][0]["fields"][-1]["uniform"] = {"min": 1, "max": 2}
    assert list(validator.iter_errors(two))
    for text in [SALES_STAR.read_text(), AGGREGATES]:
        doc = spec_doc(text)
        errors = list(validator.iter_errors(doc))
        assert not errors, errors[0].message


SALES_STAR = Path(__file__).resolve().parents[2] / "examples" / "specs" / "sales_star.toml"
STAR_RECIPE = Path(__file__).resolve().parents[2] / "docs" / "src" / "recipes" / "star.md"


def guide_star_queries():
    """The SQL statements of the guide's star-schema recipe that read
    `sales_star.toml`'s tables (`'star/TABLE/*.parquet'`), in order."""
    text = STAR_RECIPE.read_text()
    marker = "-- DuckDB over `strata generate --spec examples/specs/sales_star.toml"
    block = text[text.index(marker) :]
    block = block[: block.index("```")]
    statements = [s.strip() for s in block.split(";") if "SELECT" in s]
    assert len(statements) == 2, statements
    return statements


@pytest.mark.parametrize(("scale", "parts"), [("0.01", 1), ("0.03", 3)])
def test_sales_star_joins_and_prices_by_its_expressions(strata_bin, tmp_path, scale, parts):
    out = tmp_path / "out"
    run_parts(strata_bin, SALES_STAR, out, parts, "--scale", scale, "--seed", "2")
    con = views(out, ["date_dim", "item", "customer", "store", "promotion", "store_sales"])
    s = float(scale)
    n = count(con, "SELECT count(*) FROM store_sales")
    assert n == round(1_000_000 * s)
    assert count(con, "SELECT count(*) FROM date_dim") == 2191
    for fk, dim, key in [
        ("ss_sold_date_sk", "date_dim", "d_date_sk"),
        ("ss_item_sk", "item", "i_item_sk"),
        ("ss_customer_sk", "customer", "c_customer_sk"),
        ("ss_store_sk", "store", "s_store_sk"),
        ("ss_promo_sk", "promotion", "p_promo_sk"),
    ]:
        assert count(con, f"SELECT count(*) FROM store_sales f ANTI JOIN {dim} d ON f.{fk} = d.{key}") == 0, fk
    # Copied attributes are the drawn row's; prices follow by expression.
    assert count(con, """SELECT count(*) FROM store_sales f JOIN item i ON f.ss_item_sk = i.i_item_sk
                          WHERE f.ss_list_price <> i.i_current_price OR f.ss_wholesale_cost <> i.i_wholesale_cost""") == 0
    assert count(con, """SELECT count(*) FROM store_sales f JOIN promotion p ON f.ss_promo_sk = p.p_promo_sk
                          WHERE f.ss_discount_pct <> p.p_discount""") == 0
    assert count(con, """SELECT count(*) FROM item
                          WHERE i_current_price <> CAST(i_wholesale_cost * (100 + i_markup_pct) * 0.01 AS DECIMAL(7,2))""") == 0
    assert count(con, """SELECT count(*) FROM store_sales WHERE
          ss_sales_price <> CAST(ss_list_price * (1 - ss_discount_pct) AS DECIMAL(7,2))
       OR ss_ext_sales_price <> CAST(ss_quantity * ss_sales_price AS DECIMAL(10,2))
       OR ss_ext_discount_amt <> CAST(ss_quantity * (ss_list_price - ss_sales_price) AS DECIMAL(10,2))
       OR ss_ext_tax <> CAST(ss_ext_sales_price * ss_tax_pct AS DECIMAL(10,2))
       OR ss_net_paid_inc_tax <> CAST(ss_ext_sales_price + ss_ext_tax AS DECIMAL(10,2))
       OR ss_net_profit <> CAST(ss_ext_sales_price - ss_quantity * ss_wholesale_cost AS DECIMAL(10,2))""") == 0
    # Customers of no activity never buy; about a third of them.
    idle = count(con, "SELECT count(*) FROM customer c ANTI JOIN store_sales f ON f.ss_customer_sk = c.c_customer_sk")
    assert idle >= count(con, "SELECT count(*) FROM customer WHERE c_activity = 0") > 0
    assert count(con, "SELECT count(*) FROM store_sales f JOIN customer c ON f.ss_customer_sk = c.c_customer_sk WHERE c.c_activity = 0") == 0
    # The guide's queries over this spec run, over the same data.
    weekend, never = guide_star_queries()
    rows = con.execute(weekend.replace("'star/", f"'{out}/")).fetchall()
    assert len(rows) >= 5 and all(r[3] > 0 for r in rows), rows
    assert count(con, never.replace("'star/", f"'{out}/")) == idle


AGGREGATES = """name = "agg"
[[tables]]
name = "orders"
rows_per_scale = 3000
[[tables.fields]]
name = "o_key"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "o_date"
type = "date32"
uniform = { min = 1995-01-01, max = 1998-12-31 }
[[tables.fields]]
name = "o_total"
type = "decimal(15, 2)"
aggregate = { table = "lines", sum = "l_price" }
[[tables.fields]]
name = "o_lines"
type = "int32"
aggregate = { table = "lines", count = "*" }
[[tables.fields]]
name = "o_first_ship"
type = "date32"
aggregate = { table = "lines", min = "l_ship" }
[[tables.fields]]
name = "o_all_f"
type = "boolean"
aggregate = { table = "lines", all = "l_is_f" }
[[tables.fields]]
name = "o_status"
type = "utf8"
expr = "CASE WHEN o_all_f THEN 'F' WHEN o_lines = 0 THEN 'N' ELSE 'O' END"
[[tables]]
name = "lines"
children_of = "orders"
count = { weighted = { values = [0, 1, 3, 7] } }
[[tables.fields]]
name = "l_key"
type = "int64"
parent = "o_key"
[[tables.fields]]
name = "l_qty"
type = "int32"
uniform = { min = 1, max = 50 }
null_rate = 0.05
[[tables.fields]]
name = "l_unit"
type = "decimal(8, 2)"
uniform = { min = 1.00, max = 999.99 }
[[tables.fields]]
name = "l_price"
type = "decimal(12, 2)"
expr = "l_qty * l_unit"
[[tables.fields]]
name = "l_ship"
type = "date32"
parent = { field = "o_date", offset = { uniform = { min = 1, max = 121 } } }
[[tables.fields]]
name = "l_is_f"
type = "boolean"
expr = "l_ship < DATE '1996-06-17'"
"""


@pytest.mark.parametrize(("scale", "parts"), [("1", 1), ("2", 4)])
def test_aggregates_equal_duckdb_group_by_over_the_children(strata_bin, tmp_path, scale, parts):
    spec = tmp_path / "agg.toml"
    spec.write_text(AGGREGATES)
    out = tmp_path / "out"
    run_parts(strata_bin, spec, out, parts, "--scale", scale, "--seed", "6")
    con = views(out, ["orders", "lines"])
    assert count(con, "SELECT count(*) FROM orders") == 3000 * int(scale)
    bad = count(
        con,
        """SELECT count(*) FROM orders o LEFT JOIN (
             SELECT l_key, sum(l_price) s, count(*) c, min(l_ship) m, bool_and(l_is_f) a
             FROM lines GROUP BY 1) g ON g.l_key = o.o_key
           WHERE o.o_total IS DISTINCT FROM g.s OR o.o_lines <> coalesce(g.c, 0)
              OR o.o_first_ship IS DISTINCT FROM g.m OR o.o_all_f IS DISTINCT FROM g.a
              OR o.o_status <> CASE WHEN g.a THEN 'F' WHEN g.c IS NULL THEN 'N' ELSE 'O' END""",
    )
    assert bad == 0
    # A quarter of the orders, about, have no lines (count 0, sums null).
    n = count(con, "SELECT count(*) FROM orders")
    empty = count(con, "SELECT count(*) FROM orders WHERE o_lines = 0 AND o_total IS NULL")
    assert abs(empty / n - 0.25) < 5 * math.sqrt(0.25 * 0.75 / n)
    if parts > 1:
        whole = tmp_path / "whole"
        run(strata_bin, spec, whole, "--scale", scale, "--seed", "6")
        for t in ["orders", "lines"]:
            check_same_rows(con, scan(whole, t), scan(out, t), t)


HIDDEN = """
name = "hid"
[[tables]]
name = "orders"
rows = 400
[[tables.fields]]
name = "o_id"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "o_secret"
type = "int64"
uniform = { min = 1, max = 1000 }
hidden = true
[[tables.fields]]
name = "o_twice"
type = "int64"
expr = "o_secret * 2"
[[tables.fields]]
name = "o_net"
type = "decimal(18, 4)"
aggregate = { table = "lines", sum = "l_price * (1 - l_discount)" }
[[tables.fields]]
name = "o_big"
type = "int64"
aggregate = { table = "lines", count = "CASE WHEN l_qty > 5 THEN 1 END" }
[[tables]]
name = "lines"
children_of = "orders"
count = { uniform = { min = 0, max = 6 } }
[[tables.fields]]
name = "l_order"
type = "int64"
parent = "o_id"
[[tables.fields]]
name = "l_secret"
type = "int64"
parent = "o_secret"
[[tables.fields]]
name = "l_qty"
type = "int64"
uniform = { min = 1, max = 10 }
[[tables.fields]]
name = "l_price"
type = "decimal(12, 2)"
uniform = { min = 1.00, max = 999.99 }
[[tables.fields]]
name = "l_discount"
type = "decimal(4, 2)"
weighted = { values = [0.00, 0.05, 0.10] }
"""


@pytest.mark.parametrize("parts", [1, 3])
def test_hidden_fields_and_aggregates_of_expressions_as_duckdb_sees_them(strata_bin, tmp_path, parts):
    spec = tmp_path / "hid.toml"
    spec.write_text(HIDDEN)
    out = tmp_path / "out"
    run_parts(strata_bin, spec, out, parts)
    con = views(out, ["orders", "lines"])
    cols = [r[0] for r in con.execute("DESCRIBE orders").fetchall()]
    assert cols == ["o_id", "o_twice", "o_net", "o_big"]
    # The hidden parent field, copied into the lines, is the one `o_twice` doubles.
    assert count(con, "SELECT count(*) FROM lines JOIN orders ON l_order = o_id WHERE l_secret * 2 <> o_twice") == 0
    assert count(con, "SELECT count(*) FROM lines") > 1000
    # Aggregates of expressions are DuckDB's GROUP BY of the same expressions.
    wrong = count(
        con,
        """
        SELECT count(*) FROM orders LEFT JOIN (
            SELECT l_order, sum(l_price * (1 - l_discount)) AS net,
                   count(CASE WHEN l_qty > 5 THEN 1 END) AS big
            FROM lines GROUP BY l_order
        ) g ON g.l_order = o_id
        WHERE o_net IS DISTINCT FROM g.net OR o_big <> coalesce(g.big, 0)
        """,
    )
    assert wrong == 0
