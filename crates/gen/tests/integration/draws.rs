//! Correlated references and qualified names: sibling references with
//! one `draw` name read one row (a join on both keys misses nothing),
//! expressions read that row's fields (`ps.x`) and the parent row's
//! (`parent.x`), checked by brute force over the tables; bad draws and
//! names get one clear error.

use std::collections::HashMap;

use arrow_array::{Array, Date32Array, Decimal128Array, Int32Array, Int64Array, RecordBatch};
use strata_gen::{Dataset, Spec};

const TPCH: &str = include_str!("../../../../examples/specs/tpch_lines.toml");

fn column<A: 'static + Array + Clone>(bs: &[RecordBatch], name: &str) -> Vec<A> {
    bs.iter()
        .map(|b| {
            b.column_by_name(name)
                .unwrap()
                .as_any()
                .downcast_ref::<A>()
                .unwrap()
                .clone()
        })
        .collect()
}

fn ints(bs: &[RecordBatch], name: &str) -> Vec<i64> {
    let out: Vec<i64> = column::<Int64Array>(bs, name)
        .iter()
        .flat_map(|a| a.values().to_vec())
        .collect();
    out
}

fn decimals(bs: &[RecordBatch], name: &str) -> Vec<i128> {
    column::<Decimal128Array>(bs, name)
        .iter()
        .flat_map(|a| a.values().to_vec())
        .collect()
}

#[test]
fn one_draw_is_one_row_and_qualified_names_read_it() {
    let d = Dataset::parse(TPCH, "tpch_lines.toml").unwrap();
    let rows = |t: &str, batch: u64| crate::dataset::all_rows(&d, t, 9, 1.0, batch);
    let (ps, orders, lines) = (
        rows("partsupp", 777),
        rows("orders", 100),
        rows("lineitem", 64),
    );
    let cost: HashMap<(i64, i64), i128> = ints(&ps, "ps_partkey")
        .into_iter()
        .zip(ints(&ps, "ps_suppkey"))
        .zip(decimals(&ps, "ps_supplycost"))
        .collect();
    assert_eq!(cost.len(), 8000, "partsupp pairs are distinct");
    let date: HashMap<i64, i32> = ints(&orders, "o_orderkey")
        .into_iter()
        .zip(
            column::<Date32Array>(&orders, "o_orderdate")
                .iter()
                .flat_map(|a| a.values().to_vec()),
        )
        .collect();
    let (pk, sk, ok) = (
        ints(&lines, "l_partkey"),
        ints(&lines, "l_suppkey"),
        ints(&lines, "l_orderkey"),
    );
    let qty: Vec<i32> = column::<Int32Array>(&lines, "l_quantity")
        .iter()
        .flat_map(|a| a.values().to_vec())
        .collect();
    let (price, margin) = (
        decimals(&lines, "l_extendedprice"),
        decimals(&lines, "l_margin"),
    );
    let ship: Vec<i32> = column::<Date32Array>(&lines, "l_shipdate")
        .iter()
        .flat_map(|a| a.values().to_vec())
        .collect();
    assert!(pk.len() > 5000);
    let mut days = [0usize; 122];
    for i in 0..pk.len() {
        // The pair is one partsupp row, and the margin is that row's.
        let c = cost
            .get(&(pk[i], sk[i]))
            .unwrap_or_else(|| panic!("row {i}"));
        assert_eq!(margin[i], price[i] - i128::from(qty[i]) * c, "row {i}");
        let d = ship[i] - date[&ok[i]];
        assert!((1..=121).contains(&d), "row {i}: {d}");
        days[d as usize] += 1;
    }
    assert!(days[1..].iter().all(|&n| n > 0));
    // Batches do not change the draws.
    let again = rows("lineitem", 1000);
    assert_eq!(ints(&again, "l_suppkey"), sk);
    assert_eq!(decimals(&again, "l_margin"), margin);
}

#[test]
fn draws_inside_list_items_read_one_row_per_element() {
    let text = TPCH.to_string()
        + r#"
[[tables.fields]]
name = "l_alts"
type = "list"
length = { uniform = { min = 0, max = 4 } }
[tables.fields.item]
type = "struct"
[[tables.fields.item.fields]]
name = "pk"
type = "int64"
ref = { table = "partsupp", field = "ps_partkey", draw = "alt" }
[[tables.fields.item.fields]]
name = "sk"
type = "int64"
expr = "alt.ps_suppkey"
"#;
    let d = Dataset::parse(&text, "t.toml").unwrap();
    let ps = crate::dataset::all_rows(&d, "partsupp", 2, 1.0, 8000);
    let pairs: std::collections::HashSet<(i64, i64)> = ints(&ps, "ps_partkey")
        .into_iter()
        .zip(ints(&ps, "ps_suppkey"))
        .collect();
    let lines = crate::dataset::all_rows(&d, "lineitem", 2, 1.0, 500);
    let mut n = 0;
    for b in &lines {
        let l = b
            .column_by_name("l_alts")
            .unwrap()
            .as_any()
            .downcast_ref::<arrow_array::ListArray>()
            .unwrap();
        let s = l
            .values()
            .as_any()
            .downcast_ref::<arrow_array::StructArray>()
            .unwrap();
        let pk = s.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let sk = s.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..pk.len() {
            assert!(pairs.contains(&(pk.value(i), sk.value(i))));
            n += 1;
        }
    }
    assert!(n > 10_000, "{n}");
}

#[test]
fn bad_draws_and_qualified_names_are_refused() {
    let with = |from: &str, to: &str| {
        assert!(TPCH.contains(from), "{from}");
        let text = TPCH.replacen(from, to, 1);
        Dataset::parse(&text, "t.toml").unwrap_err().to_string()
    };
    let cases = [
        (
            r#"ref = { table = "partsupp", field = "ps_suppkey", draw = "ps" }"#,
            r#"ref = { table = "supplier", field = "s_suppkey", draw = "ps" }"#,
            "t.toml:91: field `lineitem.l_suppkey`: draw name `ps` is used with two tables: `partsupp` (field `l_partkey`) and `supplier`; a draw names one row of one table",
        ),
        (
            r#"ref = { table = "partsupp", field = "ps_suppkey", draw = "ps" }"#,
            r#"ref = { table = "partsupp", field = "ps_suppkey", draw = "ps", zipf = { s = 1.2 } }"#,
            "t.toml:91: field `lineitem.l_suppkey`: draw `ps`: field `l_partkey` draws its row; give `zipf`, `weight` or `balanced` to that field, not to the fields that read the same row",
        ),
        (
            "- l_quantity * ps.ps_supplycost",
            "- l_quantity * pz.ps_supplycost",
            "t.toml:103: field `lineitem.l_margin`: `expr` at column 32: `pz.ps_supplycost`: `pz` is neither `parent` nor the `draw` name of a sibling reference (the draw names here are ps)",
        ),
        (
            "- l_quantity * ps.ps_supplycost",
            "- l_quantity * ps.ps_cost",
            "t.toml:103: field `lineitem.l_margin`: `expr` at column 32: unknown name `ps.ps_cost`; the fields of `ps` (table `partsupp`) are ps_row, ps_partkey, ps_suppkey, ps_supplycost",
        ),
        (
            "parent.o_orderdate + uniform(1, 121)",
            "parent.o_orderdate + 'x'",
            "t.toml:107: field `lineitem.l_shipdate`: `expr` at column 1: type mismatch: date + string",
        ),
        (
            r#"expr = "ps_row // 4 + 1""#,
            r#"expr = "parent.x + 1""#,
            "t.toml:46: field `partsupp.ps_partkey`: `expr` at column 1: `parent.x` reads the row's parent row: only in the top-level fields of a child table (`children_of`)",
        ),
        (
            r#"draw = "ps" }
[[tables.fields]]
name = "l_suppkey""#,
            r#"draw = "ps.x" }
[[tables.fields]]
name = "l_suppkey""#,
            "t.toml:90: field `lineitem.l_partkey`: `draw` = \"ps.x\": a draw name is a plain name (letters, digits, `_`), and not `parent`",
        ),
        (
            r#"ref = { table = "partsupp", field = "ps_suppkey", draw = "ps" }"#,
            r#"ref = { table = "partsupp", field = "ps_suppkey", draw = "ps", via = "l_partkey" }"#,
            "t.toml:94: field `lineitem.l_suppkey`: `ref` takes `via` (the row of a sibling's reference) or `draw` (a name for the row it draws), not both",
        ),
    ];
    for (from, to, want) in cases {
        assert_eq!(with(from, to), want, "{to}");
    }
    // A cycle through an expression read only once the tables are known.
    let e = with(
        "parent.o_orderdate + uniform(1, 121)",
        "parent.o_orderdate + uniform(1, 121) + (l_receiptdate - l_receiptdate)",
    );
    assert_eq!(
        e,
        "t.toml:107: field `lineitem.l_shipdate`: `when` cases or expressions form a cycle through this field"
    );
    // An aggregate cannot be read from another row.
    let e = with(
        "expr = \"l_extendedprice - l_quantity * ps.ps_supplycost\"",
        "expr = \"l_extendedprice - l_quantity * ps.ps_supplycost + 0 * parent.o_totalprice\"",
    );
    assert!(e.contains("`parent.o_totalprice` is an aggregate of table `orders`'s children; another row cannot read it"), "{e}");
    // A plain spec has no other rows.
    let e = Spec::parse(
        "name = \"p\"\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nexpr = \"parent.a + 1\"\n",
        "p.toml",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "p.toml:2: field `a`: `expr` at column 1: `parent.a` reads the row's parent row: only in the top-level fields of a child table (`children_of`)"
    );
}

const COUNTS: &str = include_str!("../../../../tests/specs/count_cases.toml");

#[test]
fn child_counts_follow_cases_on_the_parent_row() {
    let d = Dataset::parse(COUNTS, "c.toml").unwrap();
    let orders = crate::dataset::all_rows(&d, "orders", 3, 1.0, 700);
    let keys = ints(&orders, "o_key");
    let pri: Vec<String> = column::<arrow_array::StringArray>(&orders, "o_pri")
        .iter()
        .flat_map(|a| a.iter().map(|v| v.unwrap().to_string()).collect::<Vec<_>>())
        .collect();
    let dates: Vec<i32> = column::<Date32Array>(&orders, "o_date")
        .iter()
        .flat_map(|a| a.values().to_vec())
        .collect();
    let agg = ints(&orders, "o_lines");
    for batch in [100, 3000] {
        let lines = crate::dataset::all_rows(&d, "lines", 3, 1.0, batch);
        let mut per: HashMap<i64, Vec<i32>> = HashMap::new();
        let nos: Vec<i32> = column::<Int32Array>(&lines, "l_no")
            .iter()
            .flat_map(|a| a.values().to_vec())
            .collect();
        for (k, no) in ints(&lines, "l_key").into_iter().zip(nos) {
            per.entry(k).or_default().push(no);
        }
        let (mut urgent, mut early, mut other) = (0, 0, 0);
        for i in 0..keys.len() {
            let got = per.get(&keys[i]).map_or(0, Vec::len) as i64;
            let want = if pri[i] == "URGENT" {
                urgent += 1;
                5..=7
            } else if dates[i] < 9131 {
                // 1995-01-01
                early += 1;
                0..=0
            } else {
                other += 1;
                1..=3
            };
            assert!(want.contains(&got), "order {}: {got} lines", keys[i]);
            // The parent's own count of its children agrees.
            assert_eq!(agg[i], got, "order {}", keys[i]);
            if got > 0 {
                assert_eq!(per[&keys[i]], (1..=got as i32).collect::<Vec<_>>());
            }
        }
        assert!(
            urgent > 500 && early > 300 && other > 1000,
            "{urgent} {early} {other}"
        );
    }
}

#[test]
fn bad_count_cases_are_refused() {
    let with = |from: &str, to: &str| {
        assert!(COUNTS.contains(from), "{from}");
        Dataset::parse(&COUNTS.replacen(from, to, 1), "c.toml")
            .unwrap_err()
            .to_string()
    };
    for (from, to, want) in [
        (
            "o_pri = 'URGENT'",
            "o_prio = 'URGENT'",
            "c.toml:28: table `lines`: `count` condition at column 1: unknown name `o_prio`; the fields it can read are o_key, o_pri, o_date, o_lines",
        ),
        (
            "o_pri = 'URGENT'",
            "o_key + 1",
            "c.toml:28: table `lines`: `count` condition at column 1: a condition is a boolean test (`x < 10`, `d BETWEEN DATE '1995-01-01' AND DATE '1995-12-31'`), not an integer",
        ),
        (
            "o_pri = 'URGENT'",
            "parent.o_pri = 'URGENT'",
            "c.toml:28: table `lines`: `count` condition at column 1: `parent.o_pri`: a `count` condition reads the parent row's fields by their names",
        ),
        (
            "{ condition = \"o_date < DATE '1995-01-01'\", constant = 0 }",
            "{ constant = 0 }",
            "c.toml:29: table `lines`: a `count` case needs a `condition` (an SQL test of the parent row's fields)",
        ),
        (
            "o_pri = 'URGENT'",
            "o_lines > 3",
            "c.toml:28: table `lines`: `count` condition at column 1: `o_lines` is an aggregate of the parent's children; a `count` condition cannot read it (the counts would depend on it)",
        ),
    ] {
        assert_eq!(with(from, to), want, "{to}");
    }
    // A branch is a byte: at most 255 cases.
    let many: Vec<String> = (0..256)
        .map(|k| format!("{{ condition = \"o_key = -{k}\", constant = 5 }}"))
        .collect();
    let text = COUNTS.replacen(
        "count = { uniform = { min = 1, max = 3 }, when = [",
        &format!(
            "count = {{ uniform = {{ min = 1, max = 3 }}, when = [{},",
            many.join(", ")
        ),
        1,
    );
    let e = Dataset::parse(&text, "c.toml").unwrap_err().to_string();
    assert!(e.ends_with("`count` takes at most 255 `when` cases"), "{e}");
}
