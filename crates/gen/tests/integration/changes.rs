//! `primary_key` and `changes`: a table's identity and history, read and
//! checked against its fields.

use strata_gen::{Dataset, OnDelete, Spec};

const ORDERS: &str = r#"
name = "orders"
primary_key = "id"
changes = { versions = 20, insert = 0.02, update = 0.05, delete = 0.01, keys = { zipf = 1.1 }, on_delete = "orphan" }

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1 }

[[fields]]
name = "status"
type = "utf8"
weighted = { values = ["open", "shipped"], weights = [3, 1] }

[[fields]]
name = "amount"
type = "float64"
uniform = { min = 1.0, max = 100.0 }
"#;

#[test]
fn a_history_reads_with_its_defaults() {
    let spec = Spec::parse(ORDERS, "orders.toml").unwrap();
    assert_eq!(spec.primary_key.as_deref(), Some("id"));
    let c = spec.changes.unwrap();
    assert_eq!(c.versions, 20);
    assert_eq!((c.insert, c.update, c.delete), (0.02, 0.05, 0.01));
    assert_eq!(c.zipf, Some(1.1));
    assert_eq!(c.on_delete, OnDelete::Orphan);
    // Every field drawn at random, not the key.
    assert_eq!(c.update_fields, ["status", "amount"]);
    assert_eq!(c.line, 4);

    let plain = Spec::parse(&ORDERS.replace("changes = {", "x_changes = {"), "o.toml");
    assert!(plain.is_err());
    let no_changes: String = ORDERS
        .lines()
        .filter(|l| !l.starts_with("changes"))
        .collect::<Vec<_>>()
        .join("\n");
    let spec = Spec::parse(&no_changes, "o.toml").unwrap();
    assert_eq!(spec.primary_key.as_deref(), Some("id"));
    assert_eq!(spec.changes, None);
}

#[test]
fn bad_histories_name_the_key_and_line() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "primary_key = \"id\"\n",
            "",
            "`changes` on the spec needs a `primary_key`",
        ),
        (
            "update = 0.05, delete = 0.01",
            "update = 0.7, delete = 0.4",
            "add up to more than 1",
        ),
        (
            "update = 0.05,",
            "update = 1.5,",
            "`changes.update` must be between 0 and 1, not 1.5",
        ),
        ("versions = 20", "versions = 0", "from 1 to 1000000, not 0"),
        (
            "primary_key = \"id\"",
            "primary_key = \"status\"",
            "a key needs a value of its own on every row",
        ),
        (
            "primary_key = \"id\"",
            "primary_key = \"nope\"",
            "has no top-level field of that name",
        ),
        (
            "on_delete = \"orphan\"",
            "on_delete = \"drop\"",
            "expected cascade, orphan or keep_parent",
        ),
        (
            "on_delete = \"orphan\"",
            "update_fields = [\"id\"]",
            "\"id\" is the primary key",
        ),
        (
            "on_delete = \"orphan\"",
            "update_fields = \"total\"",
            "has no top-level field \"total\"",
        ),
        (
            "on_delete = \"orphan\"",
            "colour = 1",
            "unknown key `colour`",
        ),
        (
            "keys = { zipf = 1.1 }",
            "keys = { zipf = 0 }",
            "`changes.keys.zipf` must be above 0",
        ),
    ];
    for (from, to, want) in cases {
        let text = if to.is_empty() {
            ORDERS.replace(from, to)
        } else {
            ORDERS.replacen(from, to, 1)
        };
        assert_ne!(text, ORDERS, "{from}");
        let e = Spec::parse(&text, "orders.toml")
            .expect_err(want)
            .to_string();
        assert!(e.contains(want), "{to}: {e}");
        assert!(e.starts_with("orders.toml:"), "{e}");
    }
    // A sequence cannot be drawn again.
    let seq = ORDERS.replace(
        "on_delete = \"orphan\"",
        "update_fields = [\"amount\", \"n\"]",
    ) + "\n[[fields]]\nname = \"n\"\ntype = \"int32\"\nsequence = { start = 0 }\n";
    let e = Spec::parse(&seq, "o.toml").unwrap_err().to_string();
    assert!(e.contains("\"n\" is a sequence"), "{e}");
}

#[test]
fn a_child_table_follows_its_parent() {
    let text = r#"
name = "shop"
[[tables]]
name = "orders"
rows = 100
primary_key = "id"
changes = { versions = 3, delete = 0.1 }
fields = [{ name = "id", type = "int64", sequence = { start = 1 } },
          { name = "v", type = "int32", uniform = { min = 0, max = 9 } }]

[[tables]]
name = "lines"
children_of = "orders"
count = 2
primary_key = "lid"
changes = { versions = 3, delete = 0.1 }
fields = [{ name = "lid", type = "int64", sequence = { start = 1 } },
          { name = "order", type = "int64", parent = "id" }]
"#;
    let e = Dataset::parse(text, "shop.toml").unwrap_err().to_string();
    assert!(
        e.contains("a child table's rows follow its parent's"),
        "{e}"
    );
    let ok = text.replace(
        "primary_key = \"lid\"\nchanges = { versions = 3, delete = 0.1 }\n",
        "",
    );
    let d = Dataset::parse(&ok, "shop.toml").unwrap();
    let orders = &d.tables[0].spec;
    assert_eq!(orders.changes.as_ref().map(|c| c.versions), Some(3));
    assert_eq!(orders.changes.as_ref().unwrap().update_fields, ["v"]);
    // At the dataset's root, the keys are unknown.
    let e = Dataset::parse(&format!("primary_key = \"id\"\n{ok}"), "shop.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown key `primary_key`"), "{e}");
}

#[test]
fn a_policy_that_contradicts_the_references_is_refused() {
    let base = r#"
name = "shop"
[[tables]]
name = "customers"
rows = 50
primary_key = "id"
changes = { versions = 3, delete = 0.1 }
fields = [{ name = "id", type = "int64", sequence = { start = 1 } },
          { name = "v", type = "int32", uniform = { min = 0, max = 9 } }]

[[tables]]
name = "orders"
rows = 100
fields = [{ name = "oid", type = "int64", sequence = { start = 1 } },
          { name = "cust", type = "int64", ref = { table = "customers", field = "id" } }]
"#;
    let e = Dataset::parse(base, "shop.toml").unwrap_err().to_string();
    assert!(
        e.contains("`orders.cust` draws rows of it with `ref`") && e.contains("shop.toml:7"),
        "{e}"
    );
    // Orphans are what the policy says: allowed.
    let orphan = base.replace("delete = 0.1 }", "delete = 0.1, on_delete = \"orphan\" }");
    assert!(Dataset::parse(&orphan, "shop.toml").is_ok());
    // No deletes, nothing to keep valid.
    assert!(Dataset::parse(&base.replace("delete = 0.1", "update = 0.1"), "shop.toml").is_ok());

    let keep = r#"
name = "shop"
[[tables]]
name = "orders"
rows = 50
primary_key = "id"
changes = { versions = 3, delete = 0.1, on_delete = "keep_parent" }
fields = [{ name = "id", type = "int64", sequence = { start = 1 } }]

[[tables]]
name = "lines"
children_of = "orders"
count = { uniform = { min = 1, max = 3 } }
fields = [{ name = "o", type = "int64", parent = "id" }]
"#;
    let e = Dataset::parse(keep, "shop.toml").unwrap_err().to_string();
    assert!(e.contains("would delete nothing"), "{e}");
    assert!(Dataset::parse(&keep.replace("min = 1", "min = 0"), "shop.toml").is_ok());
    let alone = keep
        .split("[[tables]]\nname = \"lines\"")
        .next()
        .unwrap()
        .to_string();
    let e = Dataset::parse(&alone, "shop.toml").unwrap_err().to_string();
    assert!(e.contains("no table is `children_of` `orders`"), "{e}");
}
