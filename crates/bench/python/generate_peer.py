"""DuckDB generating a `contacts`-shaped table for `strata bench pipeline`:
`COPY (SELECT ... FROM range(N)) TO ... (FORMAT parquet)` with the preset's
distributions (a name of a first and a last name, null 20% of the time; a
list of phone entries, null 40% of the time, else 1 entry 45%, 2 10%,
3 to 5 5%; each entry a number `+91-99-NNNNNNNN` and a phone type Mobile
55% / Work 35% / Home 10%, either null now and then). The name lists come
from strata's own tables in the request. Request on stdin, samples on
stdout."""

import json
import os
import sys
import tempfile
import time


def quoted(names):
    return "[" + ", ".join("'" + n.replace("'", "''") + "'" for n in names) + "]"


def query(req, target):
    first, last = quoted(req["first_names"]), quoted(req["last_names"])
    nf, nl = len(req["first_names"]), len(req["last_names"])
    n = req["rows"]
    codec = req["codec"]
    return f"""
COPY (
  SELECT
    CASE WHEN random() < 0.8 THEN
      list_extract({first}, 1 + floor(random() * {nf})::INT) || ' ' ||
      list_extract({last}, 1 + floor(random() * {nl})::INT)
    END AS name,
    CASE WHEN r < 0.40 THEN NULL ELSE
      list_transform(
        list_transform(
          range(CASE WHEN r < 0.85 THEN 1 WHEN r < 0.95 THEN 2 ELSE 3 + floor(random() * 3)::INT END),
          lambda k: {{'k': k, 'u': random(), 'v': random()}}
        ),
        lambda e: {{
          'number': CASE WHEN e.u < 0.95 THEN '+91-99-' || lpad((i * 5 + e.k)::VARCHAR, 8, '0') END,
          'phone_type': CASE WHEN e.u < 0.90 OR (e.u >= 0.95 AND e.u < 0.99) THEN
            CASE WHEN e.v < 0.55 THEN 'Mobile' WHEN e.v < 0.90 THEN 'Work' ELSE 'Home' END END
        }}
      )
    END AS phones
  FROM (SELECT range AS i, random() AS r FROM range({n}))
) TO '{target}' (FORMAT parquet, COMPRESSION {codec})
"""


def main():
    req = json.load(sys.stdin)
    try:
        import duckdb
    except ImportError as e:
        print(json.dumps({"unavailable": f"duckdb is not installed ({e})"}))
        return
    samples = []
    with tempfile.TemporaryDirectory(dir=req["dir"]) as out:
        target = os.path.join(out, "contacts.parquet")
        sql = query(req, target)
        for i in range(req["warmup"] + req["runs"]):
            con = duckdb.connect()
            con.execute(f"SET threads TO {req['threads']}")
            con.execute("SET enable_progress_bar = false")
            c0, t0 = time.process_time(), time.perf_counter()
            con.execute(sql)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            rows = con.execute(f"SELECT count(*) FROM read_parquet('{target}')").fetchone()[0]
            if rows != req["rows"]:
                raise SystemExit(f"DuckDB wrote {rows} rows, not {req['rows']}")
            os.remove(target)
            con.close()
            if i >= req["warmup"]:
                samples.append({"wall": wall, "cpu": cpu})
    print(json.dumps({"cases": {req["name"]: samples}}))


main()
