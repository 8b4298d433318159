"""The `tpch` preset read by DuckDB: every key relationship of TPC-H's
eight tables resolves, every value follows the TPC-H specification's rule
for it (domains, formulas, dates, flags, totals and statuses from the
lines), at scale factors 0.01, 0.1 and 1, whole and in parts, and join
queries of TPC-H's shapes return answers consistent with each other."""

import subprocess

import duckdb
import pytest

TABLES = ["region", "nation", "supplier", "part", "partsupp", "customer", "orders", "lineitem"]

NATIONS = [
    ("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4), ("ETHIOPIA", 0),
    ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2), ("IRAN", 4), ("IRAQ", 4),
    ("JAPAN", 2), ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0), ("MOZAMBIQUE", 0), ("PERU", 1),
    ("CHINA", 2), ("ROMANIA", 3), ("SAUDI ARABIA", 4), ("VIETNAM", 2), ("RUSSIA", 3),
    ("UNITED KINGDOM", 3), ("UNITED STATES", 1),
]

COLOURS = set(
    "almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished "
    "chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick "
    "floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace "
    "lavender lawn lemon light lime linen magenta maroon medium metallic midnight mint misty moccasin "
    "navajo navy olive orange orchid pale papaya peach peru pink plum powder puff purple red rose rosy "
    "royal saddle salmon sandy seashell sienna sky slate smoke snow spring steel tan thistle tomato "
    "turquoise violet wheat white yellow".split()
)


def generate(strata_bin, out, scale, parts):
    for i in range(1, parts + 1):
        subprocess.run(
            [strata_bin, "generate", "-q", "--preset", "tpch", "--scale", str(scale), "--output-dir", str(out),
             "--parts", str(parts), "--part", str(i)],
            check=True,
        )


def connect(out):
    con = duckdb.connect()
    for t in TABLES:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM '{out}/{t}/*.parquet'")
    return con


def one(con, sql):
    return con.execute(sql).fetchall()[0][0]


def zero(con, what, sql):
    """`sql` counts rows that break a rule: none may."""
    n = one(con, sql)
    assert n == 0, f"{what}: {n} rows ({sql})"


def check_keys(con, sf):
    counts = {t: one(con, f"SELECT count(*) FROM {t}") for t in TABLES}
    assert counts["region"] == 5 and counts["nation"] == 25
    assert counts["supplier"] == round(10_000 * sf)
    assert counts["part"] == round(200_000 * sf)
    assert counts["partsupp"] == 4 * counts["part"]
    assert counts["customer"] == round(150_000 * sf)
    assert counts["orders"] == round(1_500_000 * sf)
    # 1 to 7 lines per order, 4 on average.
    assert 3.9 < counts["lineitem"] / counts["orders"] < 4.1
    # Primary keys are unique.
    for table, key in [
        ("region", "r_regionkey"), ("nation", "n_nationkey"), ("supplier", "s_suppkey"), ("part", "p_partkey"),
        ("partsupp", "ps_partkey, ps_suppkey"), ("customer", "c_custkey"), ("orders", "o_orderkey"),
        ("lineitem", "l_orderkey, l_linenumber"),
    ]:
        zero(con, f"{table} key", f"SELECT count(*) - count(DISTINCT ({key})) FROM {table}")
    # Every foreign key resolves (anti-joins empty).
    for what, sql in [
        ("n_regionkey", "SELECT count(*) FROM nation ANTI JOIN region ON n_regionkey = r_regionkey"),
        ("s_nationkey", "SELECT count(*) FROM supplier ANTI JOIN nation ON s_nationkey = n_nationkey"),
        ("c_nationkey", "SELECT count(*) FROM customer ANTI JOIN nation ON c_nationkey = n_nationkey"),
        ("ps_partkey", "SELECT count(*) FROM partsupp ANTI JOIN part ON ps_partkey = p_partkey"),
        ("ps_suppkey", "SELECT count(*) FROM partsupp ANTI JOIN supplier ON ps_suppkey = s_suppkey"),
        ("o_custkey", "SELECT count(*) FROM orders ANTI JOIN customer ON o_custkey = c_custkey"),
        ("l_orderkey", "SELECT count(*) FROM lineitem ANTI JOIN orders ON l_orderkey = o_orderkey"),
        ("l_partkey", "SELECT count(*) FROM lineitem ANTI JOIN part ON l_partkey = p_partkey"),
        ("l_suppkey", "SELECT count(*) FROM lineitem ANTI JOIN supplier ON l_suppkey = s_suppkey"),
        ("(l_partkey, l_suppkey)",
         "SELECT count(*) FROM lineitem ANTI JOIN partsupp ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey"),
        ("orders without lines", "SELECT count(*) FROM orders ANTI JOIN lineitem ON l_orderkey = o_orderkey"),
        ("parts without suppliers", "SELECT count(*) FROM part ANTI JOIN partsupp ON ps_partkey = p_partkey"),
    ]:
        zero(con, what, sql)
    # Lines are numbered 1..n within their order, 1 to 7 of them.
    zero(con, "line numbers", """
        SELECT count(*) FROM (SELECT l_orderkey, count(*) n, min(l_linenumber) lo, max(l_linenumber) hi
                              FROM lineitem GROUP BY 1)
        WHERE lo <> 1 OR hi <> n OR n > 7""")
    # Every line's supplier pair spans the four suppliers of parts: most
    # pairs are drawn at least once at these sizes.
    drawn = one(con, "SELECT count(DISTINCT (l_partkey, l_suppkey)) FROM lineitem")
    assert drawn > 0.5 * counts["partsupp"], drawn


def check_values(con, sf):
    s = round(10_000 * sf)
    c = round(150_000 * sf)
    # Nations and regions.
    got = con.execute("SELECT n_name, n_regionkey FROM nation ORDER BY n_nationkey").fetchall()
    assert got == NATIONS
    assert [r[0] for r in con.execute("SELECT r_name FROM region ORDER BY r_regionkey").fetchall()] == [
        "AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
    # Suppliers of a part: TPC-H's formula of the part key and S.
    zero(con, "ps_suppkey formula", f"""
        SELECT count(*) FROM (SELECT ps_partkey, list_sort(list(ps_suppkey)) got FROM partsupp GROUP BY 1)
        WHERE got <> list_sort([(ps_partkey + i * ({s} // 4 + (ps_partkey - 1) // {s})) % {s} + 1
                                FOR i IN range(4)])""")
    zero(con, "partsupp domains", """
        SELECT count(*) FROM partsupp WHERE ps_availqty NOT BETWEEN 1 AND 9999
            OR ps_supplycost NOT BETWEEN 1.00 AND 1000.00 OR length(ps_comment) NOT BETWEEN 49 AND 198""")
    # Parts.
    zero(con, "p_retailprice", """
        SELECT count(*) FROM part
        WHERE p_retailprice <> (90000 + ((p_partkey // 10) % 20001) + 100 * (p_partkey % 1000)) / 100""")
    zero(con, "part strings", """
        SELECT count(*) FROM part
        WHERE NOT regexp_full_match(p_mfgr, 'Manufacturer#[1-5]')
           OR NOT regexp_full_match(p_brand, 'Brand#[1-5][1-5]')
           OR substr(p_brand, 7, 1) <> substr(p_mfgr, 14, 1)
           OR NOT regexp_full_match(p_type,
                '(STANDARD|SMALL|MEDIUM|LARGE|ECONOMY|PROMO) (ANODIZED|BURNISHED|PLATED|POLISHED|BRUSHED) (TIN|NICKEL|BRASS|STEEL|COPPER)')
           OR NOT regexp_full_match(p_container, '(SM|LG|MED|JUMBO|WRAP) (CASE|BOX|BAG|JAR|PKG|PACK|CAN|DRUM)')
           OR p_size NOT BETWEEN 1 AND 50 OR length(p_comment) NOT BETWEEN 5 AND 22""")
    assert one(con, "SELECT count(DISTINCT p_type) FROM part") == 150
    assert one(con, "SELECT count(DISTINCT p_container) FROM part") == 40
    for (name,) in con.execute("SELECT p_name FROM part USING SAMPLE 2000 ROWS").fetchall():
        words = name.split(" ")
        assert len(words) == 5 and len(set(words)) == 5 and set(words) <= COLOURS, name
    # Suppliers and customers: names, phones of their nation, balances,
    # addresses of the 64-letter alphabet, comments.
    for t, p, lo, hi in [("supplier", "s", 25, 100), ("customer", "c", 29, 116)]:
        key = "suppkey" if p == "s" else "custkey"
        zero(con, f"{t} values", f"""
            SELECT count(*) FROM {t}
            WHERE {p}_name <> '{"Supplier" if p == "s" else "Customer"}#' || lpad(CAST({p}_{key} AS VARCHAR), 9, '0')
               OR NOT regexp_full_match({p}_phone, '[0-9]{{2}}-[1-9][0-9]{{2}}-[1-9][0-9]{{2}}-[1-9][0-9]{{3}}')
               OR CAST(substr({p}_phone, 1, 2) AS INTEGER) <> {p}_nationkey + 10
               OR {p}_acctbal NOT BETWEEN -999.99 AND 9999.99
               OR NOT regexp_full_match({p}_address, '[0-9a-zA-Z, ]{{10,40}}')""")
        if p == "c":
            zero(con, "c_comment", f"SELECT count(*) FROM customer WHERE length(c_comment) NOT BETWEEN {lo} AND {hi}")
    assert one(con, "SELECT count(DISTINCT c_mktsegment) FROM customer") == 5
    zero(con, "c_mktsegment", """SELECT count(*) FROM customer
        WHERE c_mktsegment NOT IN ('AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD')""")
    # A supplier's comment is its text, or (one in 1,000) a complaint or a
    # recommendation: "Customer" then "Complaints" or "Recommends".
    zero(con, "s_comment", """SELECT count(*) FROM supplier
        WHERE length(s_comment) NOT BETWEEN 25 AND 100
          AND NOT regexp_matches(s_comment, 'Customer .*(Complaints|Recommends)$')""")
    # Orders: sparse keys, customers not a multiple of 3, dates, clerks.
    clerks = max(1, int(1000 * sf))
    zero(con, "orders values", f"""
        SELECT count(*) FROM orders
        WHERE (o_orderkey - 1) % 32 >= 8 OR o_custkey % 3 = 0 OR o_custkey NOT BETWEEN 1 AND {c}
           OR o_orderdate NOT BETWEEN DATE '1992-01-01' AND DATE '1998-08-02'
           OR NOT regexp_full_match(o_clerk, 'Clerk#[0-9]{{9}}')
           OR CAST(substr(o_clerk, 7) AS INTEGER) NOT BETWEEN 1 AND {clerks}
           OR o_orderpriority NOT IN ('1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW')
           OR o_shippriority <> 0 OR length(o_comment) NOT BETWEEN 19 AND 78""")
    assert one(con, "SELECT max(o_orderkey) FROM orders") == (round(1_500_000 * sf) - 1) // 8 * 32 + (
        round(1_500_000 * sf) - 1) % 8 + 1
    # Lines: domains, dates from their order, flags from the dates.
    zero(con, "lineitem values", """
        SELECT count(*) FROM lineitem JOIN orders ON l_orderkey = o_orderkey
        WHERE l_quantity NOT BETWEEN 1 AND 50 OR l_quantity <> round(l_quantity)
           OR l_discount NOT BETWEEN 0 AND 0.10 OR l_tax NOT BETWEEN 0 AND 0.08
           OR l_shipdate - o_orderdate NOT BETWEEN 1 AND 121
           OR l_commitdate - o_orderdate NOT BETWEEN 30 AND 90
           OR l_receiptdate - l_shipdate NOT BETWEEN 1 AND 30
           OR l_returnflag <> CASE WHEN l_receiptdate <= DATE '1995-06-17' THEN l_returnflag ELSE 'N' END
           OR (l_receiptdate <= DATE '1995-06-17' AND l_returnflag NOT IN ('R', 'A'))
           OR l_linestatus <> CASE WHEN l_shipdate > DATE '1995-06-17' THEN 'O' ELSE 'F' END
           OR l_shipinstruct NOT IN ('DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN')
           OR l_shipmode NOT IN ('REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB')
           OR length(l_comment) NOT BETWEEN 10 AND 43""")
    zero(con, "l_extendedprice", """
        SELECT count(*) FROM lineitem JOIN part ON l_partkey = p_partkey
        WHERE l_extendedprice <> l_quantity * p_retailprice""")
    # An order's total and status come from its lines.
    zero(con, "o_totalprice and o_orderstatus", """
        SELECT count(*) FROM orders JOIN (
            SELECT l_orderkey,
                   CAST(sum(l_extendedprice * (1 + l_tax) * (1 - l_discount)) AS DECIMAL(15, 2)) total,
                   CASE WHEN bool_and(l_linestatus = 'F') THEN 'F'
                        WHEN bool_and(l_linestatus = 'O') THEN 'O' ELSE 'P' END status
            FROM lineitem GROUP BY 1) l ON l.l_orderkey = o_orderkey
        WHERE o_totalprice <> total OR o_orderstatus <> status""")
    statuses = dict(con.execute("SELECT o_orderstatus, count(*) FROM orders GROUP BY 1").fetchall())
    assert set(statuses) == {"F", "O", "P"}, statuses
    # Customers whose key is a multiple of 3 never order: a third.
    idle = one(con, "SELECT count(*) FROM customer ANTI JOIN orders ON o_custkey = c_custkey")
    assert idle >= c // 3


def check_queries(con):
    """Joins of TPC-H's shapes (written from its query definitions)."""
    # Pricing summary: four (flag, status) groups, adding up to every line.
    groups = con.execute("""
        SELECT l_returnflag, l_linestatus, sum(l_quantity), count(*)
        FROM lineitem WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL 90 DAY
        GROUP BY ALL ORDER BY ALL""").fetchall()
    assert [(g[0], g[1]) for g in groups] == [("A", "F"), ("N", "F"), ("N", "O"), ("R", "F")]
    # Local supplier volume: customer and supplier of one nation, per region.
    volume = con.execute("""
        SELECT n_name, sum(l_extendedprice * (1 - l_discount)) revenue
        FROM customer, orders, lineitem, supplier, nation, region
        WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
          AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
          AND r_name = 'ASIA' AND o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01'
        GROUP BY n_name ORDER BY revenue DESC""").fetchall()
    assert {v[0] for v in volume} <= {"INDIA", "INDONESIA", "JAPAN", "CHINA", "VIETNAM"}
    assert volume
    # Product type profit: a colour's parts, every line's supply cost found.
    profit = con.execute("""
        SELECT n_name, year(o_orderdate) AS y, count(*), sum(l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity)
        FROM part, supplier, lineitem, partsupp, orders, nation
        WHERE s_suppkey = l_suppkey AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey
          AND p_partkey = l_partkey AND o_orderkey = l_orderkey AND s_nationkey = n_nationkey
          AND p_name LIKE '%green%'
        GROUP BY ALL""").fetchall()
    green_lines = one(con, "SELECT count(*) FROM lineitem JOIN part ON l_partkey = p_partkey WHERE p_name LIKE '%green%'")
    assert sum(p[2] for p in profit) == green_lines > 0
    # Customer distribution: a left join keeps every customer.
    dist = con.execute("""
        SELECT c_count, count(*) FROM (
            SELECT c_custkey, count(o_orderkey) c_count
            FROM customer LEFT OUTER JOIN orders ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%'
            GROUP BY c_custkey) GROUP BY c_count""").fetchall()
    assert sum(d[1] for d in dist) == one(con, "SELECT count(*) FROM customer")
    assert dict(dist).get(0, 0) >= one(con, "SELECT count(*) FROM customer") // 3
    # Shipping priority: unshipped orders of a segment, by revenue.
    top = con.execute("""
        SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) revenue, o_orderdate, o_shippriority
        FROM customer, orders, lineitem
        WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
          AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'
        GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10""").fetchall()
    assert len(top) == 10
    # Large volume customers: orders' quantities summed from their lines.
    big = one(con, """
        SELECT count(*) FROM orders WHERE o_orderkey IN (
            SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 250)""")
    assert big > 0


@pytest.mark.parametrize(("scale", "parts"), [(0.01, 1), (0.01, 3), (0.1, 2), (1, 1)])
def test_tpch_keys_resolve_and_values_follow_the_specification(strata_bin, tmp_path, scale, parts):
    out = tmp_path / "tpch"
    generate(strata_bin, out, scale, parts)
    con = connect(out)
    check_keys(con, scale)
    check_values(con, scale)
    check_queries(con)


def test_tpch_in_parts_is_the_whole(strata_bin, tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    generate(strata_bin, whole, 0.01, 1)
    generate(strata_bin, split, 0.01, 4)
    con = duckdb.connect()
    for t in TABLES:
        diff = one(con, f"""SELECT count(*) FROM (
            (SELECT * FROM '{whole}/{t}/*.parquet' EXCEPT ALL SELECT * FROM '{split}/{t}/*.parquet')
            UNION ALL
            (SELECT * FROM '{split}/{t}/*.parquet' EXCEPT ALL SELECT * FROM '{whole}/{t}/*.parquet'))""")
        assert diff == 0, t
