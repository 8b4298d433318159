//! Check = generate: every dataset `Dataset::parse` accepts generates,
//! over random datasets built from the spec's keys (fixed seeds): tables
//! with rows and child tables, each field one of many generators or an
//! expression over its siblings, with `when` cases, `hidden`, references,
//! `parent` copies and aggregates (plain and of expressions). A spec the
//! check refuses is fine; one it accepts and generate refuses is the bug.

use strata_gen::rng::RowRng;
use strata_gen::{BatchGenerator, Dataset};

/// A random choice among `items`.
fn pick<'a>(r: &mut RowRng, items: &[&'a str]) -> &'a str {
    items[(r.next_u64() % items.len() as u64) as usize]
}

/// A field of type `ty` named `name`, reading siblings `before`.
fn field(r: &mut RowRng, name: &str, before: &[(String, &str)]) -> (String, &'static str) {
    let ty = pick(
        r,
        &[
            "int64",
            "int32",
            "utf8",
            "float64",
            "date32",
            "decimal(12, 2)",
            "boolean",
        ],
    );
    let ints: Vec<&String> = before
        .iter()
        .filter(|(_, t)| matches!(*t, "int64" | "int32"))
        .map(|(n, _)| n)
        .collect();
    let generator = match (ty, r.next_u64() % 7) {
        ("int64" | "int32", 0) => "uniform = { min = -5, max = 50 }".to_string(),
        ("int64" | "int32", 1) => "sequence = { start = 1 }".to_string(),
        // Computed once per run.
        ("int64" | "int32", 6) => pick(
            r,
            &[
                "uniform = { min = 1, max = \"rows('t0') // 2\" }",
                "sequence = { start = \"round(100 * scale())\", step = 3 }",
                "constant = \"rows('t0') * 2 + 1\"",
            ],
        )
        .to_string(),
        ("int64" | "int32", 2) => {
            "weighted = { values = [1, 2, 3], weights = [1, 0, 2] }".to_string()
        }
        ("int64" | "int32", 3) => "zipf = { s = 1.1, n = 40 }".to_string(),
        ("int64" | "int32", _) if !ints.is_empty() => {
            let a = ints[(r.next_u64() % ints.len() as u64) as usize];
            let e = pick(
                r,
                &[
                    "{a} * 2 + 1",
                    "CASE {a} % 5 WHEN 0 THEN 1 WHEN 1 THEN 2 WHEN 2 THEN 3 WHEN 3 THEN 4 ELSE {a} END",
                    "uniform(0, {a})",
                    "coalesce({a}, 0) // 3",
                    "rows('t0') + {a}",
                    "CAST(scale() * 10 AS BIGINT)",
                ],
            );
            format!("expr = \"{}\"", e.replace("{a}", a))
        }
        ("int64" | "int32", _) => "constant = 7".to_string(),
        ("utf8", 0) => "words = { min = 1, max = 3 }".to_string(),
        ("utf8", 1) => "chars = { alphabet = \"abc123\", min = 0, max = 12 }".to_string(),
        ("utf8", 2) => "text = { size = 500, min = 3, max = 30 }".to_string(),
        ("utf8", 3) => "template = \"id-{seq:05}\"".to_string(),
        ("utf8", 4) if !ints.is_empty() => {
            let a = ints[(r.next_u64() % ints.len() as u64) as usize];
            format!("expr = \"substr('abcdefghij', {a}, 3) || CAST({a} AS VARCHAR)\"")
        }
        ("utf8", _) => {
            "words = { values = [\"x\", \"y\", \"z\"], distinct = true, min = 2, max = 3 }"
                .to_string()
        }
        ("float64", 0) => "normal = { mean = 0, std = 2, min = -1 }".to_string(),
        ("float64", 1) => "uniform = { min = 0.5, max = \"9.5 * scale()\" }".to_string(),
        ("float64", _) => "uniform = { min = 0.5, max = 9.5 }".to_string(),
        ("date32", 0) => "uniform = { min = 1995-01-01, max = 1998-12-31 }".to_string(),
        ("date32", _) => "sequence = { start = 2000-01-01, step = 7 }".to_string(),
        ("decimal(12, 2)", 0) => "uniform = { min = 0.01, max = 999.99 }".to_string(),
        ("decimal(12, 2)", _) => "weighted = { values = [0.00, 0.05, 0.10] }".to_string(),
        ("boolean", 0) if !ints.is_empty() => {
            let a = ints[(r.next_u64() % ints.len() as u64) as usize];
            format!("expr = \"{a} > 3 AND ({a} < 40 OR {a} IS NULL)\"")
        }
        _ => "probability = 0.3".to_string(),
    };
    let mut text = format!("[[tables.fields]]\nname = \"{name}\"\ntype = \"{ty}\"\n{generator}\n");
    if r.next_u64().is_multiple_of(4) {
        text.push_str("null_rate = 0.2\n");
    }
    if r.next_u64().is_multiple_of(6) {
        text.push_str("hidden = true\n");
    }
    if let (Some(a), 0) = (ints.first(), r.next_u64() % 5) {
        text.push_str(&format!(
            "[[tables.fields.when]]\ncondition = \"{a} > 10\"\nnull_rate = 0.5\n"
        ));
    }
    (text, ty)
}

/// A random dataset: a table with rows, maybe a child of it, maybe a
/// table referencing the first.
fn dataset(seed: u64) -> String {
    let mut r = RowRng::seeded(seed);
    let mut text = "name = \"r\"\n".to_string();
    let mut fields0: Vec<(String, &str)> = Vec::new();
    text.push_str("[[tables]]\nname = \"t0\"\nrows = 60\n[[tables.fields]]\nname = \"k\"\ntype = \"int64\"\nsequence = { start = 1 }\n");
    fields0.push(("k".into(), "int64"));
    for i in 0..(2 + r.next_u64() % 5) {
        let name = format!("a{i}");
        let (f, ty) = field(&mut r, &name, &fields0);
        text.push_str(&f);
        fields0.push((name, ty));
    }
    let child = r.next_u64().is_multiple_of(2);
    if child {
        text.push_str(
            "[[tables.fields]]\nname = \"n_children\"\ntype = \"int64\"\naggregate = { table = \"t1\", count = \"*\" }\n",
        );
        if r.next_u64().is_multiple_of(2) {
            text.push_str(
                "[[tables.fields]]\nname = \"s_children\"\ntype = \"int64\"\naggregate = { table = \"t1\", sum = \"c_k * 2\" }\n",
            );
        }
        text.push_str(
            "[[tables.fields]]\nname = \"big\"\ntype = \"boolean\"\nexpr = \"n_children > 1\"\n",
        );
        text.push_str("[[tables]]\nname = \"t1\"\nchildren_of = \"t0\"\n");
        text.push_str(pick(
            &mut r,
            &[
                "count = { uniform = { min = 0, max = 3 } }\n",
                "count = { uniform = { min = 0, max = \"round(2 * scale())\" } }\n",
                "count = \"round(2 * scale())\"\n",
            ],
        ));
        text.push_str("[[tables.fields]]\nname = \"c_k\"\ntype = \"int64\"\nparent = \"k\"\n");
        let mut fields1: Vec<(String, &str)> = vec![("c_k".into(), "int64")];
        for i in 0..(1 + r.next_u64() % 3) {
            let name = format!("b{i}");
            let (f, ty) = field(&mut r, &name, &fields1);
            text.push_str(&f);
            fields1.push((name, ty));
        }
        if let Some((name, _)) = fields0.iter().skip(1).find(|(_, t)| *t == "int64") {
            text.push_str(&format!(
                "[[tables.fields]]\nname = \"c_up\"\ntype = \"int64\"\nexpr = \"parent.{name} + 1\"\n"
            ));
        }
        match r.next_u64() % 6 {
            // Reads an aggregate of another row, or a field computed
            // from one: refused by the check.
            0 => text.push_str(
                "[[tables.fields]]\nname = \"c_n\"\ntype = \"int64\"\nexpr = \"parent.n_children * 2\"\n",
            ),
            1 => text.push_str(
                "[[tables.fields]]\nname = \"c_big\"\ntype = \"boolean\"\nexpr = \"NOT parent.big\"\n",
            ),
            2 => text.push_str(
                "[[tables.fields]]\nname = \"c_big\"\ntype = \"boolean\"\nparent = \"big\"\n",
            ),
            _ => {}
        }
    }
    if r.next_u64().is_multiple_of(2) {
        text.push_str(pick(
            &mut r,
            &[
                "[[tables]]\nname = \"t2\"\nrows_per_scale = 40\n",
                "[[tables]]\nname = \"t2\"\nrows_per_scale = \"rows('t0') * 2 / 3\"\n",
                "[[tables]]\nname = \"t2\"\nrows = \"greatest(1, round(40 * scale()))\"\n",
            ],
        ));
        text.push_str("[[tables.fields]]\nname = \"r_k\"\ntype = \"int64\"\nref = { table = \"t0\", field = \"k\", draw = \"o\" }\n");
        if child && r.next_u64().is_multiple_of(3) {
            text.push_str(
                "[[tables.fields]]\nname = \"r_big\"\ntype = \"boolean\"\nref = { table = \"t0\", field = \"big\" }\n",
            );
        }
        if let Some((name, ty)) = fields0.iter().skip(1).last() {
            text.push_str(&format!(
                "[[tables.fields]]\nname = \"r_x\"\ntype = \"{ty}\"\nref = {{ table = \"t0\", field = \"{name}\", via = \"r_k\" }}\n"
            ));
        }
    }
    text
}

#[test]
fn every_dataset_the_check_accepts_generates() {
    let (mut accepted, mut refused) = (0, 0);
    for seed in 0..300 {
        let text = dataset(seed);
        let d = match Dataset::parse(&text, "r.toml") {
            Ok(d) => d,
            Err(_) => {
                refused += 1;
                continue;
            }
        };
        accepted += 1;
        for scale in [0.5, 2.0] {
            // Row counts computed per run are known at a scale.
            let d = d
                .at_scale(scale)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
            for (i, t) in d.tables.iter().enumerate() {
                let g = d
                    .generator(i, seed, scale)
                    .unwrap_or_else(|e| panic!("seed {seed}, table {}: {e}\n{text}", t.spec.name));
                let root = d.root_of(i);
                let rows = d.tables[root]
                    .rows
                    .as_ref()
                    .map_or(0, |r| r.at(scale))
                    .min(200);
                let mut s = Default::default();
                let mut at = 0;
                while at < rows {
                    let n = (rows - at).min(64);
                    g.generate(at, n as usize, &mut s).unwrap_or_else(|e| {
                        panic!(
                            "seed {seed}, table {}, rows {at}..: {e}\n{text}",
                            t.spec.name
                        )
                    });
                    at += n;
                }
            }
        }
    }
    // The corpus is mostly accepted specs, and some refused.
    assert!(
        accepted > 200 && refused > 10,
        "{accepted} accepted, {refused} refused"
    );
}
