"""`strata infer` on TPC-H SF 0.1 from tpchgen-cli (the pip package): the
keys it finds, the distance of data generated from its spec to the
original, joins over the detected keys, and the CSV reader against
pyarrow's."""

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

# TPC-H's primary keys and its nine single-column foreign keys.
PRIMARY = {
    "region": "r_regionkey",
    "nation": "n_nationkey",
    "supplier": "s_suppkey",
    "part": "p_partkey",
    "customer": "c_custkey",
    "orders": "o_orderkey",
    "partsupp": "ps_partkey, ps_suppkey",
    "lineitem": "l_orderkey, l_linenumber",
}
FOREIGN = {
    ("lineitem", "l_orderkey"): "orders.o_orderkey",
    ("lineitem", "l_partkey"): "part.p_partkey",
    ("lineitem", "l_suppkey"): "supplier.s_suppkey",
    ("partsupp", "ps_partkey"): "part.p_partkey",
    ("partsupp", "ps_suppkey"): "supplier.s_suppkey",
    ("orders", "o_custkey"): "customer.c_custkey",
    ("customer", "c_nationkey"): "nation.n_nationkey",
    ("supplier", "s_nationkey"): "nation.n_nationkey",
    ("nation", "n_regionkey"): "region.r_regionkey",
}


@pytest.fixture(scope="module")
def tpch(tmp_path_factory):
    """TPC-H SF 0.1 as tpchgen-cli writes it (one Parquet file per table)."""
    out = tmp_path_factory.mktemp("tpch")
    cli = shutil.which("tpchgen-cli") or str(Path(sys.executable).parent / "tpchgen-cli")
    subprocess.run([cli, "parquet", "-s", "0.1", "--output-dir", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def inferred(strata_bin, tpch, tmp_path_factory):
    d = tmp_path_factory.mktemp("inferred")
    spec, report = d / "tpch.toml", d / "report.json"
    subprocess.run(
        [strata_bin, "infer", str(tpch), "-o", str(spec), "--report", str(report), "--sample", "all"],
        check=True,
    )
    return spec, json.loads(report.read_text())


def test_infer_finds_tpch_keys(inferred):
    _, report = inferred
    rel = report["relationships"]
    primary = {r["table"]: r["column"] for r in rel if r["kind"] == "primary key"}
    assert primary == PRIMARY
    foreign = {(r["table"], r["column"]): r["target"] for r in rel if r["kind"] == "foreign key"}
    for k, v in FOREIGN.items():
        assert foreign.get(k) == v, (k, foreign.get(k))
    wrong = {k: v for k, v in foreign.items() if FOREIGN.get(k) != v}
    assert len(wrong) <= 3, wrong
    # Every relationship carries its evidence.
    assert all(r["evidence"] for r in rel)
    children = {r["table"]: r["target"] for r in rel if r["kind"] == "children"}
    assert children == {"lineitem": "orders.o_orderkey", "partsupp": "part.p_partkey"}


def test_generated_tpch_is_within_bounds_and_joins(strata_bin, tpch, inferred, tmp_path):
    spec, _ = inferred
    out = tmp_path / "gen"
    subprocess.run([strata_bin, "generate", "-q", "--spec", str(spec), "--output-dir", str(out)], check=True)
    cmp_json = tmp_path / "compare.json"
    r = subprocess.run(
        [strata_bin, "infer", "--compare", str(tpch), str(out), "--json", str(cmp_json), "--sample", "all"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    c = json.loads(cmp_json.read_text())
    for col in c["columns"]:
        # Numbers, dates and categories: within the bounds outright, in
        # every table (the 5- and 25-row ones too: their tables are
        # stratified and their references balanced).
        if col["statistic"] in ("ks", "tv"):
            assert col["distance"] <= 0.05, col
            assert abs(col["null_rates"][0] - col["null_rates"][1]) <= 0.01, col
        elif col["bounded"]:
            assert col["distance"] <= max(0.05, col["noise"]), col
    assert all(k["missing"] == 0 for k in c["keys"]) and len(c["keys"]) == 9
    rows = dict((t, (a, b)) for t, a, b in c["rows"])
    for t, (a, b) in rows.items():
        assert abs(a - b) <= 0.01 * a, (t, a, b)
    # Joins over the detected keys return rows.
    con = duckdb.connect()
    for t in PRIMARY:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{out / t}/*.parquet')")
    n = con.execute(
        "SELECT count(*) FROM lineitem JOIN orders ON l_orderkey = o_orderkey "
        "JOIN customer ON o_custkey = c_custkey JOIN nation ON c_nationkey = n_nationkey "
        "JOIN region ON n_regionkey = r_regionkey JOIN part ON l_partkey = p_partkey "
        "JOIN supplier ON l_suppkey = s_suppkey"
    ).fetchone()[0]
    assert n == rows["lineitem"][1]
    assert con.execute(
        "SELECT count(*) FROM partsupp JOIN part ON ps_partkey = p_partkey JOIN supplier ON ps_suppkey = s_suppkey"
    ).fetchone()[0] == rows["partsupp"][1]


def test_csv_inference_matches_pyarrows_reading(strata_bin, tpch, tmp_path):
    t = pq.read_table(tpch / "orders.parquet")
    t = t.cast(pa.schema([pa.field(f.name, pa.string() if f.type == pa.string_view() else f.type) for f in t.schema]))
    csv = tmp_path / "orders.csv"
    pacsv.write_csv(t, csv)
    spec = tmp_path / "orders.toml"
    subprocess.run([strata_bin, "infer", str(csv), "-o", str(spec)], check=True)
    out = tmp_path / "gen"
    subprocess.run([strata_bin, "generate", "-q", "--spec", str(spec), "--output-dir", str(out)], check=True)
    gen_csv = tmp_path / "orders_gen.csv"
    pacsv.write_csv(pq.read_table(out), gen_csv)
    r = subprocess.run([strata_bin, "infer", "--compare", str(csv), str(gen_csv)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    # The CSV's rows, as pyarrow reads them.
    assert f"rows orders: {t.num_rows} original, {t.num_rows} generated" in r.stdout


def test_bad_inputs_are_clear_errors(strata_bin, tmp_path):
    bad = tmp_path / "t.parquet"
    bad.write_bytes(b"not parquet at all")
    r = subprocess.run([strata_bin, "infer", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and "t.parquet" in r.stderr and "panicked" not in r.stderr, r.stderr
    spec = tmp_path / "exists.toml"
    spec.write_text("keep")
    r = subprocess.run([strata_bin, "infer", str(bad), "-o", str(spec)], capture_output=True, text=True)
    assert r.returncode == 2 and "exists" in r.stderr
    assert spec.read_text() == "keep"
    r = subprocess.run([strata_bin, "infer", "--compare", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and "two inputs" in r.stderr


@pytest.mark.skipif("STRATA_S3_ENDPOINT" not in os.environ, reason="no S3 test server configured (scripts/test starts one)")
def test_infer_reads_an_s3_prefix_as_it_reads_a_directory(strata_bin, tmp_path):
    """The tpch preset written to S3 and to a directory: the same tables,
    keys and spec (all but the comment naming the input)."""
    local = tmp_path / "local"
    remote = f"s3://{os.environ['STRATA_S3_BUCKET']}/infer-{uuid.uuid4().hex[:8]}"
    for out in (str(local), remote):
        subprocess.run(
            [strata_bin, "generate", "-q", "--preset", "tpch", "--scale", "0.01", "--output-dir", out], check=True
        )
    specs = []
    for src in (str(local), remote + "/"):
        r = subprocess.run([strata_bin, "infer", src], check=True, capture_output=True, text=True)
        specs.append("\n".join(line for line in r.stdout.splitlines() if not line.startswith("#   ")))
    assert specs[0] == specs[1]
    assert specs[0].count("[[tables]]") == 8
    assert 'children_of = "orders"' in specs[0]
