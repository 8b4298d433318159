"""Spec-driven datasets as pyarrow (Arrow C++) and DuckDB read them, and the
presets against the published JSON Schema of spec files."""

import json

import pytest
import subprocess
import tomllib

import duckdb
import jsonschema
import pyarrow.compute as pc
import pyarrow.parquet as pq

from conftest import ROOT

ROWS = 30_000


def test_presets_validate_against_the_json_schema(strata_bin):
    # Every preset and example spec validates; the committed file is what `strata spec schema` derives.
    schema = json.loads(subprocess.run([strata_bin, "spec", "schema"], check=True, capture_output=True).stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for name in ["contacts", "wide-u64", "events", "lineitem", "star", "orders", "tpch"]:
        text = subprocess.run([strata_bin, "spec", "show", name], check=True, capture_output=True).stdout
        doc = json.loads(json.dumps(tomllib.loads(text.decode()), default=str))
        errors = list(validator.iter_errors(doc))
        assert not errors, f"{name}: {errors[0].message}"
    examples = sorted((ROOT / "examples" / "specs").glob("*.toml"))
    assert examples
    for path in examples:
        doc = json.loads(json.dumps(tomllib.loads(path.read_text()), default=str))
        errors = list(validator.iter_errors(doc))
        assert not errors, f"{path.name}: {errors[0].message}"
    # Numbers computed once per run: row counts, bounds, starts and counts as SQL.
    scaled = {
        "name": "scaled",
        "tables": [
            {"name": "clerk", "rows": "greatest(2, round(1000 * scale()))",
             "fields": [{"name": "c", "type": "int64", "sequence": {"start": "rows('orders')", "step": 2}}]},
            {"name": "orders", "rows_per_scale": "rows('clerk') * 3",
             "fields": [{"name": "o", "type": "int64", "uniform": {"min": 1, "max": "rows('clerk')"}}]},
            {"name": "lines", "children_of": "orders", "count": "round(4 * scale())",
             "fields": [{"name": "l", "type": "int64", "constant": "1 + 2"}]},
        ],
    }
    errors = list(validator.iter_errors(scaled))
    assert not errors, errors[0].message
    assert list(validator.iter_errors({**scaled, "tables": [{**scaled["tables"][0], "rows": -1}]}))
    # The schema rejects what the checker rejects, where it can see it.
    bad = {"name": "x", "fields": [{"name": "a", "type": "int64", "constant": 1, "uniform": {"min": 1, "max": 2}}]}
    assert list(validator.iter_errors(bad))
    bad = {"name": "x", "fields": [{"name": "a", "type": "int64", "zipf": {"s": -1, "n": 3}}]}
    assert list(validator.iter_errors(bad))
    assert (ROOT / "crates" / "gen" / "spec.schema.json").read_bytes() == json.dumps(schema, indent=2).encode() + b"\n"


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_events_read_by_pyarrow_and_duckdb(generate, codec):
    out, summary = generate(
        "--preset", "events", "--target-records", str(ROWS), "--num-writers", "2", "--compression", codec, "--overwrite"
    )
    files = sorted(out.glob("*.parquet"))
    assert [f.name for f in files] == ["events_0.parquet", "events_1.parquet"]
    # With a codec, the floats of many values are BYTE_STREAM_SPLIT.
    md = pq.ParquetFile(files[0]).metadata
    split = {
        md.row_group(0).column(i).path_in_schema
        for i in range(md.num_columns)
        if "BYTE_STREAM_SPLIT" in md.row_group(0).column(i).encodings
    }
    assert split == ({"amount", "items.list.item.price"} if codec == "zstd" else set())
    table = pq.read_table(files)
    assert table.num_rows == ROWS == summary["records"]
    assert table["event_id"].to_pylist() == list(range(1, ROWS + 1))
    kinds = table["kind"].combine_chunks().dictionary_decode()
    amount = table["amount"]
    purchase = pc.equal(kinds, "purchase")
    refund = pc.equal(kinds, "refund")
    other = pc.invert(pc.or_(purchase, refund))
    assert pc.all(pc.is_null(pc.filter(amount, other))).as_py()
    assert pc.min(pc.filter(amount, purchase)).as_py() >= 0.5
    assert pc.max(pc.filter(amount, refund)).as_py() <= -0.5

    glob = str(out / "*.parquet")
    con = duckdb.connect()
    rows = con.execute(f"select count(*), count(distinct event_id), count(amount) from '{glob}'").fetchone()
    assert rows[0] == rows[1] == ROWS
    assert rows[2] == pc.sum(pc.or_(purchase, refund)).as_py()
    # Nested: line items only where the kind carries them; map keys distinct.
    (bad_items,) = con.execute(
        f"select count(*) from '{glob}' where (items is not null) != (kind in ('add_to_cart', 'purchase', 'refund'))"
    ).fetchone()
    assert bad_items == 0
    (dupes,) = con.execute(
        f"""select count(*) from (
              select unnest(items).attributes as a from '{glob}')
            where len(map_keys(a)) != len(list_distinct(map_keys(a)))"""
    ).fetchone()
    assert dupes == 0
    (heights,) = con.execute(f"select count(*) from '{glob}' where device.screen.height not between 480 and 2160").fetchone()
    assert heights == 0


def test_wide_u64_reads_back_as_fifty_uint64_columns(generate):
    out, _ = generate("--preset", "wide-u64", "--target-records", "20000", "--num-writers", "1")
    table = pq.read_table(sorted(out.glob("*.parquet")))
    assert table.num_columns == 50
    assert all(str(t) == "uint64" for t in table.schema.types)
    assert all(c.null_count == 0 for c in table.columns)
    con = duckdb.connect()
    (top,) = con.execute(f"select avg((c07 >= 9223372036854775808)::int) from '{out}/*.parquet'").fetchone()
    assert 0.47 < top < 0.53


TYPES_SPEC = """
name = "types"
[[fields]]
name = "id"
type = "utf8"
uuid = true
[[fields]]
name = "raw"
type = "fixed_size_binary(16)"
uuid = true
null_rate = 0.1
[[fields]]
name = "opens"
type = "time64(us)"
uniform = { min = 08:00:00, max = 18:30:00 }
[[fields]]
name = "t32"
type = "time32(ms)"
uniform = { min = 00:00:00, max = 23:59:59.999 }
[[fields]]
name = "took"
type = "duration(ms)"
normal = { mean = 1500, std = 400, min = 0 }
[[fields]]
name = "wide"
type = "fixed_size_binary(70)"
weighted = { values = ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"] }
"""


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_uuids_times_and_durations_read_by_pyarrow_and_duckdb(strata_bin, tmp_path, codec):
    import datetime
    import uuid

    spec = tmp_path / "types.toml"
    spec.write_text(TYPES_SPEC)
    out = tmp_path / "out"
    subprocess.run(
        [strata_bin, "generate", "-q", "--spec", str(spec), "--target-records", "20000", "--compression", codec, "--output-dir", str(out)],
        check=True,
    )
    table = pq.read_table(out)
    assert [str(t) for t in table.schema.types] == [
        "string", "fixed_size_binary[16]", "time64[us]", "time32[ms]", "duration[ms]", "fixed_size_binary[70]",
    ]
    # strata's encoder wrote them (its name in created_by), with whole
    # fixed-length statistics that pyarrow reads (it cannot read the 64-byte
    # cut that parquet's writer makes of a 70-byte value).
    md = pq.ParquetFile(sorted(out.glob("*.parquet"))[0]).metadata
    assert md.created_by.startswith("strata version ")
    wide = md.row_group(0).column(5).statistics
    assert (wide.min, wide.max) == (b"A" * 70, b"B" * 70)
    ids = table["id"].to_pylist()
    assert len(set(ids)) == len(ids) == 20_000
    assert all(uuid.UUID(i).version == 4 for i in ids)
    raw = [r for r in table["raw"].to_pylist() if r is not None]
    assert 1_500 < 20_000 - len(raw) < 2_500
    assert all(uuid.UUID(bytes=r).version == 4 for r in raw)
    opens = table["opens"].to_pylist()
    assert min(opens) >= datetime.time(8) and max(opens) <= datetime.time(18, 30)
    con = duckdb.connect()
    glob = f"{out}/*.parquet"
    (n, lo, hi, neg) = con.execute(
        f"select count(*), min(opens), max(opens), count(*) filter (where took < 0) from '{glob}'"
    ).fetchall()[0]
    assert n == 20_000 and lo >= datetime.time(8) and hi <= datetime.time(18, 30) and neg == 0
    (same,) = con.execute(f"select count(*) from '{glob}' where id::uuid::varchar = id").fetchall()[0]
    assert same == 20_000


def test_time_zones_are_ones_pyarrow_converts(strata_bin, tmp_path):
    import datetime
    import zoneinfo

    def spec(zone):
        return (
            'name = "tz"\n\n[[fields]]\nname = "at"\n'
            f'type = "timestamp(ms, {zone})"\n'
            "sequence = { start = 2024-03-31T00:30:00Z, step = 3600000 }\n"
        )

    path = tmp_path / "tz.toml"
    for zone, tzinfo in [
        ("Europe/Paris", zoneinfo.ZoneInfo("Europe/Paris")),
        ("+05:30", datetime.timezone(datetime.timedelta(hours=5, minutes=30))),
    ]:
        path.write_text(spec(zone))
        out = tmp_path / zone.replace("/", "_")
        subprocess.run(
            [strata_bin, "generate", "-q", "--spec", str(path), "--target-records", "4", "--num-writers", "1", "--output-dir", str(out)],
            check=True,
        )
        at = pq.read_table(out)["at"].to_pylist()
        start = datetime.datetime(2024, 3, 31, 0, 30, tzinfo=datetime.timezone.utc)
        assert at == [start + datetime.timedelta(hours=h) for h in range(4)]
        assert all(t.utcoffset() == t.astimezone(tzinfo).utcoffset() for t in at)
    # A zone neither pyarrow nor Arrow knows is refused, and nothing written.
    path.write_text(spec("Mars/Olympus"))
    out = tmp_path / "mars"
    r = subprocess.run([strata_bin, "generate", "-q", "--spec", str(path), "--output-dir", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown time zone `Mars/Olympus`" in r.stderr
    assert not out.exists()
