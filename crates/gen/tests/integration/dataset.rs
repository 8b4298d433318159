//! Multi-table datasets: references resolve to their parent row's value
//! (checked against the parent table generated in full), copy several
//! fields of one parent row with `via`, follow their declared skew, do not
//! depend on batching, and bad datasets get one clear error each.

use std::collections::HashMap;

use arrow_array::{Array, Date32Array, Int64Array, RecordBatch, StringArray, StructArray};
use strata_gen::BatchGenerator;
use strata_gen::dist::Zipf;
use strata_gen::{Dataset, Rows};

const SHOP: &str = r#"
name = "shop"

[[tables]]
name = "customers"
rows_per_scale = 1000

[[tables.fields]]
name = "c_id"
type = "int64"
sequence = { start = 1 }

[[tables.fields]]
name = "c_segment"
type = "utf8"
weighted = { values = ["retail", "smb", "enterprise"], weights = [70, 25, 5] }

[[tables.fields]]
name = "c_since"
type = "date32"
uniform = { min = 2020-01-01, max = 2024-12-31 }
null_rate = 0.1

# The credit limit depends on the segment: a case, so evaluating it for a
# referenced row needs the segment too.
[[tables.fields]]
name = "c_limit"
type = "int64"
uniform = { min = 100, max = 1000 }
[[tables.fields.when]]
field = "c_segment"
is = "enterprise"
uniform = { min = 50000, max = 90000 }

[[tables]]
name = "orders"
rows_per_scale = 5000

[[tables.fields]]
name = "o_id"
type = "int64"
sequence = { start = 1 }

[[tables.fields]]
name = "o_cust"
type = "int64"
ref = { table = "customers", field = "c_id", zipf = { s = 1.2 } }

[[tables.fields]]
name = "o_segment"
type = "utf8"
ref = { table = "customers", field = "c_segment", via = "o_cust" }

[[tables.fields]]
name = "o_limit"
type = "int64"
ref = { table = "customers", field = "c_limit", via = "o_cust" }
null_rate = 0.2

[[tables.fields]]
name = "detail"
type = "struct"

[[tables.fields.fields]]
name = "any_customer"
type = "int64"
ref = { table = "customers", field = "c_id" }

[[tables.fields.fields]]
name = "since"
type = "date32"
ref = { table = "customers", field = "c_since", via = "any_customer" }

[[tables]]
name = "returns"
rows = 700

[[tables.fields]]
name = "r_order"
type = "int64"
ref = { table = "orders", field = "o_id" }

[[tables.fields]]
name = "r_cust"
type = "int64"
ref = { table = "orders", field = "o_cust", via = "r_order" }
"#;

fn table(d: &Dataset, name: &str, seed: u64, scale: f64, batch: usize) -> Vec<RecordBatch> {
    all_rows(d, name, seed, scale, batch as u64)
}

/// Column `name` of every batch, each batch's array (of type `A`) turned
/// into values by `f`.
fn column<A: 'static, T>(bs: &[RecordBatch], name: &str, f: impl Fn(&A) -> Vec<T>) -> Vec<T> {
    bs.iter()
        .flat_map(|b| {
            f(b.column_by_name(name)
                .unwrap_or_else(|| panic!("no column {name}"))
                .as_any()
                .downcast_ref::<A>()
                .unwrap_or_else(|| panic!("column {name} has another type")))
        })
        .collect()
}

fn ints(bs: &[RecordBatch], name: &str) -> Vec<Option<i64>> {
    column(bs, name, |a: &Int64Array| a.iter().collect())
}

fn strs(bs: &[RecordBatch], name: &str) -> Vec<Option<String>> {
    column(bs, name, |a: &StringArray| {
        a.iter().map(|x| x.map(str::to_string)).collect()
    })
}

#[test]
fn references_hold_their_parent_rows_values() {
    let d = Dataset::parse(SHOP, "shop.toml").unwrap();
    assert!(d.multi_table);
    assert_eq!(d.tables.len(), 3);
    assert_eq!(d.tables[1].rows, Some(Rows::PerScale(5000.0)));
    for scale in [1.0, 0.5] {
        let customers = table(&d, "customers", 42, scale, 333);
        let orders = table(&d, "orders", 42, scale, 1024);
        let n_cust = d.tables[0].rows.as_ref().unwrap().at(scale);
        let c_id = ints(&customers, "c_id");
        let seg = strs(&customers, "c_segment");
        let limit = ints(&customers, "c_limit");
        let since = dates(&customers, "c_since");
        assert_eq!(c_id.len() as u64, n_cust);
        let row_of: HashMap<i64, usize> = c_id
            .iter()
            .enumerate()
            .map(|(i, k)| (k.unwrap(), i))
            .collect();
        let o_cust = ints(&orders, "o_cust");
        let o_seg = strs(&orders, "o_segment");
        let o_limit = ints(&orders, "o_limit");
        let mut nulls = 0;
        let mut enterprise = 0;
        for i in 0..o_cust.len() {
            // Every key resolves, and the copied fields are those of the
            // same customer row.
            let r = row_of[&o_cust[i].expect("a key is never null")];
            assert_eq!(o_seg[i], seg[r], "order {i}");
            match o_limit[i] {
                Some(l) => assert_eq!(Some(l), limit[r], "order {i}"),
                None => nulls += 1,
            }
            enterprise += usize::from(seg[r].as_deref() == Some("enterprise"));
        }
        // The field's own null rate (0.2) applies on top of the copy.
        let n = o_cust.len();
        let p = 0.2;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            ((nulls as f64 / n as f64) - p).abs() < 5.0 * se,
            "{nulls} nulls of {n}"
        );
        assert!(enterprise > 0, "cases of the parent are evaluated");
        // A reference inside a struct, and a copied nullable date.
        for b in &orders {
            let detail = b
                .column_by_name("detail")
                .unwrap()
                .as_any()
                .downcast_ref::<StructArray>()
                .unwrap();
            let any = detail
                .column_by_name("any_customer")
                .unwrap()
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap();
            let when = detail
                .column_by_name("since")
                .unwrap()
                .as_any()
                .downcast_ref::<Date32Array>()
                .unwrap();
            for i in 0..any.len() {
                let r = row_of[&any.value(i)];
                assert_eq!(when.is_valid(i).then(|| when.value(i)), since[r]);
            }
        }
        // A reference to a table that references another: the copy of the
        // order's customer is that order's customer.
        let returns = table(&d, "returns", 42, scale, 100);
        let o_id = ints(&orders, "o_id");
        let order_row: HashMap<i64, usize> = o_id
            .iter()
            .enumerate()
            .map(|(i, k)| (k.unwrap(), i))
            .collect();
        let r_order = ints(&returns, "r_order");
        let r_cust = ints(&returns, "r_cust");
        assert_eq!(r_order.len(), 700, "`rows` does not scale");
        for i in 0..r_order.len() {
            assert_eq!(r_cust[i], o_cust[order_row[&r_order[i].unwrap()]]);
        }
    }
}

#[test]
fn zipf_references_follow_the_declared_skew_spread_over_the_table() {
    let d = Dataset::parse(SHOP, "shop.toml").unwrap();
    let scale = 4.0;
    let orders = table(&d, "orders", 7, scale, 8192);
    let n_cust = d.tables[0].rows.as_ref().unwrap().at(scale);
    let mut counts: HashMap<i64, usize> = HashMap::new();
    let keys = ints(&orders, "o_cust");
    for k in &keys {
        *counts.entry(k.unwrap()).or_default() += 1;
    }
    let mut by_count: Vec<(usize, i64)> = counts.iter().map(|(k, c)| (*c, *k)).collect();
    by_count.sort_unstable_by(|a, b| b.cmp(a));
    let zipf = Zipf::new(1.2, n_cust).unwrap();
    let n = keys.len();
    for rank in 1..=3u64 {
        let p = zipf.probability(rank);
        let got = by_count[rank as usize - 1].0;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (got as f64 / n as f64 - p).abs() < 5.0 * se,
            "rank {rank}: {got} of {n} against {p:.4}"
        );
    }
    // The hottest customers are not the first rows of the table.
    let top: Vec<i64> = by_count.iter().take(3).map(|x| x.1).collect();
    assert!(
        top.iter().any(|k| *k > 3),
        "hot keys {top:?} sit at the start"
    );
}

#[test]
fn references_do_not_depend_on_batching_and_follow_the_seed() {
    let d = Dataset::parse(SHOP, "shop.toml").unwrap();
    let a = table(&d, "orders", 3, 1.0, 5000);
    let b = table(&d, "orders", 3, 1.0, 77);
    for name in ["o_cust", "o_limit"] {
        assert_eq!(ints(&a, name), ints(&b, name), "{name}");
    }
    let c = table(&d, "orders", 4, 1.0, 5000);
    assert_ne!(ints(&a, "o_cust"), ints(&c, "o_cust"));
}

#[test]
fn tables_of_one_dataset_draw_from_their_own_streams() {
    // Two tables with identical fields: the same spec in both, but the
    // table name keys the streams.
    let text = r#"
name = "twins"
[[tables]]
name = "a"
rows = 100
[[tables.fields]]
name = "x"
type = "int64"
uniform = { min = 0, max = 1000000 }
[[tables]]
name = "b"
rows = 100
[[tables.fields]]
name = "x"
type = "int64"
uniform = { min = 0, max = 1000000 }
"#;
    let d = Dataset::parse(text, "t.toml").unwrap();
    assert_ne!(
        ints(&table(&d, "a", 1, 1.0, 100), "x"),
        ints(&table(&d, "b", 1, 1.0, 100), "x")
    );
}

#[test]
fn a_plain_spec_is_a_dataset_of_one_table_with_its_own_data() {
    let text = strata_gen::Spec::preset_text("contacts").unwrap();
    let d = Dataset::parse(text, "contacts").unwrap();
    assert!(!d.multi_table);
    assert_eq!(d.tables[0].rows, None);
    let spec = strata_gen::Spec::preset("contacts").unwrap();
    let mut s = Default::default();
    let a = d
        .generator(0, 9, 1.0)
        .unwrap()
        .generate(10, 500, &mut s)
        .unwrap();
    let b = spec
        .generator(9)
        .unwrap()
        .generate(10, 500, &mut s)
        .unwrap();
    assert_eq!(a, b);
}

fn error_of(text: &str) -> String {
    Dataset::parse(text, "d.toml").unwrap_err().to_string()
}

const CUSTOMERS: &str = r#"
name = "d"
[[tables]]
name = "customers"
rows = 10
[[tables.fields]]
name = "c_id"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "c_seg"
type = "dictionary"
weighted = { values = ["a", "b"] }
[[tables.fields]]
name = "c_tags"
type = "list"
length = 2
[tables.fields.item]
type = "utf8"
weighted = { values = ["x"] }
"#;

fn with_orders(field: &str) -> String {
    format!("{CUSTOMERS}\n[[tables]]\nname = \"orders\"\nrows = 5\n[[tables.fields]]\n{field}\n")
}

#[test]
fn bad_references_name_the_file_line_and_field() {
    let cases = [
        (
            with_orders(
                "name = \"o\"\ntype = \"int64\"\nref = { table = \"custmers\", field = \"c_id\" }",
            ),
            "d.toml:25: field `orders.o`: `ref` names table `custmers`, which the dataset does not have; its tables are customers, orders",
        ),
        (
            with_orders(
                "name = \"o\"\ntype = \"int64\"\nref = { table = \"customers\", field = \"id\" }",
            ),
            "d.toml:25: field `orders.o`: `ref` names field `id`, which is not a top-level field of table `customers`; its fields are c_id, c_seg, c_tags",
        ),
        (
            with_orders(
                "name = \"o\"\ntype = \"int32\"\nref = { table = \"customers\", field = \"c_id\" }",
            ),
            "d.toml:25: field `orders.o`: this field is int32 but `customers.c_id` is int64: a reference copies the value, so give both the same type (for a dictionary, struct, list or map, its kind)",
        ),
        (
            with_orders(
                "name = \"o\"\ntype = \"utf8\"\nref = { table = \"customers\", field = \"c_seg\" }",
            ),
            "d.toml:25: field `orders.o`: this field is utf8 but `customers.c_seg` is a dictionary: a reference copies the value, so give both the same type (for a dictionary, struct, list or map, its kind)",
        ),
        (
            with_orders(
                "name = \"o\"\ntype = \"utf8\"\nref = { table = \"customers\", field = \"c_tags\" }",
            ),
            "d.toml:25: field `orders.o`: this field is utf8 but `customers.c_tags` is a list: a reference copies the value, so give both the same type (for a dictionary, struct, list or map, its kind)",
        ),
        (
            with_orders(
                "name = \"o\"\ntype = \"int64\"\nref = { table = \"orders\", field = \"o\" }",
            ),
            "d.toml:25: field `orders.o`: table `orders` references itself (or is a child of itself); a reference reads another table",
        ),
        (
            with_orders(
                "name = \"o\"\ntype = \"int64\"\nref = { table = \"customers\", field = \"c_id\", via = \"p\" }",
            ),
            "d.toml:25: field `orders.o`: `via` = \"p\" names no sibling of this field; it names a field beside it holding a reference to `customers`",
        ),
        (
            with_orders(
                "name = \"o\"\ntype = \"int64\"\nref = { table = \"customers\", field = \"c_id\", zipf = { s = 0 } }",
            ),
            "d.toml:28: field `orders.o`: zipf exponent s must be a positive number, not 0",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(error_of(&text), want);
    }
    // A cycle through two tables.
    let cycle = r#"
name = "d"
[[tables]]
name = "a"
rows = 3
[[tables.fields]]
name = "x"
type = "int64"
ref = { table = "b", field = "y" }
[[tables]]
name = "b"
rows = 3
[[tables.fields]]
name = "y"
type = "int64"
ref = { table = "a", field = "x" }
"#;
    assert_eq!(
        error_of(cycle),
        "d.toml:6: field `a.x`: tables reference each other in a cycle (a -> b -> a); references must lead from children to parents"
    );
    // A table without rows cannot be referenced.
    let empty = CUSTOMERS.replace("rows = 10", "rows = 0");
    assert!(
        error_of(&with_orders_of(&empty)).ends_with(
            "`ref` reads table `customers`, which has no rows (`rows = 0`); a reference needs a row to draw"
        ),
        "{}",
        error_of(&with_orders_of(&empty))
    );
    // Rows: one of the two, positive.
    let both = CUSTOMERS.replace("rows = 10", "rows = 10\nrows_per_scale = 3");
    assert_eq!(
        error_of(&both),
        "d.toml:5: table `customers`: give `rows` or `rows_per_scale`, not both"
    );
    let none = CUSTOMERS.replace("rows = 10\n", "");
    assert_eq!(
        error_of(&none),
        "d.toml:3: table `customers` needs `rows` (a fixed count) or `rows_per_scale` (rows per unit of --scale)"
    );
    let negative = CUSTOMERS.replace("rows = 10", "rows_per_scale = -2");
    assert_eq!(
        error_of(&negative),
        "d.toml:5: table `customers`: `rows_per_scale` must be a positive number, not -2"
    );
    let twice = format!(
        "{CUSTOMERS}\n[[tables]]\nname = \"customers\"\nrows = 1\n[[tables.fields]]\nname = \"z\"\ntype = \"int8\"\nconstant = 1\n"
    );
    assert!(
        error_of(&twice).contains("a table named `customers` is already on line 3"),
        "{}",
        error_of(&twice)
    );
    // Errors inside a table's fields name the table.
    let bad_field = CUSTOMERS.replace("sequence = { start = 1 }", "sequence = { start = \"x\" }");
    assert!(
        error_of(&bad_field).contains("field `customers.c_id`"),
        "{}",
        error_of(&bad_field)
    );
    // A case may not switch a reference's generator.
    let case = with_orders(
        "name = \"k\"\ntype = \"utf8\"\nweighted = { values = [\"p\"] }\n[[tables.fields]]\nname = \"m\"\ntype = \"int64\"\nuniform = { min = 0, max = 1 }\n[[tables.fields.when]]\nfield = \"k\"\nis = \"p\"\nref = { table = \"customers\", field = \"c_id\" }",
    );
    assert!(
        error_of(&case)
            .contains("field `orders.m`: a `when` case of a `ref` field may give another `ref`"),
        "{}",
        error_of(&case)
    );
}

fn with_orders_of(customers: &str) -> String {
    format!(
        "{customers}\n[[tables]]\nname = \"orders\"\nrows = 5\n[[tables.fields]]\nname = \"o\"\ntype = \"int64\"\nref = {{ table = \"customers\", field = \"c_id\" }}\n"
    )
}

#[test]
fn a_single_table_spec_cannot_hold_a_reference() {
    let text = r#"
name = "one"
[[fields]]
name = "x"
type = "int64"
ref = { table = "t", field = "y" }
"#;
    let e = strata_gen::Spec::parse(text, "one.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "one.toml:3: field `x`: `ref` reads table `t`, but this spec has no `[[tables]]`: put the tables of a dataset in one file, each a `[[tables]]` entry"
    );
    let e = strata_gen::Spec::parse(CUSTOMERS, "d.toml").unwrap_err();
    assert!(e.to_string().contains("lists `[[tables]]`"), "{e}");
}

/// The `shop` example of the guide's page on datasets of several tables.
#[test]
fn the_guide_dataset_parses_and_its_keys_resolve() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/src/spec/tables.md"
    ))
    .unwrap();
    let fence = "```toml spec\nname = \"shop\"";
    let start = page.find(fence).expect("the guide's shop example") + "```toml spec\n".len();
    let end = start + page[start..].find("```").unwrap();
    let d = Dataset::parse(&page[start..end], "docs/src/spec/tables.md").unwrap();
    let scale = 0.01;
    let customers = table(&d, "customers", 1, scale, 4096);
    let orders = table(&d, "orders", 1, scale, 4096);
    let ids = ints(&customers, "c_id");
    let segments = strs(&customers, "c_segment");
    assert_eq!(ids.len(), 1500);
    let keys = ints(&orders, "o_cust");
    let copied = strs(&orders, "o_segment");
    assert_eq!(keys.len(), 15_000);
    for (k, s) in keys.iter().zip(&copied) {
        let row = (k.unwrap() - 1) as usize;
        assert_eq!(ids[row], *k);
        assert_eq!(segments[row], *s);
    }
}

/// Every row of a table at `scale`, generated from its driving rows in
/// batches of `batch` of them (for a child table, the root's rows).
/// Every row of table `name`, `batch` root rows per batch, each column
/// validated.
pub(crate) fn all_rows(
    d: &Dataset,
    name: &str,
    seed: u64,
    scale: f64,
    batch: u64,
) -> Vec<RecordBatch> {
    let i = d.table(name).unwrap();
    let g = d.generator(i, seed, scale).unwrap();
    let root = d.root_of(i);
    let rows = d.tables[root].rows.as_ref().unwrap().at(scale);
    let mut s = Default::default();
    let mut out = Vec::new();
    let mut at = 0;
    while at < rows {
        let n = (rows - at).min(batch);
        let b = g.generate(at, n as usize, &mut s).unwrap();
        for c in b.columns() {
            c.to_data().validate_full().unwrap();
        }
        out.push(b);
        at += n;
    }
    out
}

fn dates(bs: &[RecordBatch], name: &str) -> Vec<Option<i32>> {
    column(bs, name, |a: &Date32Array| a.iter().collect())
}

#[test]
fn child_rows_follow_their_parents() {
    let d = Dataset::preset("orders").unwrap();
    let scale = 0.002;
    let orders = all_rows(&d, "orders", 3, scale, 1000);
    let items = all_rows(&d, "lineitem", 3, scale, 100);
    let keys = ints(&orders, "o_orderkey");
    let order_dates = dates(&orders, "o_orderdate");
    let l_key = ints(&items, "l_orderkey");
    let ship = dates(&items, "l_shipdate");
    let commit = dates(&items, "l_commitdate");
    let line: Vec<i64> = column(&items, "l_linenumber", |a: &arrow_array::Int32Array| {
        a.values().iter().map(|&x| i64::from(x)).collect()
    });
    // Children come in their parents' order, numbered 1, 2, ... within
    // each parent, 1 to 7 of them; their dates are offsets of the order's.
    let mut per_order = vec![0usize; keys.len()];
    let mut prev: Option<(i64, i64)> = None;
    for i in 0..l_key.len() {
        let k = l_key[i].unwrap();
        let o = (k - 1) as usize;
        assert_eq!(keys[o], Some(k));
        per_order[o] += 1;
        match prev {
            Some((pk, pl)) if pk == k => assert_eq!(line[i], pl + 1),
            Some((pk, _)) => {
                assert!(k > pk);
                assert_eq!(line[i], 1);
            }
            None => assert_eq!(line[i], 1),
        }
        prev = Some((k, line[i]));
        let od = order_dates[o].unwrap();
        assert!((1..=121).contains(&(ship[i].unwrap() - od)), "row {i}");
        assert!((30..=90).contains(&(commit[i].unwrap() - od)), "row {i}");
    }
    assert!(per_order.iter().all(|&c| (1..=7).contains(&c)));
    // Counts uniform over 1..=7: every count within 5 standard errors.
    let n = per_order.len();
    for c in 1..=7 {
        let got = per_order.iter().filter(|&&x| x == c).count();
        let p = 1.0 / 7.0;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            ((got as f64 / n as f64) - p).abs() < 5.0 * se,
            "count {c}: {got} of {n}"
        );
    }
    // The rows counted without generating are the rows generated.
    let li = d.table("lineitem").unwrap();
    let g = d.generator(li, 3, scale).unwrap();
    assert_eq!(g.rows_of(0, keys.len() as u64).unwrap(), l_key.len() as u64);
    assert_eq!(g.rows_of(5, 1).unwrap(), per_order[5] as u64);
    // Batching the parents differently gives the same children.
    let again = all_rows(&d, "lineitem", 3, scale, 37);
    assert_eq!(ints(&again, "l_orderkey"), l_key);
    assert_eq!(dates(&again, "l_shipdate"), ship);
    let mean = d.rows_per_root_row(d.table("lineitem").unwrap());
    assert!((mean - 4.0).abs() < 1e-9, "mean of 1..=7: {mean}");
}

#[test]
fn grandchildren_follow_their_parents_and_refs_reach_every_generation() {
    let text = r#"
name = "tree"
[[tables]]
name = "a"
rows = 50
[[tables.fields]]
name = "a_id"
type = "int64"
sequence = { start = 1 }
[[tables]]
name = "b"
children_of = "a"
count = { weighted = { values = [0, 2, 3] } }
[[tables.fields]]
name = "b_a"
type = "int64"
parent = "a_id"
[[tables.fields]]
name = "b_pos"
type = "int8"
position = 10
[[tables]]
name = "c"
children_of = "b"
count = 2
[[tables.fields]]
name = "c_a"
type = "int64"
parent = "b_a"
[[tables.fields]]
name = "c_b"
type = "int8"
parent = { field = "b_pos", offset = 100 }
[[tables.fields]]
name = "c_pos"
type = "uint16"
position = 0
"#;
    let d = Dataset::parse(text, "tree.toml").unwrap();
    let b = all_rows(&d, "b", 1, 1.0, 7);
    let c = all_rows(&d, "c", 1, 1.0, 9);
    let b_a = ints(&b, "b_a");
    let c_a = ints(&c, "c_a");
    // Two grandchildren per child, each with its child's parent key.
    assert_eq!(c_a.len(), 2 * b_a.len());
    for (i, k) in c_a.iter().enumerate() {
        assert_eq!(*k, b_a[i / 2]);
    }
    let i8s = |bs: &[RecordBatch], name: &str| -> Vec<i8> {
        column(bs, name, |a: &arrow_array::Int8Array| a.values().to_vec())
    };
    let b_pos = i8s(&b, "b_pos");
    let c_b = i8s(&c, "c_b");
    for (i, v) in c_b.iter().enumerate() {
        assert_eq!(*v, b_pos[i / 2] + 100);
    }
    assert!(b_pos.iter().all(|p| (10..13).contains(p)));
    let c_pos: Vec<u16> = column(&c, "c_pos", |a: &arrow_array::UInt16Array| {
        a.values().to_vec()
    });
    assert!(c_pos.chunks(2).all(|p| p == [0, 1]));
    assert_eq!(d.root_of(2), 0);
    assert!((d.rows_per_root_row(2) - 2.0 * 5.0 / 3.0).abs() < 1e-9);
}

/// A part table, four suppliers per part as a child table, and lines
/// that draw a part, then one of its suppliers; `count` is the
/// suppliers' count per part.
fn parts_and_suppliers(count: &str, pick: &str) -> String {
    format!(
        r#"
name = "ps"
[[tables]]
name = "part"
rows = 200
[[tables.fields]]
name = "p_key"
type = "int64"
sequence = {{ start = 1 }}
[[tables]]
name = "partsupp"
children_of = "part"
count = {count}
[[tables.fields]]
name = "ps_part"
type = "int64"
parent = "p_key"
[[tables.fields]]
name = "ps_supp"
type = "int64"
expr = "(ps_part + position * 7) % 50 + 1"
[[tables.fields]]
name = "position"
type = "int64"
position = 0
hidden = true
[[tables.fields]]
name = "ps_cost"
type = "int64"
uniform = {{ min = 1, max = 1000000 }}
[[tables]]
name = "line"
rows = 4000
[[tables.fields]]
name = "l_part"
type = "int64"
ref = {{ table = "partsupp", field = "ps_part", draw = "ps"{pick} }}
[[tables.fields]]
name = "l_supp"
type = "int64"
ref = {{ table = "partsupp", field = "ps_supp", draw = "ps" }}
[[tables.fields]]
name = "l_cost"
type = "int64"
expr = "ps.ps_cost * 2"
"#
    )
}

#[test]
fn references_to_a_child_table_draw_a_parent_row_then_one_of_its_children() {
    use std::collections::HashMap;
    for (count, pick) in [
        ("4", ""),
        ("{ uniform = { min = 0, max = 3 } }", ""),
        ("{ weighted = { values = [0, 5] } }", ", zipf = { s = 1.1 }"),
    ] {
        let text = parts_and_suppliers(count, pick);
        let d = Dataset::parse(&text, "ps.toml").unwrap();
        let ps = all_rows(&d, "partsupp", 9, 1.0, 64);
        let (part, supp, cost) = (
            ints(&ps, "ps_part"),
            ints(&ps, "ps_supp"),
            ints(&ps, "ps_cost"),
        );
        // Every (part, supplier) pair of partsupp once, with its cost.
        let mut rows = HashMap::new();
        for i in 0..part.len() {
            let at = (part[i].unwrap(), supp[i].unwrap());
            assert!(
                rows.insert(at, cost[i].unwrap()).is_none(),
                "{count}: {at:?} twice"
            );
        }
        let lines = all_rows(&d, "line", 9, 1.0, 333);
        let (lp, ls, lc) = (
            ints(&lines, "l_part"),
            ints(&lines, "l_supp"),
            ints(&lines, "l_cost"),
        );
        let mut seen = HashMap::new();
        for i in 0..lp.len() {
            let at = (lp[i].unwrap(), ls[i].unwrap());
            // The line's pair is a partsupp row, and its cost that row's.
            let c = rows
                .get(&at)
                .unwrap_or_else(|| panic!("{count}: line {i}: {at:?} is no partsupp row"));
            assert_eq!(lc[i], Some(c * 2), "{count}: line {i}");
            *seen.entry(at).or_insert(0u32) += 1;
        }
        if count == "4" {
            // A part drawn uniformly, then one of its four suppliers
            // uniformly: each of the 800 pairs about 5 times in 4,000.
            assert!(
                seen.len() > 700,
                "{count}: {} pairs of 800 drawn",
                seen.len()
            );
            let mut by_position = [0u32; 4];
            for (p, s) in seen.keys() {
                by_position[((s - 1 - p % 50 + 50) % 50 / 7) as usize] += 1;
            }
            assert!(by_position.iter().all(|&n| n > 150), "{by_position:?}");
        }
        // Batching differently draws the same rows.
        let again = all_rows(&d, "line", 9, 1.0, 1000);
        assert_eq!(ints(&again, "l_supp"), ls, "{count}");
    }
    // A reference to a grandchild descends two generations.
    let text = r#"
name = "tree"
[[tables]]
name = "a"
rows = 30
[[tables.fields]]
name = "a_id"
type = "int64"
sequence = { start = 1 }
[[tables]]
name = "b"
children_of = "a"
count = { weighted = { values = [0, 2, 3] } }
[[tables.fields]]
name = "b_a"
type = "int64"
parent = "a_id"
[[tables.fields]]
name = "b_pos"
type = "int64"
position = 0
[[tables]]
name = "c"
children_of = "b"
count = { uniform = { min = 0, max = 2 } }
[[tables.fields]]
name = "c_key"
type = "int64"
expr = "b_a * 100 + parent.b_pos * 10 + c_pos"
[[tables.fields]]
name = "b_a"
type = "int64"
parent = "b_a"
hidden = true
[[tables.fields]]
name = "c_pos"
type = "int64"
position = 0
hidden = true
[[tables]]
name = "r"
rows = 500
[[tables.fields]]
name = "r_c"
type = "int64"
ref = { table = "c", field = "c_key" }
"#;
    let d = Dataset::parse(text, "tree.toml").unwrap();
    let keys: std::collections::HashSet<i64> = ints(&all_rows(&d, "c", 2, 1.0, 10), "c_key")
        .into_iter()
        .map(Option::unwrap)
        .collect();
    let r = ints(&all_rows(&d, "r", 2, 1.0, 77), "r_c");
    assert!(r.iter().all(|k| keys.contains(&k.unwrap())));
    let drawn: std::collections::HashSet<_> = r.iter().collect();
    assert!(
        drawn.len() * 10 > keys.len() * 9,
        "{} of {}",
        drawn.len(),
        keys.len()
    );
    // No row has children: a clear error, not a hang.
    let text = parts_and_suppliers("0", "");
    let d = Dataset::parse(&text, "ps.toml").unwrap();
    let li = d.table("line").unwrap();
    let g = d.generator(li, 1, 1.0).unwrap();
    let e = format!(
        "{:?}",
        strata_gen::BatchGenerator::generate(&g, 0, 10, &mut Default::default()).unwrap_err()
    );
    assert!(e.contains("draws of a row found none with children"), "{e}");
}

#[test]
fn bad_child_tables_are_clear_errors() {
    let base = r#"
name = "d"
[[tables]]
name = "p"
rows = 4
[[tables.fields]]
name = "k"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "s"
type = "struct"
[[tables.fields.fields]]
name = "x"
type = "int64"
constant = 1
"#;
    let child = |head: &str, field: &str| {
        format!("{base}[[tables]]\nname = \"c\"\n{head}\n[[tables.fields]]\n{field}\n")
    };
    let cases = [
        (
            child(
                "children_of = \"q\"\ncount = 2",
                "name = \"a\"\ntype = \"int64\"\nparent = \"k\"",
            ),
            "d.toml:17: table `c`: `children_of` names table `q`, which the dataset does not have; its tables are p, c",
        ),
        (
            child(
                "children_of = \"p\"",
                "name = \"a\"\ntype = \"int64\"\nparent = \"k\"",
            ),
            "table `c` needs a `count` (rows per `p` row): an integer or a generator table",
        ),
        (
            child(
                "children_of = \"p\"\ncount = 2\nrows = 5",
                "name = \"a\"\ntype = \"int64\"\nparent = \"k\"",
            ),
            "table `c`: a child table's rows follow its parent's (`count` per parent row); drop `rows`/`rows_per_scale`",
        ),
        (
            child(
                "rows = 5\ncount = 2",
                "name = \"a\"\ntype = \"int64\"\nparent = \"k\"",
            ),
            "table `c`: `count` is for child tables (with `children_of`); give `rows` or `rows_per_scale`",
        ),
        (
            child("rows = 5", "name = \"a\"\ntype = \"int64\"\nparent = \"k\""),
            "field `c.a`: `parent` is for the fields of a child table; table `c` has no `children_of`",
        ),
        (
            child(
                "children_of = \"p\"\ncount = 2",
                "name = \"a\"\ntype = \"int64\"\nparent = \"nope\"",
            ),
            "field `c.a`: `ref` names field `nope`, which is not a top-level field of table `p`",
        ),
        (
            child(
                "children_of = \"p\"\ncount = 2",
                "name = \"a\"\ntype = \"utf8\"\nparent = { field = \"k\", offset = 1 }",
            ),
            "`offset` adds to integers, dates, timestamps and decimals, not to this field's type",
        ),
        (
            child(
                "children_of = \"p\"\ncount = 2",
                "name = \"t\"\ntype = \"struct\"\n[[tables.fields.fields]]\nname = \"n\"\ntype = \"int32\"\nposition = 1",
            ),
            "field `c.t.n`: a `per_parent` sequence (`position`) is for the top-level fields of a child table, not those inside structs, lists or maps",
        ),
        (
            child(
                "children_of = \"c\"\ncount = 2",
                "name = \"a\"\ntype = \"int64\"\nconstant = 1",
            ),
            "table `c` references itself (or is a child of itself)",
        ),
        (
            format!(
                "{}\n[[tables]]\nname = \"e\"\nchildren_of = \"c\"\ncount = 1\n[[tables.fields]]\nname = \"z\"\ntype = \"int8\"\nconstant = 1\n",
                child(
                    "children_of = \"e\"\ncount = 2",
                    "name = \"a\"\ntype = \"int64\"\nconstant = 1"
                )
            ),
            "tables reference each other in a cycle (c -> e -> c)",
        ),
        (
            format!(
                "{}\n[[tables]]\nname = \"r\"\nrows = 3\n[[tables.fields]]\nname = \"z\"\ntype = \"int64\"\nref = {{ table = \"c\", field = \"a\", weight = \"a\" }}\n",
                child(
                    "children_of = \"p\"\ncount = 2",
                    "name = \"a\"\ntype = \"int64\"\nparent = \"k\""
                )
            ),
            "field `r.z`: `weight` = \"a\": `c` is a child table (rows per `p` row), whose rows are reached through a row of its parent; a weighted reference draws from a table with `rows` or `rows_per_scale`",
        ),
    ];
    for (text, want) in cases {
        let e = error_of(&text);
        assert!(e.contains(want), "{e}\n  wanted: {want}");
    }
}

#[test]
fn every_dataset_preset_parses_and_generates_every_table() {
    for (name, _) in strata_gen::DATASET_PRESETS {
        let d = Dataset::preset(name).unwrap();
        assert!(d.multi_table, "{name}");
        for t in &d.tables {
            let b = all_rows(&d, &t.spec.name, 5, 0.0005, 50);
            assert!(
                b.iter().map(|b| b.num_rows()).sum::<usize>() > 0,
                "{name}.{}",
                t.spec.name
            );
        }
    }
    assert!(strata_gen::Spec::preset("star").is_err());
    assert!(Dataset::preset("contacts").is_ok_and(|d| !d.multi_table));
}

#[test]
fn times_durations_fixed_size_binary_and_uuids() {
    use arrow_array::{
        BinaryArray, DurationMillisecondArray, FixedSizeBinaryArray, Time32MillisecondArray,
        Time64MicrosecondArray,
    };
    let text = r#"
name = "types"
[[fields]]
name = "id"
type = "utf8"
uuid = true
[[fields]]
name = "raw"
type = "fixed_size_binary(16)"
uuid = true
null_rate = 0.2
[[fields]]
name = "code"
type = "fixed_size_binary(3)"
weighted = { values = ["abc", "xyz"] }
[[fields]]
name = "opens"
type = "time64(us)"
uniform = { min = 08:00:00, max = 18:30:00.5 }
[[fields]]
name = "t32"
type = "time32(ms)"
sequence = { start = 1000, step = 1000 }
[[fields]]
name = "took"
type = "duration(ms)"
uniform = { min = -5, max = 5 }
[[fields]]
name = "bin"
type = "binary"
uuid = true
"#;
    let spec = strata_gen::Spec::parse(text, "types.toml").unwrap();
    let g = spec.generator(3).unwrap();
    let b = g.generate(100, 4000, &mut Default::default()).unwrap();
    for c in b.columns() {
        c.to_data().validate_full().unwrap();
    }
    let col = |n: &str| b.column_by_name(n).unwrap().clone();
    let ids = col("id");
    let ids = ids.as_any().downcast_ref::<StringArray>().unwrap();
    let mut seen = std::collections::HashSet::new();
    for s in ids.iter().flatten() {
        let b = s.as_bytes();
        assert_eq!(b.len(), 36);
        assert_eq!([b[8], b[13], b[18], b[23]], [b'-'; 4]);
        assert_eq!(b[14], b'4', "version 4: {s}");
        assert!(matches!(b[19], b'8' | b'9' | b'a' | b'b'), "variant: {s}");
        assert!(seen.insert(s.to_string()));
    }
    let raw = col("raw");
    let raw = raw.as_any().downcast_ref::<FixedSizeBinaryArray>().unwrap();
    assert_eq!(raw.value_length(), 16);
    let nulls = raw.null_count();
    assert!((600..1000).contains(&nulls), "{nulls} nulls of 4000");
    for v in raw.iter().flatten() {
        assert_eq!(v[6] >> 4, 4);
        assert_eq!(v[8] >> 6, 2);
    }
    let code = col("code");
    let code = code
        .as_any()
        .downcast_ref::<FixedSizeBinaryArray>()
        .unwrap();
    assert!(
        code.iter()
            .all(|v| matches!(v, Some(b"abc") | Some(b"xyz")))
    );
    let opens = col("opens");
    let opens = opens
        .as_any()
        .downcast_ref::<Time64MicrosecondArray>()
        .unwrap();
    let (lo, hi) = (
        8 * 3600 * 1_000_000i64,
        (18 * 3600 + 30 * 60) * 1_000_000 + 500_000,
    );
    assert!(opens.values().iter().all(|v| (lo..=hi).contains(v)));
    let t32 = col("t32");
    let t32 = t32
        .as_any()
        .downcast_ref::<Time32MillisecondArray>()
        .unwrap();
    assert_eq!(t32.value(0), 1000 + 100 * 1000);
    let took = col("took");
    let took = took
        .as_any()
        .downcast_ref::<DurationMillisecondArray>()
        .unwrap();
    assert!(took.values().iter().all(|v| (-5..=5).contains(v)));
    assert!(took.values().iter().any(|v| *v < 0));
    let bin = col("bin");
    let bin = bin.as_any().downcast_ref::<BinaryArray>().unwrap();
    assert!(
        bin.iter()
            .all(|v| v.is_some_and(|v| v.len() == 16 && v[6] >> 4 == 4))
    );

    // Bad uses name the field.
    let one = |field: &str| {
        strata_gen::Spec::parse(&format!("name = \"x\"\n[[fields]]\n{field}\n"), "x.toml")
            .unwrap_err()
            .to_string()
    };
    for (field, want) in [
        (
            "name = \"a\"\ntype = \"fixed_size_binary(8)\"\nuuid = true",
            "`uuid` makes 16 bytes; declare the field fixed_size_binary(16), not (8)",
        ),
        (
            "name = \"a\"\ntype = \"fixed_size_binary(3)\"\nweighted = { values = [\"abcd\"] }",
            "value \"abcd\" has 4 bytes; fixed_size_binary(3) holds exactly 3",
        ),
        (
            "name = \"a\"\ntype = \"fixed_size_binary(3)\"\nwords = { min = 1 }",
            "fixed_size_binary(3) takes constant, weighted or zipf values of 3 bytes",
        ),
        (
            "name = \"a\"\ntype = \"fixed_size_binary(0)\"\nuuid = true",
            "fixed_size_binary(N) takes a byte width N from 1 to 65536",
        ),
        (
            "name = \"a\"\ntype = \"time32(us)\"\nconstant = 1",
            "time32 takes s or ms, time64 us or ns",
        ),
        (
            "name = \"a\"\ntype = \"time64(us)\"\nconstant = 2024-01-01T08:00:00",
            "must be a time of day without a date, such as 08:30:00",
        ),
        (
            "name = \"a\"\ntype = \"time32(s)\"\nconstant = 86400",
            "`constant` = 86400 is outside the time of day range 0..=86399",
        ),
        (
            "name = \"a\"\ntype = \"int64\"\nuuid = true",
            "`uuid` does not generate integer values",
        ),
    ] {
        let e = one(field);
        assert!(e.contains(want), "{e}\n  wanted: {want}");
    }
}

#[test]
fn references_weighted_by_a_parent_field_or_drawn_by_cases() {
    let text = r#"
name = "w"
[[tables]]
name = "stores"
rows = 4
[[tables.fields]]
name = "id"
type = "int32"
sequence = { start = 1 }
# Store 1 weighs 0 (never drawn), 2 weighs 1, 3 weighs 3, 4 is null (0).
[[tables.fields]]
name = "size"
type = "decimal(5, 1)"
weighted = { values = [0.0] }
[[tables.fields.when]]
field = "id"
is = 2
weighted = { values = [1.0] }
[[tables.fields.when]]
field = "id"
is = 3
weighted = { values = [3.0] }
[[tables.fields.when]]
field = "id"
is = 4
null_rate = 1.0
[[tables]]
name = "sales"
rows = 40000
[[tables.fields]]
name = "channel"
type = "utf8"
weighted = { values = ["shop", "web"] }
# Shop sales go to stores by size; web sales all land uniformly.
[[tables.fields]]
name = "store"
type = "int32"
ref = { table = "stores", field = "id", weight = "size" }
[[tables.fields.when]]
field = "channel"
is = "web"
ref = { table = "stores", field = "id" }
"#;
    let text = text.replace(
        "name = \"id\"\ntype = \"int32\"\nsequence = { start = 1 }",
        "name = \"id\"\ntype = \"int32\"\nweighted = { values = [1, 2, 3, 4] }",
    );
    // Ids are a sequence in spirit; `weighted` makes them categories that
    // cases can read. Their order is the row order only by chance, so
    // read the weights back from the stores table itself.
    let d = Dataset::parse(&text, "w.toml").unwrap();
    let stores = table(&d, "stores", 1, 1.0, 10);
    let ids = column(&stores, "id", |a: &arrow_array::Int32Array| {
        a.values().to_vec()
    });
    let sizes = column(&stores, "size", |a: &arrow_array::Decimal128Array| {
        a.iter().map(|v| v.unwrap_or(0) as f64).collect::<Vec<_>>()
    });
    let weight_of = |store: i32| {
        ids.iter()
            .zip(&sizes)
            .filter(|(i, _)| **i == store)
            .map(|(_, w)| *w)
            .sum::<f64>()
    };
    let total: f64 = sizes.iter().sum();
    let sales = table(&d, "sales", 1, 1.0, 4096);
    let channel = strs(&sales, "channel");
    let store = column(&sales, "store", |a: &arrow_array::Int32Array| {
        a.values().to_vec()
    });
    for ch in ["shop", "web"] {
        let picked: Vec<i32> = store
            .iter()
            .zip(&channel)
            .filter(|(_, c)| c.as_deref() == Some(ch))
            .map(|(s, _)| *s)
            .collect();
        let n = picked.len();
        for s in 1..=4 {
            // A store's share: its weight's (shop), a row's (web; stores
            // with the same id count once each).
            let p = if ch == "shop" {
                weight_of(s) / total
            } else {
                ids.iter().filter(|i| **i == s).count() as f64 / ids.len() as f64
            };
            let got = picked.iter().filter(|x| **x == s).count();
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!(
                ((got as f64 / n as f64) - p).abs() <= 5.0 * se + 1e-12,
                "{ch} store {s}: {got} of {n}, expected share {p}"
            );
        }
    }

    // Bad weights and cases.
    let bad = |from: &str, to: &str| error_of(&text.replace(from, to));
    assert!(
        bad("weight = \"size\"", "weight = \"nope\"")
            .contains("`weight` = \"nope\" is not a top-level field of table `stores`")
    );
    assert!(
        bad("weight = \"size\"", "weight = \"id\", zipf = { s = 1 }")
            .contains("`ref` takes `zipf` or `weight`, not both")
    );
    assert!(
        bad(
            "is = \"web\"\nref = { table = \"stores\", field = \"id\" }",
            "is = \"web\"\nref = { table = \"stores\", field = \"size\" }"
        )
        .contains(
            "a `when` case of a `ref` field may give another `ref` to the same table and field"
        )
    );
    let strings = text.replace(
        "name = \"size\"\ntype = \"decimal(5, 1)\"",
        "name = \"size\"\ntype = \"utf8\"",
    );
    let strings = strings
        .replace("[0.0]", "[\"a\"]")
        .replace("[1.0]", "[\"b\"]")
        .replace("[3.0]", "[\"c\"]");
    assert!(
        error_of(&strings).contains("`stores.size` is not a number"),
        "{}",
        error_of(&strings)
    );
}

#[test]
fn dictionaries_structs_lists_and_maps_are_copied_whole() {
    let text = r#"
name = "nested"
[[tables]]
name = "p"
rows = 50
[[tables.fields]]
name = "id"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "kind"
type = "dictionary"
weighted = { values = ["a", "b", "c"] }
[[tables.fields]]
name = "addr"
type = "struct"
null_rate = 0.2
[[tables.fields.fields]]
name = "city"
type = "utf8"
words = { min = 1, max = 2 }
[[tables.fields.fields]]
name = "zip"
type = "int32"
uniform = { min = 10000, max = 99999 }
[[tables.fields]]
name = "tags"
type = "list"
length = { uniform = { min = 0, max = 3 } }
[tables.fields.item]
type = "utf8"
weighted = { values = ["x", "y"] }
[[tables.fields]]
name = "attrs"
type = "map"
length = { uniform = { min = 0, max = 2 } }
[tables.fields.key]
type = "utf8"
weighted = { values = ["k1", "k2"] }
[tables.fields.value]
type = "int8"
uniform = { min = 0, max = 9 }
[[tables]]
name = "c"
rows = 400
[[tables.fields]]
name = "p_id"
type = "int64"
ref = { table = "p", field = "id", zipf = { s = 1.0 } }
[[tables.fields]]
name = "kind"
type = "dictionary"
ref = { table = "p", field = "kind", via = "p_id" }
[[tables.fields]]
name = "addr"
type = "struct"
ref = { table = "p", field = "addr", via = "p_id" }
[[tables.fields]]
name = "tags"
type = "list"
ref = { table = "p", field = "tags", via = "p_id" }
[[tables.fields]]
name = "attrs"
type = "map"
ref = { table = "p", field = "attrs", via = "p_id" }
"#;
    let d = Dataset::parse(text, "n.toml").unwrap();
    let p = table(&d, "p", 2, 1.0, 50);
    let c = table(&d, "c", 2, 1.0, 128);
    let parent = arrow_select::concat::concat_batches(&p[0].schema(), &p).unwrap();
    let child = arrow_select::concat::concat_batches(&c[0].schema(), &c).unwrap();
    for name in ["kind", "addr", "tags", "attrs"] {
        assert_eq!(
            parent.schema().field_with_name(name).unwrap().data_type(),
            child.schema().field_with_name(name).unwrap().data_type(),
            "{name}"
        );
    }
    let ids = ints(&c, "p_id");
    let rows: Vec<u64> = ids.iter().map(|k| (k.unwrap() - 1) as u64).collect();
    let indices = arrow_array::UInt64Array::from(rows);
    for name in ["kind", "addr", "tags", "attrs"] {
        let want =
            arrow_select::take::take(parent.column_by_name(name).unwrap(), &indices, None).unwrap();
        assert_eq!(
            child.column_by_name(name).unwrap().as_ref(),
            want.as_ref(),
            "{name}"
        );
    }
    // The kind must match the copied field's.
    let bad = text.replace(
        "name = \"tags\"\ntype = \"list\"\nref",
        "name = \"tags\"\ntype = \"struct\"\nref",
    );
    assert!(
        error_of(&bad).contains("this field is a struct but `p.tags` is a list"),
        "{}",
        error_of(&bad)
    );
}

/// A dataset written as JSON reads as the same tables as its TOML.
#[test]
fn json_datasets_read_as_their_toml() {
    for (name, text) in strata_gen::DATASET_PRESETS {
        let doc: serde_json::Value = toml::from_str(text).unwrap();
        let json = serde_json::to_string(&doc).unwrap();
        let from_toml = Dataset::parse(text, name).unwrap();
        let from_json = Dataset::parse(&json, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let shape = |d: &Dataset| {
            d.tables
                .iter()
                .flat_map(|t| {
                    t.spec.walk().into_iter().map(move |(f, depth)| {
                        format!(
                            "{} {} {depth} {:?} {} {}",
                            t.spec.name,
                            f.path,
                            f.kind,
                            f.null_rate,
                            f.when.len()
                        )
                    })
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(shape(&from_json), shape(&from_toml), "{name}");
    }
}

/// A field read from another row (`parent`, `ref`, `parent.x` in an
/// expression) that is an aggregate, or computed from one, is refused by
/// the check, at the reading field's line, as generate would refuse it;
/// reading the other fields of a table with aggregates generates.
#[test]
fn reads_of_aggregates_are_refused_when_checked() {
    let orders = "name = \"d\"\n[[tables]]\nname = \"orders\"\nrows = 10\n\
        [[tables.fields]]\nname = \"o_id\"\ntype = \"int64\"\nsequence = { start = 1 }\n\
        [[tables.fields]]\nname = \"o_n\"\ntype = \"int64\"\naggregate = { table = \"lines\", count = \"*\" }\n\
        [[tables.fields]]\nname = \"o_big\"\ntype = \"boolean\"\nexpr = \"o_n > 3\"\n\
        [[tables]]\nname = \"lines\"\nchildren_of = \"orders\"\ncount = { uniform = { min = 1, max = 7 } }\n\
        [[tables.fields]]\nname = \"l_x\"\ntype = \"int64\"\nconstant = 1\n";
    let notes = |field: &str| {
        format!(
            "{orders}[[tables]]\nname = \"notes\"\nchildren_of = \"orders\"\ncount = 2\n[[tables.fields]]\n{field}\n"
        )
    };
    for (field, want) in [
        (
            "name = \"n\"\ntype = \"boolean\"\nexpr = \"parent.o_big\"",
            "d.toml:29: field `notes.n`: `parent.o_big` reads `orders.o_big`, computed from the aggregate `orders.o_n`: a field read from another row cannot be an aggregate or be computed from one",
        ),
        (
            "name = \"n\"\ntype = \"int64\"\nparent = \"o_n\"",
            "d.toml:29: field `notes.n`: `parent` reads `orders.o_n`, an aggregate: a field read from another row cannot be an aggregate or be computed from one",
        ),
        (
            "name = \"n\"\ntype = \"boolean\"\nref = { table = \"orders\", field = \"o_big\" }",
            "d.toml:29: field `notes.n`: `ref` reads `orders.o_big`, computed from the aggregate `orders.o_n`: a field read from another row cannot be an aggregate or be computed from one",
        ),
    ] {
        assert_eq!(error_of(&notes(field)), want, "{field}");
    }
    let fine = notes("name = \"n\"\ntype = \"int64\"\nexpr = \"parent.o_id * 10\"");
    let d = Dataset::parse(&fine, "d.toml").unwrap();
    let b = all_rows(&d, "notes", 1, 1.0, 7);
    assert_eq!(b.iter().map(RecordBatch::num_rows).sum::<usize>(), 20);
}

/// A `hidden` field is computed and read (by expressions, references,
/// `parent` copies and aggregates) but never written.
#[test]
fn hidden_fields_are_read_but_not_written() {
    let text = "name = \"h\"\n\
        [[tables]]\nname = \"p\"\nrows = 50\n\
        [[tables.fields]]\nname = \"p_id\"\ntype = \"int64\"\nsequence = { start = 1 }\n\
        [[tables.fields]]\nname = \"p_secret\"\ntype = \"int64\"\nuniform = { min = 1, max = 1000 }\nhidden = true\n\
        [[tables.fields]]\nname = \"p_twice\"\ntype = \"int64\"\nexpr = \"p_secret * 2\"\n\
        [[tables.fields]]\nname = \"p_lines\"\ntype = \"int64\"\naggregate = { table = \"l\", count = \"*\" }\n\
        [[tables.fields]]\nname = \"p_total\"\ntype = \"int64\"\naggregate = { table = \"l\", sum = \"l_five\" }\n\
        [[tables]]\nname = \"l\"\nchildren_of = \"p\"\ncount = { uniform = { min = 0, max = 4 } }\n\
        [[tables.fields]]\nname = \"l_five\"\ntype = \"int64\"\nconstant = 5\nhidden = true\n\
        [[tables.fields]]\nname = \"l_secret\"\ntype = \"int64\"\nparent = \"p_secret\"\n\
        [[tables]]\nname = \"o\"\nrows = 200\n\
        [[tables.fields]]\nname = \"o_secret\"\ntype = \"int64\"\nref = { table = \"p\", field = \"p_secret\", draw = \"pp\" }\n\
        [[tables.fields]]\nname = \"o_twice\"\ntype = \"int64\"\nexpr = \"pp.p_twice\"\n";
    let d = Dataset::parse(text, "h.toml").unwrap();
    let p = all_rows(&d, "p", 3, 1.0, 16);
    let names = |b: &[RecordBatch]| -> Vec<String> {
        b[0].schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    };
    assert_eq!(names(&p), ["p_id", "p_twice", "p_lines", "p_total"]);
    let ints = |b: &[RecordBatch], name: &str| -> Vec<i64> {
        b.iter()
            .flat_map(|b| {
                b.column_by_name(name)
                    .unwrap()
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect()
    };
    let twice = ints(&p, "p_twice");
    assert!(twice.iter().all(|t| t % 2 == 0 && (2..=2000).contains(t)));
    // The hidden child field is summed: five per line.
    for (lines, total) in ints(&p, "p_lines").iter().zip(ints(&p, "p_total")) {
        assert_eq!(total, 5 * lines);
    }
    // The hidden parent field is copied: its double is the parent's
    // `p_twice`, in the parent row's order.
    let l = all_rows(&d, "l", 3, 1.0, 16);
    assert_eq!(names(&l), ["l_secret"]);
    let mut at = 0;
    let secrets = ints(&l, "l_secret");
    for (i, n) in ints(&p, "p_lines").iter().enumerate() {
        for _ in 0..*n {
            assert_eq!(secrets[at] * 2, twice[i], "line {at}");
            at += 1;
        }
    }
    assert_eq!(at, secrets.len());
    // A reference reads it, and its draw's other fields agree.
    let o = all_rows(&d, "o", 3, 1.0, 64);
    for (s, t) in ints(&o, "o_secret").iter().zip(ints(&o, "o_twice")) {
        assert_eq!(s * 2, t);
    }
    // Where `hidden` does not belong.
    for (fields, want) in [
        (
            "[[fields]]\nname = \"s\"\ntype = \"struct\"\n[[fields.fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\nhidden = true\n[[fields.fields]]\nname = \"b\"\ntype = \"int64\"\nconstant = 1\n",
            "h.toml:9: field `s.a`: `hidden` is for a table's top-level fields (a field inside a struct, list or map is written with it)",
        ),
        (
            "[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\nhidden = true\n",
            "h.toml:2: every field is `hidden`: a table writes at least one",
        ),
        (
            "[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstant = 1\nhidden = \"yes\"\n[[fields]]\nname = \"b\"\ntype = \"int64\"\nconstant = 1\n",
            "h.toml:6: field `a`: `hidden` must be true or false, not a string",
        ),
        // A cycle through a hidden field is a cycle.
        (
            "[[fields]]\nname = \"a\"\ntype = \"int64\"\nexpr = \"h + 1\"\n[[fields]]\nname = \"h\"\ntype = \"int64\"\nexpr = \"a * 2\"\nhidden = true\n",
            "h.toml:2: field `a`: `when` cases or expressions form a cycle through this field",
        ),
    ] {
        let err = Dataset::parse(&format!("name = \"h\"\n{fields}"), "h.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(err, want, "{fields}");
    }
}

/// `scale()` and `rows('t')` in expressions read the run: TPC-H's clerks
/// are 1,000 per unit of scale, a key draws among a table's rows.
#[test]
fn expressions_read_the_scale_and_row_counts() {
    let text = "name = \"s\"\n\
        [[tables]]\nname = \"nation\"\nrows = 25\n\
        [[tables.fields]]\nname = \"n_key\"\ntype = \"int64\"\nsequence = { start = 0 }\n\
        [[tables]]\nname = \"supplier\"\nrows_per_scale = 100\n\
        [[tables.fields]]\nname = \"s_nation\"\ntype = \"int64\"\nexpr = \"uniform(0, rows('nation') - 1)\"\n\
        [[tables.fields]]\nname = \"s_clerk\"\ntype = \"int64\"\nexpr = \"uniform(1, CAST(1000 * scale() AS BIGINT))\"\n\
        [[tables.fields]]\nname = \"s_count\"\ntype = \"int64\"\nexpr = \"rows('supplier')\"\n\
        [[tables]]\nname = \"lines\"\nchildren_of = \"supplier\"\ncount = 2\n\
        [[tables.fields]]\nname = \"l_x\"\ntype = \"int64\"\nconstant = 1\n";
    let d = Dataset::parse(text, "s.toml").unwrap();
    for scale in [0.5, 3.0] {
        let b = all_rows(&d, "supplier", 2, scale, 64);
        let ints = |name: &str| -> Vec<i64> {
            b.iter()
                .flat_map(|b| {
                    b.column_by_name(name)
                        .unwrap()
                        .as_any()
                        .downcast_ref::<Int64Array>()
                        .unwrap()
                        .values()
                        .to_vec()
                })
                .collect()
        };
        let rows = (100.0 * scale) as i64;
        assert_eq!(ints("s_count").len() as i64, rows);
        assert!(ints("s_count").iter().all(|c| *c == rows));
        assert!(ints("s_nation").iter().all(|n| (0..25).contains(n)));
        let clerks = ints("s_clerk");
        let most = (1000.0 * scale) as i64;
        assert!(clerks.iter().all(|c| (1..=most).contains(c)), "{scale}");
        assert!(clerks.iter().any(|c| *c > most / 2), "{scale}");
    }
    for (bad, want) in [
        (
            text.replace("rows('supplier')", "rows('lines')"),
            "s.toml:20: field `supplier.s_count`: rows('lines'): table `lines` is a child table, whose rows follow its parents' counts; `rows` reads a table with `rows` or `rows_per_scale` (nation, supplier)",
        ),
        (
            text.replace("rows('supplier')", "rows('nope')"),
            "s.toml:20: field `supplier.s_count`: rows('nope'): the dataset has no table `nope`; the tables with rows of their own are nation, supplier",
        ),
        (
            text.replace("rows('supplier')", "rows(supplier)"),
            "s.toml:20: field `supplier.s_count`: `expr` at column 6: unknown name `supplier`; the fields it can read are s_nation, s_clerk",
        ),
    ] {
        assert_eq!(
            Dataset::parse(&bad, "s.toml").unwrap_err().to_string(),
            want
        );
    }
    let one = "name = \"o\"\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nexpr = \"rows('x')\"\n";
    assert_eq!(
        Dataset::parse(one, "o.toml").unwrap_err().to_string(),
        "o.toml:2: field `a`: rows('x') reads a table of a dataset; this spec has no `[[tables]]`"
    );
    // Outside a dataset the scale is 1.
    let one = "name = \"o\"\n[[fields]]\nname = \"a\"\ntype = \"float64\"\nexpr = \"scale()\"\n";
    let spec = strata_gen::Spec::parse(one, "o.toml").unwrap();
    let b = spec
        .generator(1)
        .unwrap()
        .generate(0, 10, &mut Default::default())
        .unwrap();
    let a = b
        .column(0)
        .as_any()
        .downcast_ref::<arrow_array::Float64Array>()
        .unwrap();
    assert!(a.values().iter().all(|v| *v == 1.0));
}
