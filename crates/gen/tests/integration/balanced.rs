//! Balanced references (`balanced = true`): every parent row referenced
//! equally often, within one, in an order of the field's and the seed's
//! own (row i takes parent row `((i mod P) * m + o) mod P`), whatever the
//! batching; bad combinations get one clear error naming the field.

use std::collections::HashMap;

use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
use strata_gen::{BatchGenerator, Dataset, Generator, Kind, Pick};

use crate::dataset::all_rows;

/// A region table of `parents` rows (keys 1 to `parents`, a name per
/// row) and a nation table of `rows` rows referencing it with `reference`
/// (the inside of `ref = { ... }`), then `extra` (more nation fields).
fn spec(parents: u64, rows: u64, reference: &str, extra: &str) -> String {
    format!(
        r#"name = "d"
[[tables]]
name = "region"
rows = {parents}
[[tables.fields]]
name = "r_regionkey"
type = "int64"
sequence = {{ start = 1 }}
[[tables.fields]]
name = "r_name"
type = "utf8"
template = "R{{seq}}"
[[tables]]
name = "nation"
rows = {rows}
[[tables.fields]]
name = "n_regionkey"
type = "int64"
ref = {{ {reference} }}
{extra}"#
    )
}

fn balanced(parents: u64, rows: u64) -> String {
    spec(
        parents,
        rows,
        r#"table = "region", field = "r_regionkey", balanced = true"#,
        "",
    )
}

fn ints(bs: &[RecordBatch], name: &str) -> Vec<i64> {
    bs.iter()
        .flat_map(|b| {
            let a = b.column_by_name(name).unwrap();
            let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
            assert_eq!(a.null_count(), 0, "{name}");
            a.values().to_vec()
        })
        .collect()
}

fn strs(bs: &[RecordBatch], name: &str) -> Vec<String> {
    bs.iter()
        .flat_map(|b| {
            let a = b.column_by_name(name).unwrap();
            let a = a.as_any().downcast_ref::<StringArray>().unwrap();
            a.iter().map(|v| v.unwrap().to_string()).collect::<Vec<_>>()
        })
        .collect()
}

/// The parent keys of `text`'s nation table (seed `seed`, `batch` rows a
/// batch).
fn keys(text: &str, seed: u64, batch: u64) -> Vec<i64> {
    let d = Dataset::parse(text, "d.toml").unwrap();
    ints(&all_rows(&d, "nation", seed, 1.0, batch), "n_regionkey")
}

/// How often each key of 1 to `parents` is referenced.
fn counts(keys: &[i64], parents: u64) -> Vec<usize> {
    let mut out = vec![0; parents as usize];
    for &k in keys {
        assert!((1..=parents as i64).contains(&k), "key {k}");
        out[(k - 1) as usize] += 1;
    }
    out
}

/// The multiplier and offset of a balanced order: row 0 takes row `o`,
/// row 1 row `m + o`; every row is checked against them.
fn order_of(keys: &[i64], parents: u64) -> (u64, u64) {
    let p = parents as i64;
    let o = keys[0] - 1;
    let m = (keys[1] - 1 - o).rem_euclid(p);
    for (i, &k) in keys.iter().enumerate() {
        let want = ((i as i64 % p) * m + o) % p + 1;
        assert_eq!(k, want, "row {i}: m {m}, o {o}");
    }
    let gcd = |mut a: i64, mut b: i64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    assert_eq!(gcd(m, p), 1, "m {m} is coprime with {p}");
    (m as u64, o as u64)
}

#[test]
fn every_parent_row_is_referenced_equally_often() {
    // 25 rows over 5 parents: 5 each.
    assert_eq!(counts(&keys(&balanced(5, 25), 1, 1000), 5), vec![5; 5]);
    // 1,000 rows over 7 parents: 142 or 143 each (six of 143).
    let c = counts(&keys(&balanced(7, 1000), 1, 1000), 7);
    assert!(c.iter().all(|&n| n == 142 || n == 143), "{c:?}");
    assert_eq!(c.iter().filter(|&&n| n == 143).count(), 6, "{c:?}");
    // Within one over any prefix, for sizes that divide and that do not.
    for (parents, rows, seed) in [
        (5, 25, 2),
        (7, 1000, 3),
        (1, 10, 4),
        (2, 9, 5),
        (97, 500, 6),
    ] {
        let k = keys(&balanced(parents, rows), seed, 64);
        assert_eq!(k.len() as u64, rows);
        for n in 1..=k.len() {
            let c = counts(&k[..n], parents);
            let (lo, hi) = (c.iter().min().unwrap(), c.iter().max().unwrap());
            assert!(hi - lo <= 1, "{parents} parents, first {n} rows: {c:?}");
        }
        order_of(&k, parents);
    }
}

#[test]
fn each_block_of_parent_rows_covers_every_parent_once() {
    for parents in [3, 10, 64, 101] {
        let k = keys(&balanced(parents, 2 * parents), 7, 1000);
        assert_eq!(counts(&k, parents), vec![2; parents as usize]);
        let p = parents as usize;
        assert_eq!(k[..p], k[p..], "the second block repeats the first");
        let mut first = k[..p].to_vec();
        first.sort_unstable();
        assert_eq!(first, (1..=parents as i64).collect::<Vec<_>>());
        order_of(&k, parents);
    }
}

#[test]
fn the_order_follows_the_seed_and_the_field() {
    let text = balanced(101, 101);
    let orders: Vec<(u64, u64)> = (1..=6)
        .map(|seed| order_of(&keys(&text, seed, 101), 101))
        .collect();
    for (i, a) in orders.iter().enumerate() {
        for b in &orders[i + 1..] {
            assert_ne!(a, b, "two seeds, one order: {orders:?}");
        }
    }
    // Not only the starting row moves: the multiplier is drawn too.
    let mut steps: Vec<u64> = orders.iter().map(|(m, _)| *m).collect();
    steps.sort_unstable();
    steps.dedup();
    assert!(steps.len() > 1, "{orders:?}");
    // A second field of the same table draws an order of its own.
    let two = spec(
        101,
        101,
        r#"table = "region", field = "r_regionkey", balanced = true"#,
        "[[tables.fields]]\nname = \"other\"\ntype = \"int64\"\nref = { table = \"region\", field = \"r_regionkey\", balanced = true }\n",
    );
    let d = Dataset::parse(&two, "d.toml").unwrap();
    let b = all_rows(&d, "nation", 1, 1.0, 1000);
    assert_ne!(
        order_of(&ints(&b, "n_regionkey"), 101),
        order_of(&ints(&b, "other"), 101)
    );
    // The same seed, the same order.
    assert_eq!(keys(&text, 3, 101), keys(&text, 3, 101));
}

#[test]
fn rows_do_not_depend_on_batching_or_where_generation_starts() {
    let text = balanced(13, 1000);
    let whole = keys(&text, 9, 1000);
    for batch in [1, 7, 13, 64, 999] {
        assert_eq!(keys(&text, 9, batch), whole, "batch {batch}");
    }
    // Any slice generated on its own (a part) holds the same rows.
    let d = Dataset::parse(&text, "d.toml").unwrap();
    let g = d.generator(1, 9, 1.0).unwrap();
    let mut s = Default::default();
    for (at, n) in [(0, 1), (500, 77), (987, 13), (999, 1)] {
        let b = g.generate(at, n, &mut s).unwrap();
        assert_eq!(
            ints(&[b], "n_regionkey"),
            whole[at as usize..at as usize + n]
        );
    }
    // The parent count is the run's: rows per scale follow the scale.
    let scaled = text.replace("rows = 13", "rows_per_scale = 13");
    let d = Dataset::parse(&scaled, "d.toml").unwrap();
    let b = all_rows(&d, "nation", 9, 2.0, 100);
    assert_eq!(counts(&ints(&b, "n_regionkey"), 26).iter().max(), Some(&39));
}

#[test]
fn a_draw_reads_the_balanced_row() {
    // The first field of a draw draws balanced; the second reads the same
    // row, and so does an expression.
    let text = spec(
        6,
        60,
        r#"table = "region", field = "r_regionkey", balanced = true, draw = "r""#,
        r#"[[tables.fields]]
name = "n_regionname"
type = "utf8"
ref = { table = "region", field = "r_name", draw = "r" }
[[tables.fields]]
name = "n_twice"
type = "int64"
expr = "r.r_regionkey * 2"
"#,
    );
    let d = Dataset::parse(&text, "d.toml").unwrap();
    let region = all_rows(&d, "region", 4, 1.0, 100);
    let name_of: HashMap<i64, String> = ints(&region, "r_regionkey")
        .into_iter()
        .zip(strs(&region, "r_name"))
        .collect();
    let nation = all_rows(&d, "nation", 4, 1.0, 17);
    let k = ints(&nation, "n_regionkey");
    assert_eq!(counts(&k, 6), vec![10; 6]);
    order_of(&k, 6);
    let names = strs(&nation, "n_regionname");
    let twice = ints(&nation, "n_twice");
    for i in 0..k.len() {
        assert_eq!(names[i], name_of[&k[i]], "row {i}");
        assert_eq!(twice[i], 2 * k[i], "row {i}");
    }
    // `balanced` belongs on the field that draws the row.
    let late = text.replace(
        r#"field = "r_name", draw = "r""#,
        r#"field = "r_name", draw = "r", balanced = true"#,
    );
    assert_eq!(
        error_of(&late),
        "d.toml:20: field `nation.n_regionname`: draw `r`: field `n_regionkey` draws its row; give `zipf`, `weight` or `balanced` to that field, not to the fields that read the same row"
    );
}

#[test]
fn balanced_false_is_the_uniform_pick_and_check_describes_it() {
    let pick = |reference: &str| {
        let d = Dataset::parse(&spec(5, 10, reference, ""), "d.toml").unwrap();
        let Kind::Scalar { generator, .. } = &d.tables[1].spec.fields[0].kind else {
            panic!("a leaf");
        };
        let Generator::Reference(r) = generator else {
            panic!("a reference");
        };
        (r.pick.clone(), generator.to_string())
    };
    let base = r#"table = "region", field = "r_regionkey""#;
    assert_eq!(
        pick(&format!("{base}, balanced = true")),
        (
            Pick::Balanced,
            "reference to region.r_regionkey, rows balanced".to_string()
        )
    );
    assert_eq!(
        pick(&format!("{base}, balanced = false")),
        pick(base),
        "false is the default"
    );
    assert_eq!(pick(base).0, Pick::Uniform);
    // `false` beside another pick is that pick.
    assert_eq!(
        pick(&format!("{base}, balanced = false, zipf = {{ s = 1.1 }}")).0,
        Pick::Zipf { s: 1.1 }
    );
    // The same rows as without it.
    let uniform = spec(5, 200, base, "");
    let off = spec(5, 200, &format!("{base}, balanced = false"), "");
    assert_eq!(keys(&uniform, 2, 64), keys(&off, 2, 64));
    assert_ne!(keys(&uniform, 2, 64), keys(&balanced(5, 200), 2, 64));
}

fn error_of(text: &str) -> String {
    Dataset::parse(text, "d.toml").unwrap_err().to_string()
}

#[test]
fn bad_balanced_references_name_the_field() {
    let base = r#"table = "region", field = "r_regionkey""#;
    let bad = |extra: &str| error_of(&spec(5, 10, &format!("{base}, {extra}"), ""));
    let cases = [
        (
            "balanced = true, zipf = { s = 1.1 }",
            "d.toml:19: field `nation.n_regionkey`: `ref` takes `balanced` (every row referenced equally often) or `zipf`, not both",
        ),
        (
            r#"balanced = true, weight = "r_regionkey""#,
            "d.toml:19: field `nation.n_regionkey`: `ref` takes `balanced` (every row referenced equally often) or `weight`, not both",
        ),
        (
            r#"via = "n_other", balanced = true"#,
            "d.toml:19: field `nation.n_regionkey`: `ref` takes `balanced` (every row referenced equally often) or `via`, not both",
        ),
        (
            r#"balanced = "yes""#,
            "d.toml:19: field `nation.n_regionkey`: `balanced` must be true or false, not a string",
        ),
        (
            "balanced = 1",
            "d.toml:19: field `nation.n_regionkey`: `balanced` must be true or false, not an integer",
        ),
    ];
    for (extra, want) in cases {
        assert_eq!(bad(extra), want, "{extra}");
    }
}

#[test]
fn balanced_references_join_tables_of_numbered_rows() {
    let children = r#"
[[tables]]
name = "city"
children_of = "nation"
count = 2
[[tables.fields]]
name = "c_key"
type = "int64"
ref = { table = "region", field = "r_regionkey", balanced = true }
"#;
    // Rows of a child table are numbered per parent row.
    let text = balanced(5, 10) + children;
    assert_eq!(
        error_of(&text),
        "d.toml:25: field `city.c_key`: `balanced`: `city` is a child table (rows per `nation` row), numbered by parent row rather than one after another; a balanced reference is a field of a table with rows of its own"
    );
    // A child table's rows are reached through their parent's.
    let to_child = balanced(5, 10)
        + &children.replace(
            r#"ref = { table = "region", field = "r_regionkey", balanced = true }"#,
            r#"sequence = { start = 1 }"#,
        )
        + r#"
[[tables]]
name = "street"
rows = 4
[[tables.fields]]
name = "s_city"
type = "int64"
ref = { table = "city", field = "c_key", balanced = true }
"#;
    assert_eq!(
        error_of(&to_child),
        "d.toml:33: field `street.s_city`: `balanced`: `city` is a child table (rows per `nation` row), whose rows are reached through a row of its parent; a balanced reference draws from a table with rows of its own (`rows`, `rows_per_scale`, `calendar`)"
    );
    // List items are several per row.
    let listed = spec(
        5,
        10,
        r#"table = "region", field = "r_regionkey""#,
        r#"[[tables.fields]]
name = "n_keys"
type = "list"
length = 2
[tables.fields.item]
type = "int64"
ref = { table = "region", field = "r_regionkey", balanced = true }
"#,
    );
    assert_eq!(
        error_of(&listed),
        "d.toml:24: field `nation.n_keys.item`: `balanced` gives each row of the table one parent row in turn; a list item or map entry (any number per row) cannot be balanced"
    );
    // Inside a struct, one value per row: balanced.
    let nested = spec(
        4,
        40,
        r#"table = "region", field = "r_regionkey""#,
        r#"[[tables.fields]]
name = "n_detail"
type = "struct"
[[tables.fields.fields]]
name = "key"
type = "int64"
ref = { table = "region", field = "r_regionkey", balanced = true }
"#,
    );
    let d = Dataset::parse(&nested, "d.toml").unwrap();
    let b = all_rows(&d, "nation", 1, 1.0, 9);
    let inner: Vec<i64> = b
        .iter()
        .flat_map(|b| {
            let s = b.column_by_name("n_detail").unwrap();
            let s = s
                .as_any()
                .downcast_ref::<arrow_array::StructArray>()
                .unwrap();
            let k = s.column_by_name("key").unwrap();
            k.as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(counts(&inner, 4), vec![10; 4]);
    order_of(&inner, 4);
}

#[test]
fn the_schema_refuses_what_the_parser_refuses() {
    let schema: serde_json::Value = serde_json::from_str(&strata_gen::json_schema()).unwrap();
    let reference = &schema["$defs"]["reference"];
    assert_eq!(reference["properties"]["balanced"]["type"], "boolean");
    let refused: Vec<&serde_json::Value> = reference["not"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["required"][0] == "balanced")
        .collect();
    let others: Vec<&str> = refused
        .iter()
        .map(|c| c["required"][1].as_str().unwrap())
        .collect();
    assert_eq!(others, ["zipf", "weight", "via"]);
    // Only `balanced = true`: false is the default pick beside any other.
    for c in refused {
        assert_eq!(c["properties"]["balanced"]["const"], true, "{c}");
    }
}
