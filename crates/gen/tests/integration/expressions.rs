//! Expression fields (`expr = "SQL"`): values equal the same arithmetic
//! done here on the generated siblings (decimals exactly), division by
//! zero is null, `uniform` terms stay within their bounds and follow the
//! seed, batches do not change a value, and bad expressions get one clear
//! error naming the line, field and column.

use arrow_array::{
    Array, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray,
};
use strata_gen::BatchGenerator;
use strata_gen::{Dataset, Spec};

const SPEC: &str = r#"
name = "ex"

[[fields]]
name = "qty"
type = "int32"
uniform = { min = -3, max = 50 }
null_rate = 0.1

[[fields]]
name = "price"
type = "decimal(12, 2)"
uniform = { min = 0.01, max = 999.99 }

[[fields]]
name = "discount"
type = "decimal(4, 2)"
weighted = { values = [0.00, 0.05, 0.10] }

[[fields]]
name = "ship"
type = "date32"
uniform = { min = 1995-01-01, max = 1998-12-31 }

[[fields]]
name = "net"
type = "decimal(15, 2)"
expr = "qty * price * (1 - discount)"

[[fields]]
name = "receipt"
type = "date32"
expr = "ship + uniform(1, 30)"

[[fields]]
name = "late"
type = "int64"
expr = "receipt - ship + uniform(100, 100)"

[[fields]]
name = "status"
type = "utf8"
expr = "CASE WHEN receipt < DATE '1996-06-17' THEN 'F' WHEN qty IS NULL THEN 'N' ELSE 'O' END"

[[fields]]
name = "per"
type = "float64"
expr = "price / qty"

[[fields]]
name = "half"
type = "int64"
expr = "qty // 2 + qty % 3"

[[fields]]
name = "label"
type = "utf8"
expr = "'C#' || lpad(CAST(qty AS VARCHAR), 5, '0')"

[[fields]]
name = "tag"
type = "utf8"
expr = "concat('q', qty, '-', discount)"

[[fields]]
name = "lo"
type = "int64"
expr = "least(qty, 10, coalesce(qty, -7) + 20)"

[[fields]]
name = "rounded"
type = "int32"
expr = "CAST(price / 100 AS INTEGER)"

[[fields]]
name = "tenths"
type = "decimal(9, 1)"
expr = "round(price, 1)"

[[fields]]
name = "flag"
type = "boolean"
expr = "qty BETWEEN 10 AND 20 OR discount IN (0.10) AND NOT qty > 40"
"#;

fn batches(spec: &Spec, seed: u64, rows: u64, batch: u64) -> Vec<RecordBatch> {
    let g = spec.generator(seed).unwrap();
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

fn col<A: 'static, T>(
    bs: &[RecordBatch],
    name: &str,
    f: impl Fn(&A, usize) -> T,
) -> Vec<Option<T>> {
    bs.iter()
        .flat_map(|b| {
            let a = b.column_by_name(name).unwrap();
            let typed = a.as_any().downcast_ref::<A>().unwrap();
            (0..b.num_rows())
                .map(|i| a.is_valid(i).then(|| f(typed, i)))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `units` at `scale` rounded half away from zero to `to` digits.
fn rescale(units: i128, scale: u32, to: u32) -> i128 {
    if to >= scale {
        return units * 10i128.pow(to - scale);
    }
    let d = 10i128.pow(scale - to);
    let (q, r) = (units / d, units % d);
    if 2 * r.abs() >= d {
        q + units.signum()
    } else {
        q
    }
}

#[test]
fn expressions_equal_the_same_arithmetic_on_their_inputs() {
    let spec = Spec::parse(SPEC, "ex.toml").unwrap();
    let b = batches(&spec, 3, 20_000, 4096);
    let qty = col(&b, "qty", |a: &Int32Array, i| a.value(i));
    let price = col(&b, "price", |a: &Decimal128Array, i| a.value(i));
    let discount = col(&b, "discount", |a: &Decimal128Array, i| a.value(i));
    let ship = col(&b, "ship", |a: &Date32Array, i| a.value(i));
    let net = col(&b, "net", |a: &Decimal128Array, i| a.value(i));
    let receipt = col(&b, "receipt", |a: &Date32Array, i| a.value(i));
    let late = col(&b, "late", |a: &Int64Array, i| a.value(i));
    let status = col(&b, "status", |a: &StringArray, i| a.value(i).to_string());
    let per = col(&b, "per", |a: &Float64Array, i| a.value(i));
    let half = col(&b, "half", |a: &Int64Array, i| a.value(i));
    let label = col(&b, "label", |a: &StringArray, i| a.value(i).to_string());
    let tag = col(&b, "tag", |a: &StringArray, i| a.value(i).to_string());
    let lo = col(&b, "lo", |a: &Int64Array, i| a.value(i));
    let rounded = col(&b, "rounded", |a: &Int32Array, i| a.value(i));
    let tenths = col(&b, "tenths", |a: &Decimal128Array, i| a.value(i));
    let flag = col(&b, "flag", |a: &BooleanArray, i| a.value(i));
    let cutoff = 9664; // 1996-06-17
    let (mut nulls, mut zero_div, mut days_seen) = (0, 0, [false; 31]);
    for i in 0..qty.len() {
        let (p, d, s) = (price[i].unwrap(), discount[i].unwrap(), ship[i].unwrap());
        // qty * price * (1 - discount): scale 2 + 2, rounded to 2.
        let want_net = qty[i].map(|q| rescale(i128::from(q) * p * (100 - d), 4, 2));
        assert_eq!(net[i], want_net, "row {i}");
        let r = receipt[i].unwrap();
        assert!((1..=30).contains(&(r - s)), "row {i}");
        days_seen[(r - s) as usize] = true;
        assert_eq!(late[i], Some(i64::from(r - s) + 100));
        let want_status = if r < cutoff {
            "F"
        } else if qty[i].is_none() {
            "N"
        } else {
            "O"
        };
        assert_eq!(status[i].as_deref(), Some(want_status));
        match qty[i] {
            None => {
                nulls += 1;
                assert_eq!(per[i], None);
                assert_eq!(half[i], None);
                assert_eq!(label[i], None);
                assert_eq!(tag[i].as_deref(), Some(format!("q-0.{d:02}").as_str()));
                // least ignores the null: least(10, -7 + 20).
                assert_eq!(lo[i], Some(10));
            }
            Some(0) => {
                zero_div += 1;
                assert_eq!(per[i], None, "division by zero is null");
                assert_eq!(half[i], Some(0));
            }
            Some(q) => {
                let want = (p as f64 / 100.0) / f64::from(q);
                let got = per[i].unwrap();
                assert!(
                    (got - want).abs() <= want.abs() * 1e-12,
                    "row {i}: {got} {want}"
                );
                // Integer division and remainder truncate toward zero.
                assert_eq!(half[i], Some(i64::from(q / 2 + q % 3)));
                assert_eq!(label[i], Some(format!("C#{:0>5}", q.to_string())));
                assert_eq!(tag[i], Some(format!("q{q}-0.{d:02}")));
                assert_eq!(lo[i], Some(i64::from(q.min(10).min(q + 20))));
            }
        }
        // CAST rounds half away from zero; round() to one digit.
        assert_eq!(rounded[i], Some(rescale(p, 4, 0) as i32), "row {i}");
        assert_eq!(tenths[i], Some(rescale(p, 2, 1)));
        let q = qty[i];
        let want_flag =
            q.is_some_and(|q| (10..=20).contains(&q)) || (d == 10 && q.is_some_and(|q| q <= 40));
        // Kleene logic: a null qty makes `qty BETWEEN` null; OR with a
        // false right side stays null.
        match q {
            Some(_) => assert_eq!(flag[i], Some(want_flag), "row {i}"),
            None => assert!(flag[i].is_none() || flag[i] == Some(true)),
        }
    }
    assert!(nulls > 1000 && zero_div > 100, "{nulls} {zero_div}");
    assert!(days_seen[1..].iter().all(|s| *s));
}

#[test]
fn expressions_do_not_depend_on_batches_and_follow_the_seed() {
    let spec = Spec::parse(SPEC, "ex.toml").unwrap();
    let one = batches(&spec, 3, 3000, 3000);
    let small = batches(&spec, 3, 3000, 7);
    let get = |bs: &[RecordBatch]| col(bs, "receipt", |a: &Date32Array, i| a.value(i));
    assert_eq!(get(&one), get(&small));
    let other = batches(&spec, 4, 3000, 3000);
    assert_ne!(get(&one), get(&other));
}

fn error_of(fields: &str) -> String {
    let text = format!(
        "name = \"e\"\n[[fields]]\nname = \"a\"\ntype = \"int32\"\nuniform = {{ min = 1, max = 5 }}\n[[fields]]\nname = \"d\"\ntype = \"date32\"\nuniform = {{ min = 2000-01-01, max = 2000-12-31 }}\n{fields}"
    );
    Spec::parse(&text, "e.toml").unwrap_err().to_string()
}

#[test]
fn bad_expressions_name_the_field_and_the_column() {
    let x =
        |ty: &str, e: &str| format!("[[fields]]\nname = \"x\"\ntype = \"{ty}\"\nexpr = \"{e}\"\n");
    let cases = [
        (
            x("int64", "a + b"),
            "e.toml:10: field `x`: `expr` at column 5: unknown name `b`; the fields it can read are a, d",
        ),
        (
            x("date32", "d + 'x'"),
            "e.toml:10: field `x`: `expr` at column 1: type mismatch: date + string",
        ),
        (
            x("int64", "a * 1.5"),
            "e.toml:10: field `x`: `expr` at column 1: type mismatch: the expression gives a decimal(21, 1), but the field is Int64 (CAST it to an integer: CAST(... AS BIGINT) rounds)",
        ),
        (
            x("decimal(38, 2)", "CAST(a AS DECIMAL(38,20)) * CAST(a AS DECIMAL(30,20))"),
            "e.toml:10: field `x`: `expr` at column 6: decimal overflow: decimal(38, 20) * decimal(30, 20) needs a scale of 40, more than 38; cast an operand to fewer decimal places",
        ),
        (
            x("int64", "frobnicate(a)"),
            "e.toml:10: field `x`: `expr` at column 1: unknown function `frobnicate`; spec expressions have coalesce, least, greatest, concat, lpad, substring (substr), round, uniform, scale, rows",
        ),
        (
            x("int64", "x + 1"),
            "e.toml:10: field `x`: `expr` at column 1: the expression reads its own field `x`",
        ),
        (
            x("int32", "CASE WHEN a > 2 THEN 1 ELSE 'x' END"),
            "e.toml:10: field `x`: `expr` at column 1: type mismatch: the CASE results are integer, string",
        ),
        (
            x("boolean", "a < d"),
            "e.toml:10: field `x`: `expr` at column 1: type mismatch: cannot compare an integer with a date",
        ),
        (
            x("int64", "uniform(5, 1)"),
            "e.toml:10: field `x`: `expr` at column 1: uniform needs min <= max, not 5 and 1",
        ),
        (
            "[[fields]]\nname = \"x\"\ntype = \"int64\"\nexpr = \"y + 1\"\n[[fields]]\nname = \"y\"\ntype = \"int64\"\nexpr = \"x * 2\"\n".into(),
            "e.toml:10: field `x`: `when` cases or expressions form a cycle through this field",
        ),
        (
            "[[fields]]\nname = \"l\"\ntype = \"list\"\nlength = 2\nitem = { type = \"int32\", expr = \"1\" }\n".into(),
            "e.toml:14: field `l.item`: `expr` computes a value from sibling fields; a list item or map entry has none (give the expression to a field of a struct inside the list)",
        ),
    ];
    for (fields, want) in cases {
        assert_eq!(error_of(&fields), want, "{fields}");
    }
    // A parse error says where the SQL went wrong.
    let e = error_of(&x("int64", "a + * 2"));
    assert!(
        e.starts_with("e.toml:10: field `x`: `expr` at column 5: "),
        "{e}"
    );
}

#[test]
fn expressions_read_siblings_inside_structs_and_in_datasets() {
    let d = Dataset::parse(
        r#"
name = "d"
[[tables]]
name = "t"
rows = 100
[[tables.fields]]
name = "id"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "s"
type = "struct"
[[tables.fields.fields]]
name = "a"
type = "int64"
uniform = { min = 1, max = 9 }
[[tables.fields.fields]]
name = "b"
type = "int64"
expr = "a * 10"
[[tables]]
name = "u"
rows = 50
[[tables.fields]]
name = "k"
type = "int64"
ref = { table = "t", field = "id" }
[[tables.fields]]
name = "code"
type = "utf8"
expr = "'K' || lpad(CAST(k AS VARCHAR), 4, '0')"
"#,
        "d.toml",
    )
    .unwrap();
    let g = d.generator(0, 1, 1.0).unwrap();
    let b = g.generate(0, 100, &mut Default::default()).unwrap();
    let s = b
        .column_by_name("s")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::StructArray>()
        .unwrap();
    let a = s.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let bb = s.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
    for i in 0..100 {
        assert_eq!(bb.value(i), a.value(i) * 10);
    }
    let g = d.generator(1, 1, 1.0).unwrap();
    let b = g.generate(0, 50, &mut Default::default()).unwrap();
    let k = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let code = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    for i in 0..50 {
        assert_eq!(code.value(i), format!("K{:04}", k.value(i)));
    }
}

const AGG: &str = r#"
name = "agg"
[[tables]]
name = "orders"
rows = 2000
[[tables.fields]]
name = "o_key"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "o_total"
type = "decimal(15, 2)"
aggregate = { table = "lines", sum = "l_price" }
[[tables.fields]]
name = "o_lines"
type = "int32"
aggregate = { table = "lines", count = "*" }
[[tables.fields]]
name = "o_priced"
type = "int64"
aggregate = { table = "lines", count = "l_price" }
[[tables.fields]]
name = "o_top_qty"
type = "int64"
aggregate = { table = "lines", max = "l_qty" }
[[tables.fields]]
name = "o_all_small"
type = "boolean"
aggregate = { table = "lines", all = "l_small" }
[[tables]]
name = "lines"
children_of = "orders"
count = { weighted = { values = [0, 1, 4] } }
[[tables.fields]]
name = "l_key"
type = "int64"
parent = "o_key"
[[tables.fields]]
name = "l_qty"
type = "int32"
uniform = { min = 1, max = 50 }
null_rate = 0.1
[[tables.fields]]
name = "l_unit"
type = "decimal(8, 2)"
uniform = { min = 1.00, max = 999.99 }
[[tables.fields]]
name = "l_price"
type = "decimal(12, 2)"
expr = "l_qty * l_unit"
[[tables.fields]]
name = "l_small"
type = "boolean"
expr = "l_qty < 40"
"#;

#[test]
fn aggregates_equal_a_group_by_over_the_children() {
    use std::collections::HashMap;
    let d = Dataset::parse(AGG, "agg.toml").unwrap();
    let orders = crate::dataset::all_rows(&d, "orders", 5, 1.0, 333);
    let lines = crate::dataset::all_rows(&d, "lines", 5, 1.0, 2000);
    // Brute force over the child table.
    #[derive(Default)]
    struct G {
        rows: i64,
        sum: Option<i128>,
        priced: i64,
        top: Option<i64>,
        all: Option<bool>,
    }
    let mut by: HashMap<i64, G> = HashMap::new();
    let keys = col(&lines, "l_key", |a: &Int64Array, i| a.value(i));
    let price = col(&lines, "l_price", |a: &Decimal128Array, i| a.value(i));
    let qty = col(&lines, "l_qty", |a: &Int32Array, i| a.value(i));
    let small = col(&lines, "l_small", |a: &BooleanArray, i| a.value(i));
    for i in 0..keys.len() {
        let g = by.entry(keys[i].unwrap()).or_default();
        g.rows += 1;
        if let Some(p) = price[i] {
            g.sum = Some(g.sum.unwrap_or(0) + p);
            g.priced += 1;
        }
        if let Some(q) = qty[i] {
            g.top = Some(g.top.map_or(i64::from(q), |t| t.max(i64::from(q))));
        }
        if let Some(b) = small[i] {
            g.all = Some(g.all.unwrap_or(true) && b);
        }
    }
    let okey = col(&orders, "o_key", |a: &Int64Array, i| a.value(i));
    let total = col(&orders, "o_total", |a: &Decimal128Array, i| a.value(i));
    let n = col(&orders, "o_lines", |a: &Int32Array, i| a.value(i));
    let priced = col(&orders, "o_priced", |a: &Int64Array, i| a.value(i));
    let top = col(&orders, "o_top_qty", |a: &Int64Array, i| a.value(i));
    let all = col(&orders, "o_all_small", |a: &BooleanArray, i| a.value(i));
    let mut empty = 0;
    for i in 0..okey.len() {
        let g = by.remove(&okey[i].unwrap()).unwrap_or_default();
        if g.rows == 0 {
            empty += 1;
        }
        assert_eq!(n[i], Some(g.rows as i32), "order {i}");
        assert_eq!(total[i], g.sum, "order {i}");
        assert_eq!(priced[i], Some(g.priced));
        assert_eq!(top[i], g.top);
        assert_eq!(all[i], g.all);
    }
    assert!(by.is_empty(), "children without a parent");
    assert!((500..=850).contains(&empty), "{empty}");
}

#[test]
fn bad_aggregates_are_refused() {
    let with = |agg: &str, ty: &str| {
        AGG.replace(
        "name = \"o_total\"\ntype = \"decimal(15, 2)\"\naggregate = { table = \"lines\", sum = \"l_price\" }",
        &format!("name = \"o_total\"\ntype = \"{ty}\"\naggregate = {agg}"),
    )
    };
    let err = |t: String| Dataset::parse(&t, "agg.toml").unwrap_err().to_string();
    assert_eq!(
        err(with("{ table = \"orders\", sum = \"o_key\" }", "int64")),
        "agg.toml:10: field `orders.o_total`: `aggregate` reads the children of each row: table `orders` is not a child table of `orders` (give it `children_of = \"orders\"`)"
    );
    assert_eq!(
        err(with("{ table = \"lines\", sum = \"l_price\" }", "int64")),
        "agg.toml:10: field `orders.o_total`: type mismatch: sum of Decimal128(12, 2) cannot fill a field of type Int64"
    );
    assert_eq!(
        err(with("{ table = \"lines\", sum = \"l_nope\" }", "int64")),
        "agg.toml:10: field `orders.o_total`: table `lines` has no top-level field `l_nope`"
    );
    assert!(
        err(with("{ table = \"lines\", sum = \"*\" }", "int64"))
            .contains("`sum` needs a field, not `*`")
    );
    let plain = "name = \"p\"\n[[fields]]\nname = \"a\"\ntype = \"int64\"\naggregate = { table = \"x\", count = \"*\" }\n";
    assert!(
        Spec::parse(plain, "p.toml")
            .unwrap_err()
            .to_string()
            .contains("`aggregate` reads the rows of a child table")
    );
}

/// The spec of [`error_of`]'s fields plus `fields`, generated for `rows`
/// rows in batches of 1000.
fn generated(fields: &str, rows: u64) -> Result<Vec<RecordBatch>, String> {
    let text = format!(
        "name = \"e\"\n[[fields]]\nname = \"a\"\ntype = \"int32\"\nuniform = {{ min = 1, max = 5 }}\n[[fields]]\nname = \"d\"\ntype = \"date32\"\nuniform = {{ min = 2000-01-01, max = 2000-12-31 }}\n{fields}"
    );
    let spec = Spec::parse(&text, "e.toml").map_err(|e| e.to_string())?;
    let g = spec.generator(5).unwrap();
    let mut s = Default::default();
    (0..rows)
        .step_by(1000)
        .map(|at| {
            g.generate(at, (rows - at).min(1000) as usize, &mut s)
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn field(name: &str, ty: &str, expr: &str) -> String {
    format!("[[fields]]\nname = \"{name}\"\ntype = \"{ty}\"\nexpr = \"{expr}\"\n")
}

#[test]
fn long_expressions_are_refused_and_long_in_lists_work() {
    let chain = vec!["a"; 600].join(" + ");
    assert_eq!(
        error_of(&field("x", "int64", &chain)),
        "e.toml:10: field `x`: `expr` at column 1: the expression nests more than 64 levels deep; split it into fields that read each other"
    );
    // 64 levels are fine: 60 terms.
    let b = generated(&field("x", "int64", &vec!["a"; 60].join(" + ")), 500).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| x.value(i));
    let x = col(&b, "x", |x: &Int64Array, i| x.value(i));
    for (a, x) in a.iter().zip(&x) {
        assert_eq!(x.unwrap(), 60 * i64::from(a.unwrap()));
    }
    // An IN list of 3000 items is one node, not 3000 levels.
    let items: Vec<String> = (1000..4000).chain([3]).map(|i| i.to_string()).collect();
    let e = format!("a IN ({})", items.join(", "));
    let b = generated(&field("x", "boolean", &e), 2000).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| x.value(i));
    let x = col(&b, "x", |x: &BooleanArray, i| x.value(i));
    for (a, x) in a.iter().zip(&x) {
        assert_eq!(*x, Some(a.unwrap() == 3));
    }
    // `x IN (..., NULL)` is null where nothing matches, as SQL's ORs.
    let b = generated(&field("x", "boolean", "a IN (3, NULL)"), 500).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| x.value(i));
    let x = col(&b, "x", |x: &BooleanArray, i| x.value(i));
    for (a, x) in a.iter().zip(&x) {
        assert_eq!(*x, (a.unwrap() == 3).then_some(true));
    }
}

#[test]
fn null_constants_and_zero_divisors_give_nulls() {
    let fields = [
        field("n1", "date32", "d + CAST(NULL AS BIGINT)"),
        field("n2", "int64", "a + 1 // 0"),
        field(
            "n3",
            "decimal(12, 2)",
            "CAST(a AS DECIMAL(10,2)) + CAST(NULL AS DECIMAL(10,2))",
        ),
        field("n4", "date32", "NULL + d"),
        field("n5", "float64", "1 / (CAST(a AS DOUBLE) * -1 * 0)"),
        field("z", "boolean", "CAST(a AS DOUBLE) * -1 * 0 = 0"),
        field("n6", "int64", "round(CAST(NULL AS BIGINT), -1)"),
        field("n7", "int64", "a // NULL"),
        field("n8", "int64", "NULL % a"),
        // An integer beside a decimal literal is widened, not squeezed
        // into the literal's two digits.
        field("small", "boolean", "a * 1000 < 2.5"),
        field("two", "boolean", "a IN (1.5, 2)"),
    ]
    .concat();
    let b = generated(&fields, 2500).unwrap();
    for name in ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"] {
        let nulls: usize = b
            .iter()
            .map(|b| b.column_by_name(name).unwrap().null_count())
            .sum();
        assert_eq!(nulls, 2500, "{name}");
    }
    // -0.0 equals 0.0, as SQL compares doubles.
    let z = col(&b, "z", |x: &BooleanArray, i| x.value(i));
    assert!(z.iter().all(|z| *z == Some(true)));
    let a = col(&b, "a", |x: &Int32Array, i| x.value(i));
    let small = col(&b, "small", |x: &BooleanArray, i| x.value(i));
    let two = col(&b, "two", |x: &BooleanArray, i| x.value(i));
    for i in 0..a.len() {
        assert_eq!(small[i], Some(false));
        assert_eq!(two[i], Some(a[i] == Some(2)));
    }
}

#[test]
fn case_and_coalesce_evaluate_only_the_branch_a_row_takes() {
    let far = "d + 9223372036854775807";
    let fields = [
        field(
            "c1",
            "date32",
            &format!("CASE WHEN a > 100 THEN {far} ELSE d END"),
        ),
        field("c2", "date32", &format!("coalesce(d, {far})")),
        field(
            "c3",
            "date32",
            "CASE WHEN a < 0 THEN CAST('nope' AS DATE) WHEN a = 2 THEN NULL ELSE d END",
        ),
        field(
            "c4",
            "int64",
            &format!("CASE WHEN a <= 5 THEN 7 WHEN {far} > d THEN 1 ELSE 2 END"),
        ),
    ]
    .concat();
    let b = generated(&fields, 3000).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| x.value(i));
    let d = col(&b, "d", |x: &Date32Array, i| x.value(i));
    let c1 = col(&b, "c1", |x: &Date32Array, i| x.value(i));
    let c2 = col(&b, "c2", |x: &Date32Array, i| x.value(i));
    let c3 = col(&b, "c3", |x: &Date32Array, i| x.value(i));
    assert_eq!(c1, d);
    assert_eq!(c2, d);
    assert!(
        col(&b, "c4", |x: &Int64Array, i| x.value(i))
            .iter()
            .all(|c| *c == Some(7))
    );
    for i in 0..a.len() {
        assert_eq!(c3[i], if a[i] == Some(2) { None } else { d[i] }, "row {i}");
    }
    // A branch (or a later condition) that fails on the rows that reach it
    // is the expression's error.
    for e in [
        format!("CASE WHEN a = 1 THEN {far} ELSE d END"),
        format!("CASE WHEN a = 3 THEN d WHEN {far} > d THEN d END"),
        format!("coalesce(CASE WHEN a = 1 THEN NULL ELSE d END, {far})"),
    ] {
        let err = generated(&field("x", "date32", &e), 3000).unwrap_err();
        assert_eq!(
            err, "line 10: table `e`: field `x`: expression: a date out of range",
            "{e}"
        );
    }
    // A date past the range on a valid row is an error, never a panic or a
    // wrapped value.
    let err = generated(&field("x", "date32", far), 10).unwrap_err();
    assert_eq!(
        err,
        "line 10: table `e`: field `x`: expression: a date out of range"
    );
}

#[test]
fn round_to_negative_digits_and_at_scale_38() {
    let fields = [
        field("r1", "int64", "round(a * 1234, -2)"),
        field("r2", "decimal(12, 0)", "round(a * 12.34, -1)"),
        field("r3", "int64", "round(a * -1250, -3)"),
        field("r4", "int64", "round(a, -30)"),
        field("h1", "decimal(1, 0)", "CAST(0.9 AS DECIMAL(38,38))"),
        field("h2", "decimal(1, 0)", "CAST(-0.5 AS DECIMAL(38,38))"),
        field(
            "h3",
            "decimal(1, 0)",
            "CAST(0.49999999999999999999999999999999999999 AS DECIMAL(38,38))",
        ),
    ]
    .concat();
    let b = generated(&fields, 1000).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| i128::from(x.value(i)));
    let r1 = col(&b, "r1", |x: &Int64Array, i| i128::from(x.value(i)));
    let r2 = col(&b, "r2", |x: &Decimal128Array, i| x.value(i));
    let r3 = col(&b, "r3", |x: &Int64Array, i| i128::from(x.value(i)));
    let r4 = col(&b, "r4", |x: &Int64Array, i| x.value(i));
    for i in 0..a.len() {
        let a = a[i].unwrap();
        assert_eq!(r1[i], Some(rescale(a * 1234, 2, 0) * 100));
        assert_eq!(r2[i], Some(rescale(a * 1234, 3, 0) * 10));
        // Half away from zero: -2500 -> -3000, -1250 -> -1000.
        assert_eq!(r3[i], Some(rescale(a * -1250, 3, 0) * 1000));
        assert_eq!(r4[i], Some(0));
    }
    let one = |name: &str| col(&b, name, |x: &Decimal128Array, i| x.value(i))[0];
    assert_eq!(
        (one("h1"), one("h2"), one("h3")),
        (Some(1), Some(-1), Some(0))
    );
    // round(x, -k) past the type's range is an error; below -38 is refused.
    assert_eq!(
        generated(&field("x", "int64", "round(9223372036854775807, -1)"), 1).unwrap_err(),
        "line 10: table `e`: field `x`: expression: round overflows integer"
    );
    assert_eq!(
        error_of(&field("x", "int64", "round(a, -39)")),
        "e.toml:10: field `x`: `expr` at column 1: round takes at least -38 digits"
    );
}

#[test]
fn timestamps_take_intervals_compare_and_print_as_sql() {
    use arrow_array::{TimestampMicrosecondArray, TimestampMillisecondArray};
    let t_field = "[[fields]]\nname = \"t\"\ntype = \"timestamp(ms, UTC)\"\nuniform = { min = 1995-01-01T00:00:00Z, max = 1995-12-31T00:00:00Z }\n";
    let fields = [
        t_field.to_string(),
        field(
            "t2",
            "timestamp(us)",
            "t + INTERVAL 90 MINUTE + a * INTERVAL 1 SECOND",
        ),
        field("t3", "timestamp(ms, UTC)", "d + INTERVAL 3 HOUR"),
        field("d2", "date32", "CAST(t AS DATE) + INTERVAL 2 DAY"),
        field(
            "late",
            "boolean",
            "t > TIMESTAMP '1995-06-17 12:00:00' AND t2 BETWEEN t AND t + INTERVAL 2 HOUR",
        ),
        field(
            "s",
            "utf8",
            "CAST(TIMESTAMP '1995-06-17 08:30:00.5' AS VARCHAR) || '|' || CAST(t AS VARCHAR)",
        ),
        field("g", "timestamp(us)", "greatest(t, d)"),
    ]
    .concat();
    let b = generated(&fields, 3000).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| i64::from(x.value(i)));
    let d = col(&b, "d", |x: &Date32Array, i| i64::from(x.value(i)));
    let t = col(&b, "t", |x: &TimestampMillisecondArray, i| {
        x.value(i) * 1000
    });
    let t2 = col(&b, "t2", |x: &TimestampMicrosecondArray, i| x.value(i));
    let t3 = col(&b, "t3", |x: &TimestampMillisecondArray, i| {
        x.value(i) * 1000
    });
    let d2 = col(&b, "d2", |x: &Date32Array, i| i64::from(x.value(i)));
    let late = col(&b, "late", |x: &BooleanArray, i| x.value(i));
    let s = col(&b, "s", |x: &StringArray, i| x.value(i).to_string());
    let g = col(&b, "g", |x: &TimestampMicrosecondArray, i| x.value(i));
    const DAY: i64 = 86_400_000_000;
    let cutoff = 9298 * DAY + 12 * 3_600_000_000; // 1995-06-17 12:00
    for i in 0..a.len() {
        let (a, d, t) = (a[i].unwrap(), d[i].unwrap(), t[i].unwrap());
        assert_eq!(t2[i], Some(t + 90 * 60_000_000 + a * 1_000_000));
        assert_eq!(t3[i], Some(d * DAY + 3 * 3_600_000_000));
        assert_eq!(d2[i], Some(t.div_euclid(DAY) + 2));
        assert_eq!(late[i], Some(t > cutoff));
        let text = chrono::DateTime::from_timestamp_micros(t)
            .unwrap()
            .naive_utc()
            .format("%Y-%m-%d %H:%M:%S");
        let frac = match t % 1_000_000 {
            0 => String::new(),
            us => format!(".{us:06}").trim_end_matches('0').to_string(),
        };
        let text = format!("{text}{frac}");
        assert_eq!(
            s[i].as_deref(),
            Some(format!("1995-06-17 08:30:00.5|{text}").as_str())
        );
        assert_eq!(g[i], Some(t.max(d * DAY)));
    }
    // The field keeps its time zone.
    assert_eq!(
        b[0].schema().field_with_name("t3").unwrap().data_type(),
        &arrow_schema::DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, Some("UTC".into()))
    );
    for (e, want) in [
        ("t - t", "type mismatch: timestamp - timestamp"),
        ("t + 1", "type mismatch: timestamp + integer"),
        (
            "INTERVAL 1 MONTH",
            "intervals are whole weeks, days, hours, minutes or seconds (INTERVAL 5 DAY); add months and years in your own terms",
        ),
    ] {
        let err = error_of(&format!("{t_field}{}", field("x", "timestamp(us)", e)));
        assert!(err.ends_with(want), "{e}: {err}");
    }
}

#[test]
fn when_conditions_test_ranges_of_siblings() {
    let fields = "[[fields]]\nname = \"p\"\ntype = \"int64\"\nuniform = { min = 1, max = 100 }\nwhen = [\n  { condition = \"d < DATE '2000-03-01'\", constant = 1000 },\n  { condition = \"a BETWEEN 2 AND 3 OR q > 40\", null_rate = 1.0 },\n]\n[[fields]]\nname = \"q\"\ntype = \"int64\"\nexpr = \"a * 10\"\n";
    let b = generated(fields, 4000).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| x.value(i));
    let d = col(&b, "d", |x: &Date32Array, i| x.value(i));
    let p = col(&b, "p", |x: &Int64Array, i| x.value(i));
    let march = 11_017; // 2000-03-01
    let mut seen = [0usize; 3];
    for i in 0..a.len() {
        let (a, d) = (a[i].unwrap(), d[i].unwrap());
        if d < march {
            assert_eq!(p[i], Some(1000), "row {i}");
            seen[0] += 1;
        } else if (2..=3).contains(&a) || a * 10 > 40 {
            assert_eq!(p[i], None, "row {i}");
            seen[1] += 1;
        } else {
            assert!((1..=100).contains(&p[i].unwrap()), "row {i}");
            seen[2] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n > 300), "{seen:?}");
    let when = |cases: &str| {
        error_of(&format!(
            "[[fields]]\nname = \"p\"\ntype = \"int64\"\nuniform = {{ min = 1, max = 100 }}\nwhen = [{cases}]\n"
        ))
    };
    for (cases, want) in [
        (
            "{ condition = \"a + 1\", null_rate = 1.0 }",
            "e.toml:14: field `p`: `condition` at column 1: a condition is a boolean test (`x < 10`, `d BETWEEN DATE '1995-01-01' AND DATE '1995-12-31'`), not an integer",
        ),
        (
            "{ condition = \"d < 'x'\", null_rate = 1.0 }",
            "e.toml:14: field `p`: `condition` at column 1: type mismatch: cannot compare a date with a string",
        ),
        (
            "{ condition = \"p > 3\", null_rate = 1.0 }",
            "e.toml:14: field `p`: `condition` at column 1: the condition reads its own field `p`",
        ),
        (
            "{ condition = \"a > 3\", field = \"a\", is_null = true, null_rate = 1.0 }",
            "e.toml:14: field `p`: a `when` case takes `condition` (an SQL test of the siblings) or `field` with `is` or `is_null`, not both",
        ),
        (
            "{ condition = \"a > 3\", null_rate = 1.0 }, { field = \"a\", is_null = true, null_rate = 1.0 }",
            "e.toml:14: field `p`: a field's `when` cases are all `condition`s, or all read one sibling with `is` or `is_null`",
        ),
        (
            "{ condition = \"parent.a > 3\", null_rate = 1.0 }",
            "e.toml:14: field `p`: `condition` at column 1: `parent.a`: a `when` condition reads sibling fields; give the value to an `expr` sibling and test that",
        ),
    ] {
        assert_eq!(when(cases), want, "{cases}");
    }
    // A branch is a byte: at most 255 cases.
    let many: Vec<String> = (0..256)
        .map(|k| format!("{{ condition = \"a = -{k}\", constant = 5 }}"))
        .collect();
    assert_eq!(
        when(&many.join(", ")),
        "e.toml:10: field `p`: a field takes at most 255 `when` cases"
    );
}

/// `CASE x WHEN literal ...` (a row's branch found by a table lookup, `x`
/// evaluated once) and `CASE`s whose branches hold few rows (evaluated for
/// those rows alone) give the rows an evaluation by hand gives: first
/// matching `WHEN`, nulls matching none, duplicates and null results.
#[test]
fn case_branches_equal_a_row_by_row_evaluation() {
    let kfield = "[[fields]]\nname = \"k\"\ntype = \"int64\"\nuniform = { min = 0, max = 29 }\nnull_rate = 0.1\n\
        [[fields]]\nname = \"s\"\ntype = \"utf8\"\nweighted = { values = [\"x\", \"y\", \"z\", \"w\"] }\nnull_rate = 0.1\n";
    let steps: String = (1..14)
        .map(|j| format!("WHEN k < {} THEN k * {j} ", 2 * j))
        .collect();
    let fields = [
        kfield.to_string(),
        field(
            "c1",
            "utf8",
            "CASE k WHEN 0 THEN 'zero' WHEN 1 THEN 'one' WHEN 2 THEN NULL WHEN 1 THEN 'again' WHEN 5 THEN 'five' ELSE 'other' END",
        ),
        field(
            "c2",
            "int64",
            "CASE k % 7 WHEN 0 THEN k WHEN 1 THEN k * 2 WHEN 2 THEN -k WHEN 3 THEN 100 WHEN 4 THEN k + a END",
        ),
        field(
            "c3",
            "utf8",
            "CASE s WHEN 'x' THEN 'X' WHEN 'y' THEN s || '!' WHEN 'q' THEN 'Q' WHEN 'z' THEN 'Z' END",
        ),
        field("c4", "int64", &format!("CASE {steps}ELSE -1 END")),
        field("c5", "utf8", "CASE k WHEN 1 THEN 'a' WHEN 2 THEN 'b' END"),
        field("c6", "int64", "coalesce(CASE WHEN k < 3 THEN NULL ELSE k END, a)"),
        field(
            "c7",
            "utf8",
            "CASE uniform(0, 9) WHEN 0 THEN 'a' WHEN 1 THEN 'b' WHEN 2 THEN 'c' WHEN 3 THEN 'd' WHEN 4 THEN 'e' WHEN 5 THEN 'f' WHEN 6 THEN 'g' WHEN 7 THEN 'h' WHEN 8 THEN 'i' WHEN 9 THEN 'j' END",
        ),
    ]
    .concat();
    let rows = 20_000;
    let b = generated(&fields, rows).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| i64::from(x.value(i)));
    let k = col(&b, "k", |x: &Int64Array, i| x.value(i));
    let s = col(&b, "s", |x: &StringArray, i| x.value(i).to_string());
    let text = |name: &str| col(&b, name, |x: &StringArray, i| x.value(i).to_string());
    let int = |name: &str| col(&b, name, |x: &Int64Array, i| x.value(i));
    let (c1, c2, c3, c4, c5, c6, c7) = (
        text("c1"),
        int("c2"),
        text("c3"),
        int("c4"),
        text("c5"),
        int("c6"),
        text("c7"),
    );
    for i in 0..rows as usize {
        let want1 = match k[i] {
            Some(0) => Some("zero"),
            Some(1) => Some("one"),
            Some(2) => None,
            Some(5) => Some("five"),
            _ => Some("other"),
        };
        assert_eq!(c1[i].as_deref(), want1, "c1 row {i}");
        let want2 = match k[i].map(|k| (k % 7, k)) {
            Some((0, k)) => Some(k),
            Some((1, k)) => Some(k * 2),
            Some((2, k)) => Some(-k),
            Some((3, _)) => Some(100),
            Some((4, k)) => a[i].map(|a| k + a),
            _ => None,
        };
        assert_eq!(c2[i], want2, "c2 row {i}");
        let want3 = match s[i].as_deref() {
            Some("x") => Some("X".to_string()),
            Some("y") => Some("y!".to_string()),
            Some("z") => Some("Z".to_string()),
            _ => None,
        };
        assert_eq!(c3[i], want3, "c3 row {i}");
        let want4 = match k[i] {
            Some(k) => (1..14).find(|j| k < 2 * j).map_or(-1, |j| k * j),
            None => -1,
        };
        assert_eq!(c4[i], Some(want4), "c4 row {i}");
        let want5 = match k[i] {
            Some(1) => Some("a"),
            Some(2) => Some("b"),
            _ => None,
        };
        assert_eq!(c5[i].as_deref(), want5, "c5 row {i}");
        let want6 = match k[i] {
            Some(k) if k >= 3 => Some(k),
            _ => a[i],
        };
        assert_eq!(c6[i], want6, "c6 row {i}");
    }
    // The operand is drawn once per row: every row takes exactly one of
    // the ten branches, each about a tenth of the rows.
    for letter in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"] {
        let got = c7.iter().filter(|c| c.as_deref() == Some(letter)).count();
        assert!((1_800..=2_200).contains(&got), "{letter}: {got}");
    }
    assert!(c7.iter().all(Option::is_some));
}

/// `substring`/`substr` read their arguments' types, and a start past
/// DuckDB's bounds is the expression's error on the rows that reach it.
#[test]
fn substrings_check_their_arguments() {
    for (e, want) in [
        (
            "substring(a, 1)",
            "e.toml:10: field `x`: `expr` at column 11: type mismatch: substring of an integer, not a string",
        ),
        (
            "substr(CAST(a AS VARCHAR), 'x')",
            "e.toml:10: field `x`: `expr` at column 28: type mismatch: substring takes an integer here, not a string",
        ),
    ] {
        assert_eq!(error_of(&field("x", "utf8", e)), want, "{e}");
    }
    let b = generated(
        &field("x", "utf8", "substring(CAST(a * 1000 AS VARCHAR), a, 2)"),
        100,
    )
    .unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| x.value(i));
    let x = col(&b, "x", |x: &StringArray, i| x.value(i).to_string());
    for i in 0..a.len() {
        let text = (a[i].unwrap() * 1000).to_string();
        let start = a[i].unwrap() as usize - 1;
        let want: String = text.chars().skip(start).take(2).collect();
        assert_eq!(x[i].as_deref(), Some(want.as_str()), "row {i}");
    }
    let err = generated(&field("x", "utf8", "substring('abc', 5000000000)"), 10).unwrap_err();
    assert_eq!(
        err,
        "line 10: table `e`: field `x`: expression: a substring start or length outside -4294967296..=4294967295"
    );
}

/// `AND` and `OR` evaluate their right side only for the rows the left
/// leaves open, as DuckDB does: an error there on another row is none.
#[test]
fn and_or_evaluate_the_right_side_only_where_it_decides() {
    let far = "d + 9223372036854775807";
    let fields = [
        field("x", "boolean", &format!("a > 100 AND {far} > d")),
        field("y", "boolean", &format!("a <= 5 OR {far} > d")),
        field("z", "boolean", "a > 2 AND a < 5 OR a = 1"),
    ]
    .concat();
    let b = generated(&fields, 3000).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| x.value(i));
    assert!(
        col(&b, "x", |x: &BooleanArray, i| x.value(i))
            .iter()
            .all(|v| *v == Some(false))
    );
    assert!(
        col(&b, "y", |x: &BooleanArray, i| x.value(i))
            .iter()
            .all(|v| *v == Some(true))
    );
    let z = col(&b, "z", |x: &BooleanArray, i| x.value(i));
    for i in 0..a.len() {
        let a = a[i].unwrap();
        assert_eq!(z[i], Some((a > 2 && a < 5) || a == 1), "row {i}");
    }
    // Where the left side leaves the row open, the right side's error is
    // the expression's.
    let err = generated(
        &field("w", "boolean", &format!("a = 3 AND {far} > d")),
        3000,
    )
    .unwrap_err();
    assert_eq!(
        err,
        "line 10: table `e`: field `w`: expression: a date out of range"
    );
}

/// `uniform(min, max)` with bounds computed per row: within them, even
/// across them, null where a bound is null or `min > max`; literal bounds
/// give the values they always gave.
#[test]
fn uniform_takes_bounds_computed_per_row() {
    let fields = [
        field("u", "int64", "uniform(1, a * 2)"),
        field("v", "int64", "uniform(a, 3)"),
        field("w", "int64", "uniform(-2, 2)"),
        field("w2", "int64", "uniform(0 - 2, 1 + 1)"),
    ]
    .concat();
    let b = generated(&fields, 20_000).unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| i64::from(x.value(i)));
    let u = col(&b, "u", |x: &Int64Array, i| x.value(i));
    let v = col(&b, "v", |x: &Int64Array, i| x.value(i));
    let mut top = [0usize; 11];
    let mut fives = 0;
    for i in 0..a.len() {
        let a = a[i].unwrap();
        let u = u[i].unwrap();
        assert!((1..=a * 2).contains(&u), "row {i}: {u} of 1..={}", a * 2);
        if a == 5 {
            fives += 1;
            top[u as usize] += 1;
        }
        match v[i] {
            Some(v) => assert!(a <= 3 && (a..=3).contains(&v), "row {i}"),
            None => assert!(a > 3, "row {i}"),
        }
    }
    for (k, n) in top.iter().enumerate().skip(1) {
        let (p, got) = (0.1, *n as f64 / fives as f64);
        let se = (p * (1.0 - p) / fives as f64).sqrt();
        assert!((got - p).abs() < 5.0 * se, "{k}: {got}");
    }
    // The same stream either way: computed bounds equal to literal ones
    // draw the same values (each field its own stream, so compare shapes).
    let w = col(&b, "w", |x: &Int64Array, i| x.value(i));
    assert!(w.iter().all(|w| (-2..=2).contains(&w.unwrap())));
    let w2 = col(&b, "w2", |x: &Int64Array, i| x.value(i));
    assert!(w2.iter().all(|w| (-2..=2).contains(&w.unwrap())));
    assert_eq!(
        error_of(&field("x", "int64", "uniform(1, d)")),
        "e.toml:10: field `x`: `expr` at column 12: type mismatch: uniform's bounds are integers, not a date"
    );
}

/// `[a, b][i]` reads item `i` of a list literal (from 1, from -1 at the
/// end, null outside), one draw of `i` per row; other indexing is a clear
/// error.
#[test]
fn list_literals_are_indexed_as_duckdb_does() {
    for (e, want) in [
        (
            "a[1]",
            "e.toml:10: field `x`: `expr` at column 1: `a[1]`: indexing reads an item of a list literal (`['a', 'b'][i]`)",
        ),
        (
            "['a', 'b'][1:2]",
            "e.toml:10: field `x`: `expr` at column 2: `['a', 'b'][1:2]`: a list literal takes one index (`['a', 'b'][i]`), not slices or fields",
        ),
        (
            "['a', 'b']['x']",
            "e.toml:10: field `x`: `expr` at column 12: type mismatch: a list index is an integer, not a string",
        ),
        (
            "['a', 2][a]",
            "e.toml:10: field `x`: `expr` at column 2: type mismatch: the list's items are string, integer",
        ),
    ] {
        assert_eq!(error_of(&field("x", "utf8", e)), want, "{e}");
    }
    let b = generated(
        &field(
            "x",
            "utf8",
            "['p', 'q', NULL, 'r'][a % 11 - 5] || ['-', '+'][uniform(1, 2)]",
        ),
        3000,
    )
    .unwrap();
    let a = col(&b, "a", |x: &Int32Array, i| x.value(i));
    let x = col(&b, "x", |x: &StringArray, i| x.value(i).to_string());
    let items = ["p", "q", "", "r"];
    let (mut plus, mut minus) = (0, 0);
    for i in 0..a.len() {
        let at = a[i].map(|a| a % 11 - 5);
        let item = match at {
            Some(k @ 1..=4) => Some(items[k as usize - 1]),
            Some(k @ -4..=-1) => Some(items[(4 + k) as usize]),
            _ => None,
        };
        match (item, x[i].as_deref()) {
            (None | Some(""), got) => assert_eq!(got, None, "row {i}"),
            (Some(want), Some(got)) => {
                assert_eq!(&got[..1], want, "row {i}");
                if got.ends_with('+') {
                    plus += 1
                } else {
                    minus += 1
                }
            }
            (Some(want), None) => panic!("row {i}: {want} wanted"),
        }
    }
    assert!(plus > 200 && minus > 200, "{plus} {minus}");
}
