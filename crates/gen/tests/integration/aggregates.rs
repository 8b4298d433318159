//! Aggregates of children beyond the common types: `uint64` child fields
//! above `i64::MAX` sum, min and max exactly (checked against a group-by
//! over the generated child table), results that do not fit the field
//! (decimal sums past 38 digits too) are one clear error, and a child's
//! own aggregate fields (of its children) can be aggregated in turn.

use std::collections::HashMap;

use arrow_array::{
    Array, BooleanArray, Decimal128Array, Int32Array, Int64Array, RecordBatch, UInt64Array,
};
use strata_gen::BatchGenerator;
use strata_gen::Dataset;

/// Column `name` of `bs`, `None` where null.
fn col<A: 'static, T>(
    bs: &[RecordBatch],
    name: &str,
    f: impl Fn(&A, usize) -> T,
) -> Vec<Option<T>> {
    bs.iter()
        .flat_map(|b| {
            let a = b
                .column_by_name(name)
                .unwrap_or_else(|| panic!("no column {name}"));
            let typed = a
                .as_any()
                .downcast_ref::<A>()
                .unwrap_or_else(|| panic!("column {name} has another type"));
            (0..b.num_rows())
                .map(|i| a.is_valid(i).then(|| f(typed, i)))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Orders whose lines carry `uint64` values on both sides of `i64::MAX`.
const BIG: &str = r#"
name = "big"
[[tables]]
name = "orders"
rows = 3000
[[tables.fields]]
name = "o_key"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "o_sum"
type = "decimal(38, 0)"
aggregate = { table = "lines", sum = "l_big" }
[[tables.fields]]
name = "o_sum_cents"
type = "decimal(24, 2)"
aggregate = { table = "lines", sum = "l_big" }
[[tables.fields]]
name = "o_min"
type = "uint64"
aggregate = { table = "lines", min = "l_big" }
[[tables.fields]]
name = "o_max"
type = "uint64"
aggregate = { table = "lines", max = "l_big" }
[[tables.fields]]
name = "o_small_sum"
type = "uint64"
aggregate = { table = "lines", sum = "l_small" }
[[tables]]
name = "lines"
children_of = "orders"
count = { uniform = { min = 0, max = 4 } }
[[tables.fields]]
name = "l_key"
type = "int64"
parent = "o_key"
[[tables.fields]]
name = "l_big"
type = "uint64"
uniform = { min = 9223372036854000000, max = 18446744073709551615 }
null_rate = 0.2
[[tables.fields]]
name = "l_small"
type = "uint64"
uniform = { min = 0, max = 4611686018427387904 }
"#;

#[test]
fn uint64_aggregates_above_i64_max_are_exact() {
    let d = Dataset::parse(BIG, "big.toml").unwrap();
    let all = |t: &str, batch: u64| crate::dataset::all_rows(&d, t, 9, 1.0, batch);
    let lines = all("lines", 4096);
    #[derive(Default, Clone, Copy)]
    struct G {
        sum: Option<i128>,
        min: Option<u64>,
        max: Option<u64>,
        small: Option<i128>,
    }
    let mut by: HashMap<i64, G> = HashMap::new();
    let keys = col(&lines, "l_key", |a: &Int64Array, i| a.value(i));
    let big = col(&lines, "l_big", |a: &UInt64Array, i| a.value(i));
    let small = col(&lines, "l_small", |a: &UInt64Array, i| a.value(i));
    let mut above = 0;
    for i in 0..keys.len() {
        let g = by.entry(keys[i].unwrap()).or_default();
        if let Some(x) = big[i] {
            above += usize::from(x > i64::MAX as u64);
            g.sum = Some(g.sum.unwrap_or(0) + i128::from(x));
            g.min = Some(g.min.map_or(x, |m| m.min(x)));
            g.max = Some(g.max.map_or(x, |m| m.max(x)));
        }
        let s = small[i].unwrap();
        g.small = Some(g.small.unwrap_or(0) + i128::from(s));
    }
    assert!(above > keys.len() / 2, "{above} of {}", keys.len());
    // The batch size changes no value.
    for batch in [3000, 97] {
        let orders = all("orders", batch);
        let okey = col(&orders, "o_key", |a: &Int64Array, i| a.value(i));
        let sum = col(&orders, "o_sum", |a: &Decimal128Array, i| a.value(i));
        let cents = col(&orders, "o_sum_cents", |a: &Decimal128Array, i| a.value(i));
        let min = col(&orders, "o_min", |a: &UInt64Array, i| a.value(i));
        let max = col(&orders, "o_max", |a: &UInt64Array, i| a.value(i));
        let small_sum = col(&orders, "o_small_sum", |a: &UInt64Array, i| a.value(i));
        let mut wide = 0;
        for i in 0..okey.len() {
            let g = by.get(&okey[i].unwrap()).copied().unwrap_or_default();
            assert_eq!(sum[i], g.sum, "order {i}");
            assert_eq!(cents[i], g.sum.map(|s| s * 100), "order {i}");
            assert_eq!(min[i], g.min, "order {i}");
            assert_eq!(max[i], g.max, "order {i}");
            assert_eq!(small_sum[i].map(i128::from), g.small, "order {i}");
            wide += usize::from(g.sum.is_some_and(|s| s > i128::from(u64::MAX)));
        }
        // Many sums pass even `u64::MAX`.
        assert!(wide > 500, "{wide}");
    }
}

/// Two lines per order, each `u64::MAX`, aggregated into `o_x` of type
/// `ty` by `agg` (`sum`, `min`, `max`).
fn at_the_top(agg: &str, ty: &str) -> String {
    format!(
        r#"
name = "top"
[[tables]]
name = "orders"
rows = 10
[[tables.fields]]
name = "o_key"
type = "int64"
sequence = {{ start = 1 }}
[[tables.fields]]
name = "o_x"
type = "{ty}"
aggregate = {{ table = "lines", {agg} = "l_big" }}
[[tables]]
name = "lines"
children_of = "orders"
count = {{ uniform = {{ min = 2, max = 2 }} }}
[[tables.fields]]
name = "l_big"
type = "uint64"
weighted = {{ values = [18446744073709551615] }}
"#
    )
}

/// The orders of [`at_the_top`], or the error that generating them gives.
fn top_orders(agg: &str, ty: &str) -> Result<RecordBatch, String> {
    let d = Dataset::parse(&at_the_top(agg, ty), "top.toml").map_err(|e| e.to_string())?;
    let g = d.generator(0, 1, 1.0).map_err(|e| e.to_string())?;
    g.generate(0, 10, &mut Default::default())
        .map_err(|e| e.to_string())
}

#[test]
fn uint64_results_that_do_not_fit_the_field_are_refused() {
    let top = top_orders("max", "uint64").unwrap();
    let x = col(&[top], "o_x", |a: &UInt64Array, i| a.value(i));
    assert_eq!(x, vec![Some(u64::MAX); 10]);
    let top = top_orders("sum", "decimal(20, 0)").unwrap();
    let x = col(&[top], "o_x", |a: &Decimal128Array, i| a.value(i));
    assert_eq!(x, vec![Some(2 * i128::from(u64::MAX)); 10]);
    let err = |agg, ty| top_orders(agg, ty).unwrap_err();
    assert_eq!(
        err("sum", "uint64"),
        "top.toml:10: table `orders`: field `o_x`: aggregate: the result does not fit UInt64: Cast error: value of 36893488147419103230 is out of range UInt64"
    );
    assert_eq!(
        err("max", "int64"),
        "top.toml:10: table `orders`: field `o_x`: aggregate: the result does not fit Int64: Cast error: Can't cast value 18446744073709551615 to type Int64"
    );
    assert_eq!(
        err("sum", "decimal(19, 0)"),
        "top.toml:10: table `orders`: field `o_x`: aggregate: the result does not fit Decimal128(19, 0): Invalid argument error: 36893488147419103230 is too large to store in a Decimal128 of precision 19. Max is 9999999999999999999"
    );
    // Types the operation does not give are refused when parsing.
    assert_eq!(
        err("sum", "float64"),
        "top.toml:10: field `orders.o_x`: type mismatch: sum of UInt64 cannot fill a field of type Float64"
    );
    assert_eq!(
        err("min", "decimal(20, 0)"),
        "top.toml:10: field `orders.o_x`: type mismatch: min of UInt64 cannot fill a field of type Decimal128(20, 0)"
    );
}

/// Orders, their lines and the lines' parts: lines aggregate their parts
/// (and an expression reads such an aggregate), orders aggregate those
/// aggregates.
const NESTED: &str = r#"
name = "nested"
[[tables]]
name = "orders"
rows = 1500
[[tables.fields]]
name = "o_key"
type = "int64"
sequence = { start = 1 }
[[tables.fields]]
name = "o_parts"
type = "int64"
aggregate = { table = "lines", sum = "l_parts" }
[[tables.fields]]
name = "o_weight"
type = "int64"
aggregate = { table = "lines", sum = "l_weight" }
[[tables.fields]]
name = "o_top"
type = "int32"
aggregate = { table = "lines", max = "l_top" }
[[tables.fields]]
name = "o_all_light"
type = "boolean"
aggregate = { table = "lines", all = "l_light" }
[[tables]]
name = "lines"
children_of = "orders"
count = { uniform = { min = 0, max = 4 } }
[[tables.fields]]
name = "l_order"
type = "int64"
parent = "o_key"
[[tables.fields]]
name = "l_no"
type = "int32"
sequence = { per_parent = true, start = 1 }
[[tables.fields]]
name = "l_parts"
type = "int64"
aggregate = { table = "parts", count = "*" }
[[tables.fields]]
name = "l_weight"
type = "int64"
aggregate = { table = "parts", sum = "p_weight" }
[[tables.fields]]
name = "l_top"
type = "int32"
aggregate = { table = "parts", max = "p_weight" }
[[tables.fields]]
name = "l_light"
type = "boolean"
expr = "l_weight < 150"
[[tables]]
name = "parts"
children_of = "lines"
count = { uniform = { min = 0, max = 3 } }
[[tables.fields]]
name = "p_order"
type = "int64"
parent = "l_order"
[[tables.fields]]
name = "p_line"
type = "int32"
parent = "l_no"
[[tables.fields]]
name = "p_weight"
type = "int32"
uniform = { min = 1, max = 100 }
null_rate = 0.1
"#;

#[test]
fn aggregates_of_a_childs_aggregates_equal_a_group_by_of_group_bys() {
    let d = Dataset::parse(NESTED, "nested.toml").unwrap();
    let all = |t: &str, batch: u64| crate::dataset::all_rows(&d, t, 4, 1.0, batch);
    // Lines from their parts.
    #[derive(Default, Clone, Copy)]
    struct Line {
        parts: i64,
        weight: Option<i64>,
        top: Option<i32>,
    }
    let parts = all("parts", 5000);
    let p_order = col(&parts, "p_order", |a: &Int64Array, i| a.value(i));
    let p_line = col(&parts, "p_line", |a: &Int32Array, i| a.value(i));
    let p_weight = col(&parts, "p_weight", |a: &Int32Array, i| a.value(i));
    let mut by_line: HashMap<(i64, i32), Line> = HashMap::new();
    for i in 0..p_order.len() {
        let l = by_line
            .entry((p_order[i].unwrap(), p_line[i].unwrap()))
            .or_default();
        l.parts += 1;
        if let Some(w) = p_weight[i] {
            l.weight = Some(l.weight.unwrap_or(0) + i64::from(w));
            l.top = Some(l.top.map_or(w, |t| t.max(w)));
        }
    }
    let lines = all("lines", 5000);
    let l_order = col(&lines, "l_order", |a: &Int64Array, i| a.value(i));
    let l_no = col(&lines, "l_no", |a: &Int32Array, i| a.value(i));
    let l_parts = col(&lines, "l_parts", |a: &Int64Array, i| a.value(i));
    let l_weight = col(&lines, "l_weight", |a: &Int64Array, i| a.value(i));
    let l_top = col(&lines, "l_top", |a: &Int32Array, i| a.value(i));
    let l_light = col(&lines, "l_light", |a: &BooleanArray, i| a.value(i));
    // Orders from their lines' generated values.
    #[derive(Default, Clone, Copy)]
    struct Order {
        parts: Option<i64>,
        weight: Option<i64>,
        top: Option<i32>,
        all_light: Option<bool>,
    }
    let mut by_order: HashMap<i64, Order> = HashMap::new();
    let mut nulls = 0;
    for i in 0..l_order.len() {
        let key = (l_order[i].unwrap(), l_no[i].unwrap());
        let want = by_line.remove(&key).unwrap_or_default();
        assert_eq!(l_parts[i], Some(want.parts), "line {key:?}");
        assert_eq!(l_weight[i], want.weight, "line {key:?}");
        assert_eq!(l_top[i], want.top, "line {key:?}");
        assert_eq!(l_light[i], want.weight.map(|w| w < 150), "line {key:?}");
        nulls += usize::from(want.weight.is_none());
        let o = by_order.entry(key.0).or_default();
        o.parts = Some(o.parts.unwrap_or(0) + l_parts[i].unwrap());
        if let Some(w) = l_weight[i] {
            o.weight = Some(o.weight.unwrap_or(0) + w);
        }
        if let Some(t) = l_top[i] {
            o.top = Some(o.top.map_or(t, |m| m.max(t)));
        }
        if let Some(b) = l_light[i] {
            o.all_light = Some(o.all_light.unwrap_or(true) && b);
        }
    }
    assert!(by_line.is_empty(), "parts without a line");
    assert!(nulls > 500, "{nulls} lines without a weight");
    for batch in [1500, 61] {
        let orders = all("orders", batch);
        let okey = col(&orders, "o_key", |a: &Int64Array, i| a.value(i));
        let o_parts = col(&orders, "o_parts", |a: &Int64Array, i| a.value(i));
        let o_weight = col(&orders, "o_weight", |a: &Int64Array, i| a.value(i));
        let o_top = col(&orders, "o_top", |a: &Int32Array, i| a.value(i));
        let o_all = col(&orders, "o_all_light", |a: &BooleanArray, i| a.value(i));
        let (mut some_false, mut some_true) = (false, false);
        for i in 0..okey.len() {
            let want = by_order.get(&okey[i].unwrap()).copied().unwrap_or_default();
            assert_eq!(o_parts[i], want.parts, "order {i}");
            assert_eq!(o_weight[i], want.weight, "order {i}");
            assert_eq!(o_top[i], want.top, "order {i}");
            assert_eq!(o_all[i], want.all_light, "order {i}");
            some_false |= want.all_light == Some(false);
            some_true |= want.all_light == Some(true);
        }
        assert!(some_false && some_true);
    }
}

#[test]
fn decimal_sums_past_38_digits_are_refused() {
    // A line's `l_big` is `value`; `lines` of them per order.
    let spec = |value: &str, lines: u32| {
        at_the_top("sum", "decimal(38, 0)")
            .replace(
                "type = \"uint64\"\nweighted = { values = [18446744073709551615] }",
                &format!("type = \"decimal(38, 0)\"\nexpr = \"CAST({value} AS DECIMAL(38, 0))\""),
            )
            .replace("min = 2, max = 2", &format!("min = {lines}, max = {lines}"))
    };
    let orders = |value: &str, lines: u32| {
        let d = Dataset::parse(&spec(value, lines), "top.toml").unwrap();
        let g = d.generator(0, 1, 1.0).unwrap();
        g.generate(0, 10, &mut Default::default())
            .map_err(|e| e.to_string())
    };
    let nines = "9".repeat(38);
    let top = orders(&nines, 1).unwrap();
    let x = col(&[top], "o_x", |a: &Decimal128Array, i| a.value(i));
    assert_eq!(x, vec![Some(10i128.pow(38) - 1); 10]);
    // 6e37 twice fits `i128` but not 38 digits; 10^38 - 1 twice neither.
    for value in [format!("6{}", "0".repeat(37)), nines] {
        assert_eq!(
            orders(&value, 2).unwrap_err(),
            "top.toml:10: table `orders`: field `o_x`: aggregate: a decimal sum overflows decimal(38)"
        );
    }
}

/// An aggregate of an SQL expression over the child's fields equals the
/// same aggregate of a child field computing that expression, and a
/// group-by over the child rows by hand.
#[test]
fn aggregates_of_expressions_equal_those_of_a_field() {
    let text = "name = \"x\"\n\
        [[tables]]\nname = \"o\"\nrows = 300\n\
        [[tables.fields]]\nname = \"o_id\"\ntype = \"int64\"\nsequence = { start = 1 }\n\
        [[tables.fields]]\nname = \"o_net\"\ntype = \"decimal(18, 4)\"\naggregate = { table = \"l\", sum = \"l_price * (1 - l_discount)\" }\n\
        [[tables.fields]]\nname = \"o_net_field\"\ntype = \"decimal(18, 4)\"\naggregate = { table = \"l\", sum = \"l_net\" }\n\
        [[tables.fields]]\nname = \"o_most\"\ntype = \"int64\"\naggregate = { table = \"l\", max = \"l_qty * 2\" }\n\
        [[tables.fields]]\nname = \"o_big\"\ntype = \"int64\"\naggregate = { table = \"l\", count = \"CASE WHEN l_qty > 5 THEN 1 END\" }\n\
        [[tables]]\nname = \"l\"\nchildren_of = \"o\"\ncount = { uniform = { min = 0, max = 6 } }\n\
        [[tables.fields]]\nname = \"l_key\"\ntype = \"int64\"\nparent = \"o_id\"\n\
        [[tables.fields]]\nname = \"l_qty\"\ntype = \"int64\"\nuniform = { min = 1, max = 10 }\n\
        [[tables.fields]]\nname = \"l_price\"\ntype = \"decimal(12, 2)\"\nuniform = { min = 1.00, max = 999.99 }\n\
        [[tables.fields]]\nname = \"l_discount\"\ntype = \"decimal(4, 2)\"\nweighted = { values = [0.00, 0.05, 0.10] }\n\
        [[tables.fields]]\nname = \"l_net\"\ntype = \"decimal(18, 4)\"\nexpr = \"l_price * (1 - l_discount)\"\n";
    let d = Dataset::parse(text, "x.toml").unwrap();
    let all = |t: &str| crate::dataset::all_rows(&d, t, 4, 1.0, 64);
    let (o, l) = (all("o"), all("l"));
    // The hidden child field computing the expression is not written.
    assert_eq!(l[0].num_columns(), 5);
    let net = col(&o, "o_net", |a: &Decimal128Array, i| a.value(i));
    assert_eq!(
        net,
        col(&o, "o_net_field", |a: &Decimal128Array, i| a.value(i))
    );
    #[derive(Default, Clone, Copy)]
    struct G {
        net: Option<i128>,
        most: Option<i64>,
        big: i64,
    }
    let mut by: HashMap<i64, G> = HashMap::new();
    let key = col(&l, "l_key", |a: &Int64Array, i| a.value(i));
    let qty = col(&l, "l_qty", |a: &Int64Array, i| a.value(i));
    let lnet = col(&l, "l_net", |a: &Decimal128Array, i| a.value(i));
    for i in 0..key.len() {
        let g = by.entry(key[i].unwrap()).or_default();
        let q = qty[i].unwrap();
        g.net = Some(g.net.unwrap_or(0) + lnet[i].unwrap());
        g.most = Some(g.most.map_or(q * 2, |m| m.max(q * 2)));
        g.big += i64::from(q > 5);
    }
    let id = col(&o, "o_id", |a: &Int64Array, i| a.value(i));
    let most = col(&o, "o_most", |a: &Int64Array, i| a.value(i));
    let big = col(&o, "o_big", |a: &Int64Array, i| a.value(i));
    for i in 0..id.len() {
        let g = by.get(&id[i].unwrap()).copied().unwrap_or_default();
        assert_eq!(net[i], g.net, "order {i}");
        assert_eq!(most[i], g.most, "order {i}");
        assert_eq!(big[i], Some(g.big), "order {i}");
    }
    assert!(net.iter().filter(|n| n.is_some()).count() > 200);
    // Bad expressions name the aggregate's field, line and column.
    for (agg, want) in [
        (
            "sum = \"l_nope + 1\"",
            "x.toml:9: field `o.o_net`: `aggregate`'s `sum` at column 1: unknown name `l_nope`; the fields it can read are l_key, l_qty, l_price, l_discount, l_net",
        ),
        (
            "sum = \"parent.o_id + l_qty\"",
            "x.toml:9: field `o.o_net`: `aggregate`'s `sum` at column 1: `parent.o_id`: an aggregate's expression reads the fields of the child row",
        ),
        (
            "max = \"CASE WHEN l_qty > 0 THEN NULL END\"",
            "x.toml:9: field `o.o_net`: `aggregate`'s `max` is always null: give it a type (CAST(NULL AS BIGINT))",
        ),
        (
            "sum = \"l_nope\"",
            "x.toml:9: field `o.o_net`: table `l` has no top-level field `l_nope`",
        ),
    ] {
        let bad = text.replace("sum = \"l_price * (1 - l_discount)\"", agg);
        let err = Dataset::parse(&bad, "x.toml").unwrap_err().to_string();
        assert_eq!(err, want, "{agg}");
    }
}
