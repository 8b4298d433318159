//! The change stream against the rows at each version: applying the
//! stream of versions 1..=v to version 0 gives version v (a brute-force
//! replay keyed by the primary key), for any split of the ids.

use std::collections::BTreeMap;

use arrow_array::{Array, RecordBatch, StringArray, StructArray, UInt64Array};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use strata_changes::{history::History, stream::Images};
use strata_gen::{Spec, SpecGenerator};

const SPEC: &str = r#"
name = "orders"
primary_key = "id"
changes = { versions = 6, insert = 0.05, update = 0.2, delete = 0.05, keys = { zipf = 0.9 }, update_fields = ["status", "amount"] }

[[fields]]
name = "id"
type = "int64"
sequence = { start = 1000 }

[[fields]]
name = "customer"
type = "int32"
uniform = { min = 1, max = 50 }

[[fields]]
name = "status"
type = "utf8"
weighted = { values = ["open", "paid", "shipped"], weights = [5, 3, 2] }

[[fields]]
name = "amount"
type = "float64"
uniform = { min = 1.0, max = 500.0 }

[[fields]]
name = "double_amount"
type = "float64"
expr = "amount * 2"
"#;

fn images(spec: &Spec) -> Images {
    let spec = spec.clone();
    let fields = spec.changes.as_ref().unwrap().update_fields.clone();
    Images::new(
        Box::new(move |v| match v {
            None => SpecGenerator::new(&spec, 9),
            Some(v) => SpecGenerator::salted(&spec, 9, &fields, v),
        }),
        "id",
    )
    .unwrap()
}

/// Each row of `b` (columns of a struct, or a batch) as text, by column.
fn rows_of(columns: &[std::sync::Arc<dyn Array>]) -> Vec<String> {
    let opts = FormatOptions::default();
    let fmts: Vec<_> = columns
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap())
        .collect();
    (0..columns.first().map_or(0, |c| c.len()))
        .map(|i| {
            fmts.iter()
                .map(|f| f.value(i).to_string())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

fn table(b: &RecordBatch) -> BTreeMap<String, String> {
    let rows = rows_of(b.columns());
    rows.into_iter()
        .map(|r| (r.split('|').next().unwrap().to_string(), r))
        .collect()
}

#[test]
fn the_stream_replays_version_0_into_every_version() {
    let spec = Spec::parse(SPEC, "orders.toml").unwrap();
    let h = History::new(spec.changes.as_ref().unwrap(), 3000, 9);
    let im = images(&spec);
    let mut state = table(&im.at_version(&h, 0, 0..h.ids_at(0)).unwrap());
    assert_eq!(state.len(), 3000);
    let mut seen_ops = BTreeMap::new();
    for v in 1..=h.versions() {
        let s = im.changes(&h, v, 0..h.ids_at(v)).unwrap();
        let ops = s.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        let versions = s.column(1).as_any().downcast_ref::<UInt64Array>().unwrap();
        let before = s.column(4).as_any().downcast_ref::<StructArray>().unwrap();
        let after = s.column(5).as_any().downcast_ref::<StructArray>().unwrap();
        let before_rows = rows_of(before.columns());
        let after_rows = rows_of(after.columns());
        for i in 0..s.num_rows() {
            assert_eq!(versions.value(i), v);
            let op = ops.value(i);
            *seen_ops.entry(op.to_string()).or_insert(0) += 1;
            match op {
                "c" => {
                    assert!(before.is_null(i) && after.is_valid(i));
                    let key = after_rows[i].split('|').next().unwrap().to_string();
                    assert!(state.insert(key, after_rows[i].clone()).is_none());
                }
                "u" => {
                    let key = after_rows[i].split('|').next().unwrap().to_string();
                    // The before image is the row as it was.
                    assert_eq!(state.get(&key), Some(&before_rows[i]), "v{v} u {key}");
                    // Only the updated fields (and the one computed from
                    // them) change: the key and the customer stay.
                    let (b, a): (Vec<&str>, Vec<&str>) = (
                        before_rows[i].split('|').collect(),
                        after_rows[i].split('|').collect(),
                    );
                    assert_eq!((b[0], b[1]), (a[0], a[1]));
                    let amount: f64 = a[3].parse().unwrap();
                    let double: f64 = a[4].parse().unwrap();
                    assert_eq!(double, amount * 2.0);
                    state.insert(key, after_rows[i].clone());
                }
                "d" => {
                    assert!(after.is_null(i));
                    let key = before_rows[i].split('|').next().unwrap().to_string();
                    assert_eq!(state.remove(&key), Some(before_rows[i].clone()), "v{v} d");
                }
                other => panic!("op {other}"),
            }
        }
        let want = table(&im.at_version(&h, v, 0..h.ids_at(v)).unwrap());
        assert_eq!(state, want, "version {v}");
    }
    assert!(seen_ops.values().all(|&n| n > 0), "{seen_ops:?}");
}

#[test]
fn any_split_of_the_ids_gives_the_same_rows() {
    let spec = Spec::parse(SPEC, "orders.toml").unwrap();
    let h = History::new(spec.changes.as_ref().unwrap(), 2000, 9);
    let im = images(&spec);
    for v in [0, 3, 6] {
        let whole = rows_of(im.at_version(&h, v, 0..h.ids_at(v)).unwrap().columns());
        let mut parts = Vec::new();
        for (a, b) in [(0, 333), (333, 1500), (1500, u64::MAX)] {
            parts.extend(rows_of(im.at_version(&h, v, a..b).unwrap().columns()));
        }
        assert_eq!(whole, parts, "version {v}");
        if v > 0 {
            let whole = im.changes(&h, v, 0..u64::MAX).unwrap();
            let split: usize = [(0, 700), (700, u64::MAX)]
                .iter()
                .map(|&(a, b)| im.changes(&h, v, a..b).unwrap().num_rows())
                .sum();
            assert_eq!(whole.num_rows(), split);
        }
    }
}

#[test]
fn the_scd2_rows_that_are_current_are_the_last_version() {
    let spec = Spec::parse(SPEC, "orders.toml").unwrap();
    let h = History::new(spec.changes.as_ref().unwrap(), 2000, 9);
    let im = images(&spec);
    let scd = im.scd2(&h, 0..u64::MAX).unwrap();
    let n = im.schema().fields().len();
    let current = scd
        .column(n + 2)
        .as_any()
        .downcast_ref::<arrow_array::BooleanArray>()
        .unwrap();
    let from = scd
        .column(n)
        .as_any()
        .downcast_ref::<arrow_array::TimestampMillisecondArray>()
        .unwrap();
    let to = scd
        .column(n + 1)
        .as_any()
        .downcast_ref::<arrow_array::TimestampMillisecondArray>()
        .unwrap();
    let rows = rows_of(&scd.columns()[..n]);
    let mut now = BTreeMap::new();
    let mut last: Option<(String, Option<i64>)> = None;
    for (i, r) in rows.iter().enumerate() {
        let key = r.split('|').next().unwrap().to_string();
        // A key's rows follow each other: each starts where the one
        // before ended.
        if let Some((k, end)) = &last
            && k == &key
        {
            assert_eq!(*end, Some(from.value(i)), "{key}");
        }
        let end = to.is_valid(i).then(|| to.value(i));
        assert_eq!(current.value(i), end.is_none());
        if current.value(i) {
            assert!(now.insert(key.clone(), r.clone()).is_none());
        }
        last = Some((key, end));
    }
    let want = table(&im.at_version(&h, h.versions(), 0..u64::MAX).unwrap());
    assert_eq!(now, want);
    assert!(scd.num_rows() > want.len());
}
