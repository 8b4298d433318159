"""Iceberg and Delta tables written to S3 (the loopback moto server that
scripts/test starts), read back by pyiceberg and deltalake with the
endpoint set: the rows equal the plain local run; appends add a snapshot
or version; each version file is claimed with a conditional put, so two
writers appending at once both land; parts staged in the bucket commit as
one snapshot; and a table holding another format is refused."""

import os
import subprocess
import uuid
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pytest

from conftest import check_same_rows

pytestmark = pytest.mark.skipif(
    "STRATA_S3_ENDPOINT" not in os.environ, reason="no S3 test server configured (scripts/test starts one)"
)

ROWS = 20000


def run(strata_bin, *args, check=True):
    return subprocess.run([strata_bin, *args], check=check, capture_output=True, text=True)


def prefix():
    return f"s3://{os.environ['STRATA_S3_BUCKET']}/tables-{uuid.uuid4().hex[:8]}"


def s3_properties():
    return {
        "s3.endpoint": os.environ["STRATA_S3_ENDPOINT"],
        "s3.access-key-id": os.environ["AWS_ACCESS_KEY_ID"],
        "s3.secret-access-key": os.environ["AWS_SECRET_ACCESS_KEY"],
        "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
    }


def delta_options():
    return {
        "AWS_ENDPOINT_URL": os.environ["STRATA_S3_ENDPOINT"],
        "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
        "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"),
        "AWS_ALLOW_HTTP": "true",
        "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
    }


@pytest.fixture(scope="module")
def plain(strata_bin, tmp_path_factory):
    out = tmp_path_factory.mktemp("plain")
    for seed in (1, 2):
        run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", str(ROWS), "--seed", str(seed),
            "--output-dir", str(out / str(seed)))
    return out


def same(table, plain, seeds, what):
    con = duckdb.connect()
    con.register("t", table)
    sources = " UNION ALL ".join(f"SELECT * FROM read_parquet('{plain}/{s}/*.parquet')" for s in seeds)
    cols = ", ".join(f'"{c}"' for c in table.column_names)
    check_same_rows(con, f"SELECT {cols} FROM t", f"SELECT {cols} FROM ({sources})", what)


def iceberg_table(location):
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(location, properties=s3_properties())


def test_an_iceberg_table_in_s3_reads_back_and_appends(strata_bin, plain):
    base = prefix()
    args = ["generate", "--preset", "lineitem", "--target-records", str(ROWS), "--format", "iceberg",
            "--output-dir", base]
    done = run(strata_bin, *args, "--seed", "1")
    table = f"{base}/lineitem"
    assert f"iceberg table {table}: version 1," in done.stdout, done.stdout
    t = iceberg_table(f"{table}/metadata/v1.metadata.json")
    assert t.metadata.location == table
    files = list(t.scan().plan_files())
    assert files and all(f.file.file_path.startswith(f"{table}/data/") for f in files)
    same(t.scan().to_arrow(), plain, [1], "iceberg in s3")
    run(strata_bin, *args, "--seed", "2")
    t = iceberg_table(f"{table}/metadata/v2.metadata.json")
    assert len(t.metadata.snapshots) == 2
    same(t.scan().to_arrow(), plain, [1, 2], "iceberg in s3, appended")
    # The hint moved to the new version, as a Hadoop table's reader needs.
    import boto3

    s3 = boto3.client("s3", endpoint_url=os.environ["STRATA_S3_ENDPOINT"],
                      region_name=os.environ.get("AWS_REGION", "us-east-1"))
    bucket = os.environ["STRATA_S3_BUCKET"]
    key = table.removeprefix(f"s3://{bucket}/") + "/metadata/version-hint.text"
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"2"


def test_a_delta_table_in_s3_reads_back_and_appends(strata_bin, plain):
    from deltalake import DeltaTable

    base = prefix()
    args = ["generate", "--preset", "lineitem", "--target-records", str(ROWS), "--format", "delta",
            "--output-dir", base]
    done = run(strata_bin, *args, "--seed", "1")
    table = f"{base}/lineitem"
    assert f"delta table {table}: version 0," in done.stdout, done.stdout
    dt = DeltaTable(table, storage_options=delta_options())
    assert dt.version() == 0
    same(dt.to_pyarrow_table(), plain, [1], "delta in s3")
    run(strata_bin, *args, "--seed", "2")
    dt = DeltaTable(table, storage_options=delta_options())
    assert dt.version() == 1
    assert [h["operationParameters"]["mode"] for h in dt.history()] == ["Append", "ErrorIfExists"]
    same(dt.to_pyarrow_table(), plain, [1, 2], "delta in s3, appended")


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_concurrent_appends_in_s3_all_land(strata_bin, fmt):
    # The version files are claimed with If-None-Match: *, so writers that
    # race for one version build on the winner's: none is lost.
    base = prefix()
    n, rows = 6, 1000

    def append(i):
        return run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", str(rows),
                   "--seed", str(100 + i), "--format", fmt, "--output-dir", base)

    append(0)
    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(append, range(1, n)))
    table = f"{base}/lineitem"
    if fmt == "delta":
        from deltalake import DeltaTable

        dt = DeltaTable(table, storage_options=delta_options())
        assert dt.version() == n - 1
        assert dt.to_pyarrow_table().num_rows == n * rows
    else:
        from pyiceberg.table import StaticTable

        t = StaticTable.from_metadata(f"{table}/metadata/v{n}.metadata.json", properties=s3_properties())
        assert len(t.metadata.snapshots) == n
        assert t.scan().to_arrow().num_rows == n * rows


def test_parts_staged_in_s3_commit_as_one_snapshot(strata_bin, plain):
    base = prefix()
    for i in (1, 2, 3, 4):
        run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", str(ROWS), "--seed", "1",
            "--format", "iceberg", "--output-dir", base, "--parts", "4", "--part", str(i))
    table = f"{base}/lineitem"
    done = run(strata_bin, "table", "commit", table)
    assert f"iceberg table {table}: version 1," in done.stdout, done.stdout
    t = iceberg_table(f"{table}/metadata/v1.metadata.json")
    assert len(t.metadata.snapshots) == 1
    same(t.scan().to_arrow(), plain, [1], "parts in s3")
    again = run(strata_bin, "table", "commit", table, check=False)
    assert again.returncode != 0 and "no staged parts" in again.stderr, again.stderr


def test_a_layout_or_another_format_in_s3_is_refused(strata_bin):
    base = prefix()
    run(strata_bin, "generate", "-q", "--preset", "contacts", "--target-records", "100", "--format", "iceberg",
        "--output-dir", base)
    other = run(strata_bin, "generate", "-q", "--preset", "contacts", "--target-records", "100", "--format", "delta",
                "--output-dir", base, check=False)
    assert other.returncode != 0 and "holds an Iceberg table" in other.stderr, other.stderr
    laid = run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", "100", "--format", "delta",
               "--output-dir", prefix(), "--partition-by", "l_returnflag", check=False)
    assert laid.returncode != 0 and "writes tables without a layout" in laid.stderr, laid.stderr


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_clean_removes_orphan_objects(strata_bin, plain, fmt):
    import boto3

    base = prefix()
    run(strata_bin, "generate", "-q", "--preset", "lineitem", "--target-records", str(ROWS), "--seed", "1",
        "--format", fmt, "--output-dir", base)
    table = f"{base}/lineitem"
    bucket = os.environ["STRATA_S3_BUCKET"]
    s3 = boto3.client("s3", endpoint_url=os.environ["STRATA_S3_ENDPOINT"],
                      region_name=os.environ.get("AWS_REGION", "us-east-1"))
    key = table.removeprefix(f"s3://{bucket}/") + ("/data" if fmt == "iceberg" else "") + "/lineitem-dead_0.parquet"
    s3.put_object(Bucket=bucket, Key=key, Body=b"orphan")
    done = run(strata_bin, "table", "clean", table, "--older-than", "0")
    assert f"{fmt} table {table}: removed 1 unreferenced files (6 bytes)" in done.stdout, done.stdout
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix=key)
    if fmt == "delta":
        from deltalake import DeltaTable

        same(DeltaTable(table, storage_options=delta_options()).to_pyarrow_table(), plain, [1], "cleaned")
    else:
        same(iceberg_table(f"{table}/metadata/v1.metadata.json").scan().to_arrow(), plain, [1], "cleaned")


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_compaction_of_a_table_in_s3_keeps_its_rows(strata_bin, plain, fmt):
    # Two appends of overlapping keys, merged by `strata compact table`
    # straight from and into the bucket: the same rows, depth 1 after.
    base = prefix()
    args = ["generate", "-q", "--preset", "lineitem", "--target-records", str(ROWS), "--format", fmt,
            "--output-dir", base]
    for seed in ("1", "2"):
        run(strata_bin, *args, "--seed", seed)
    table = f"{base}/lineitem"
    before = run(strata_bin, "compact", "table", table, "--sort-by", "l_orderkey", "--budget-mb", "64", "--dry-run")
    assert "overlap depth by `l_orderkey`: max 1," not in before.stdout, before.stdout
    done = run(strata_bin, "compact", "table", table, "--sort-by", "l_orderkey", "--budget-mb", "64")
    assert "compacted:" in done.stdout, done.stdout
    after = run(strata_bin, "compact", "table", table, "--sort-by", "l_orderkey", "--budget-mb", "64", "--dry-run")
    assert "overlap depth by `l_orderkey`: max 1," in after.stdout, after.stdout
    if fmt == "iceberg":
        t = iceberg_table(f"{table}/metadata/v3.metadata.json")
        assert t.metadata.snapshots[-1].summary.operation.value == "replace"
        rows = t.scan().to_arrow()
    else:
        from deltalake import DeltaTable

        dt = DeltaTable(table, storage_options=delta_options())
        assert dt.history()[0]["operation"] == "OPTIMIZE"
        rows = dt.to_pyarrow_table()
    same(rows, plain, [1, 2], f"{fmt} in s3, compacted")
