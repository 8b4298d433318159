//! Numbers a spec computes once per run (`max = "1000 * scale()"`, `rows
//! = "..."`, `count = "..."`): their values at several scales, the rows
//! generated with them, and bad ones refused with their line and field.

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use strata_gen::{BatchGenerator, Dataset, Rows};

const SCALED: &str = r#"
name = "scaled"

[[tables]]
name = "region"
rows = 5
[[tables.fields]]
name = "r_id"
type = "int32"
sequence = { start = 1 }

[[tables]]
name = "clerk"
rows = "greatest(2, round(1000 * scale()))"
[[tables.fields]]
name = "c_id"
type = "int64"
sequence = { start = "rows('region') * 100", step = 2 }

[[tables]]
name = "orders"
rows_per_scale = "rows('clerk') * 3"
[[tables.fields]]
name = "o_clerk"
type = "int64"
uniform = { min = 1, max = "rows('clerk')" }
[[tables.fields]]
name = "o_price"
type = "decimal(10, 2)"
uniform = { min = "0.50", max = "100 * scale()" }
[[tables.fields]]
name = "o_rate"
type = "float64"
constant = "1 / 4"

[[tables]]
name = "lines"
children_of = "orders"
count = "round(4 * scale() + 0.5)"
[[tables.fields]]
name = "l_n"
type = "int32"
uniform = { min = 0, max = "rows('region')" }
"#;

/// Every row of table `t` of `d` at `scale`.
fn rows_of(d: &Dataset, t: usize, scale: f64) -> Vec<RecordBatch> {
    let g = d.generator(t, 7, scale).unwrap();
    let resolved = d.at_scale(scale).unwrap();
    let root = resolved.root_of(t);
    let n = resolved.tables[root].rows.as_ref().unwrap().at(scale);
    let mut s = Default::default();
    let mut out = Vec::new();
    let mut at = 0;
    while at < n {
        let len = (n - at).min(1000);
        out.push(g.generate(at, len as usize, &mut s).unwrap());
        at += len;
    }
    out
}

fn ints(batches: &[RecordBatch], column: usize) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            let c = b.column(column);
            match c.data_type() {
                arrow_schema::DataType::Int32 => c
                    .as_primitive::<Int32Type>()
                    .values()
                    .iter()
                    .map(|&v| i64::from(v))
                    .collect::<Vec<_>>(),
                _ => c.as_primitive::<Int64Type>().values().to_vec(),
            }
        })
        .collect()
}

#[test]
fn values_computed_per_run_follow_the_scale() {
    let d = Dataset::parse(SCALED, "scaled.toml").unwrap();
    // Unresolved, the computed row counts keep their SQL.
    assert!(matches!(
        &d.tables[1].rows,
        Some(Rows::Expr {
            per_scale: false,
            ..
        })
    ));
    assert!(matches!(
        &d.tables[2].rows,
        Some(Rows::Expr {
            per_scale: true,
            ..
        })
    ));
    for scale in [0.5, 2.0] {
        let r = d.at_scale(scale).unwrap();
        let clerks = (1000.0 * scale) as u64;
        assert_eq!(r.tables[1].rows, Some(Rows::Fixed(clerks)), "scale {scale}");
        assert_eq!(
            r.tables[2].rows,
            Some(Rows::Fixed((clerks as f64 * 3.0 * scale).round() as u64))
        );

        let clerk = rows_of(&d, 1, scale);
        let ids = ints(&clerk, 0);
        assert_eq!(ids.len() as u64, clerks);
        assert_eq!(ids[0], 500);
        assert_eq!(ids[1], 502);

        let orders = rows_of(&d, 2, scale);
        let o_clerk = ints(&orders, 0);
        assert_eq!(o_clerk.len() as f64, (clerks as f64 * 3.0 * scale).round());
        assert!(o_clerk.iter().all(|&c| (1..=clerks as i64).contains(&c)));
        // The top of the range is reached: the bound is the clerk count.
        assert!(o_clerk.iter().any(|&c| c > clerks as i64 * 9 / 10));
        let cents: Vec<i128> = orders
            .iter()
            .flat_map(|b| {
                b.column(1)
                    .as_primitive::<Decimal128Type>()
                    .values()
                    .to_vec()
            })
            .collect();
        let top = (100.0 * scale * 100.0) as i128;
        assert!(
            cents.iter().all(|&c| (50..=top).contains(&c)),
            "scale {scale}"
        );
        let rate = orders[0].column(2).as_primitive::<Float64Type>().value(0);
        assert_eq!(rate, 0.25);

        // `count` = round(4 * scale + 0.5): 3 at 0.5, 9 at 2.
        let lines = rows_of(&d, 3, scale);
        let per_order = (4.0 * scale + 0.5_f64).round() as usize;
        let n: usize = lines.iter().map(|b| b.num_rows()).sum();
        assert_eq!(n, o_clerk.len() * per_order, "scale {scale}");
        assert!(ints(&lines, 0).iter().all(|&v| (0..=5).contains(&v)));
    }
    // The same spec and seed give the same rows.
    assert_eq!(ints(&rows_of(&d, 2, 0.5), 0), ints(&rows_of(&d, 2, 0.5), 0));
}

/// A one-table dataset with `field` (TOML lines) in a table of `rows`.
fn one(rows: &str, field: &str) -> String {
    format!(
        "name = \"bad\"\n[[tables]]\nname = \"t\"\nrows = {rows}\n[[tables.fields]]\nname = \"k\"\ntype = \"int64\"\nsequence = {{ start = 1 }}\n[[tables.fields]]\nname = \"a\"\n{field}\n"
    )
}

#[test]
fn bad_values_computed_per_run_are_refused_with_line_and_field() {
    // Refused when parsed: line 12 is the bad field's generator.
    for (field, want) in [
        (
            "type = \"int64\"\nuniform = { min = 1, max = \"k + 1\" }",
            "reads `k`: a value computed once per run reads literals, scale() and rows('table'), not fields",
        ),
        (
            "type = \"int64\"\nuniform = { min = 1, max = \"uniform(1, 9)\" }",
            "uniform() draws per row",
        ),
        (
            "type = \"int64\"\nconstant = \"'many'\"",
            "gives a string, not a number",
        ),
        (
            "type = \"int64\"\nsequence = { start = \"parent.x\" }",
            "`start` = \"parent.x\"",
        ),
        (
            "type = \"float64\"\nuniform = { min = 0, max = \"1 +\" }",
            "`max` = \"1 +\"",
        ),
    ] {
        let text = one("10", field);
        let e = Dataset::parse(&text, "bad.toml").unwrap_err().to_string();
        assert!(e.starts_with("bad.toml:12:"), "{e}\n{text}");
        assert!(e.contains("field `t.a`"), "{e}");
        assert!(e.contains(want), "{e}\nwant: {want}");
    }

    // Refused when computed, at the scale that breaks them, with the
    // spec's file, line, table and field.
    let at = |text: &str, scale: f64| {
        let d = Dataset::parse(text, "bad.toml").unwrap();
        (0..d.tables.len())
            .find_map(|t| d.generator(t, 1, scale).err())
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let text = one(
        "10",
        "type = \"int64\"\nuniform = { min = 5, max = \"round(10 * scale())\" }",
    );
    assert_eq!(at(&text, 1.0), "");
    let e = at(&text, 0.2);
    assert!(
        e.contains("bad.toml:9: table `t`: field `a`: uniform needs min below max")
            && e.contains("give 5 and 2 at scale 0.2"),
        "{e}"
    );
    let text = one("10", "type = \"int8\"\nconstant = \"100 * scale()\"");
    let e = at(&text, 2.0);
    assert!(
        e.contains("bad.toml:12: table `t`: field `a`: `constant` = \"100 * scale()\"")
            && e.contains("gives 200 at scale 2, outside the range -128..=127"),
        "{e}"
    );
    let e = at(
        &one("\"10 - 20 * scale()\"", "type = \"int64\"\nconstant = 1"),
        1.0,
    );
    assert!(
        e.contains("bad.toml:4: table `t`: `rows` = \"10 - 20 * scale()\": gives -10 rows"),
        "{e}"
    );
    let e = at(
        &one("\"rows('nowhere')\"", "type = \"int64\"\nconstant = 1"),
        1.0,
    );
    assert!(e.contains("rows('nowhere'): no table"), "{e}");

    // Row counts that read each other.
    let cycle = "name = \"c\"\n[[tables]]\nname = \"a\"\nrows = \"rows('b') + 1\"\n[[tables.fields]]\nname = \"x\"\ntype = \"int64\"\nconstant = 1\n[[tables]]\nname = \"b\"\nrows_per_scale = \"rows('a')\"\n[[tables.fields]]\nname = \"y\"\ntype = \"int64\"\nconstant = 1\n";
    let e = at(cycle, 1.0);
    assert!(e.contains("whose row count reads it back"), "{e}");

    // A child count past the most a row may have.
    let child = "name = \"c\"\n[[tables]]\nname = \"a\"\nrows = 3\n[[tables.fields]]\nname = \"x\"\ntype = \"int64\"\nconstant = 1\n[[tables]]\nname = \"b\"\nchildren_of = \"a\"\ncount = \"2000000 * scale()\"\n[[tables.fields]]\nname = \"y\"\ntype = \"int64\"\nconstant = 1\n";
    let e = at(child, 1.0);
    assert!(
        e.contains("`count` = \"2000000 * scale()\": gives 2000000 at scale 1"),
        "{e}"
    );
}
