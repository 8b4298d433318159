//! Dimension rows: `values_by_row` gives row `i` value `i` (cycled on
//! request), calendar tables hold one row per day with its parts (checked
//! against a day-by-day walk of the calendar, not the engine's formulas),
//! `per_parent` sequences number each parent's children from their start,
//! and misplaced or too-short uses get one clear error each.

use arrow_array::{
    Array, BooleanArray, Date32Array, DictionaryArray, Float64Array, Int16Array, Int32Array,
    RecordBatch, StringArray, types::UInt8Type,
};
use strata_gen::BatchGenerator;
use strata_gen::{Dataset, Spec};

/// Every row of table `name` at `scale`, `batch` rows per batch.
fn rows_of(d: &Dataset, name: &str, scale: f64, batch: u64) -> Vec<RecordBatch> {
    crate::dataset::all_rows(d, name, 7, scale, batch)
}

/// Column `name` of every batch as values, read by `f`.
fn col<A: 'static, T>(bs: &[RecordBatch], name: &str, f: impl Fn(&A, usize) -> T) -> Vec<T> {
    bs.iter()
        .flat_map(|b| {
            let a = b
                .column_by_name(name)
                .unwrap_or_else(|| panic!("no column {name}"));
            assert_eq!(a.null_count(), 0, "{name}");
            let a = a
                .as_any()
                .downcast_ref::<A>()
                .unwrap_or_else(|| panic!("column {name} has another type"));
            (0..b.num_rows()).map(|i| f(a, i)).collect::<Vec<_>>()
        })
        .collect()
}

fn strs(bs: &[RecordBatch], name: &str) -> Vec<String> {
    col(bs, name, |a: &StringArray, i| a.value(i).to_string())
}

fn dict_strs(bs: &[RecordBatch], name: &str) -> Vec<String> {
    col(bs, name, |a: &DictionaryArray<UInt8Type>, i| {
        let values = a.values().as_any().downcast_ref::<StringArray>().unwrap();
        values.value(a.keys().value(i) as usize).to_string()
    })
}

fn i32s(bs: &[RecordBatch], name: &str) -> Vec<i32> {
    col(bs, name, |a: &Int32Array, i| a.value(i))
}

const DIMS: &str = r#"
name = "dims"

[[tables]]
name = "region"
rows = 5

[[tables.fields]]
name = "r_regionkey"
type = "int32"
sequence = { start = 0 }

[[tables.fields]]
name = "r_name"
type = "utf8"
values_by_row = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]

[[tables]]
name = "nation"
rows = 7

[[tables.fields]]
name = "n_name"
type = "dictionary"
values_by_row = ["ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ALGERIA", "CHINA"]

[[tables.fields]]
name = "n_regionkey"
type = "int32"
values_by_row = { values = [0, 1, 1], cycle = true }

[[tables.fields]]
name = "n_weight"
type = "float64"
values_by_row = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5]

[[tables.fields]]
name = "n_region_name"
type = "utf8"
ref = { table = "region", field = "r_name", via = "n_region" }

[[tables.fields]]
name = "n_region"
type = "int32"
ref = { table = "region", field = "r_regionkey" }

[[tables.fields]]
name = "n_tax"
type = "decimal(5, 2)"
values_by_row = { values = [0.05, "0.10"], cycle = true }

[[tables]]
name = "days"
calendar = { start = 1999-12-20, end = 2001-01-10 }

[[tables]]
name = "sales"
rows = 300

[[tables.fields]]
name = "s_date"
type = "int32"
ref = { table = "days", field = "date_key" }

[[tables.fields]]
name = "s_day"
type = "utf8"
ref = { table = "days", field = "day_name", via = "s_date" }
"#;

#[test]
fn values_by_row_give_row_i_value_i_whatever_the_batches() {
    let d = Dataset::parse(DIMS, "dims.toml").unwrap();
    for batch in [1, 2, 3, 64] {
        let r = rows_of(&d, "region", 1.0, batch);
        assert_eq!(
            strs(&r, "r_name"),
            ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
        );
        let n = rows_of(&d, "nation", 1.0, batch);
        assert_eq!(
            dict_strs(&n, "n_name"),
            [
                "ALGERIA",
                "ARGENTINA",
                "BRAZIL",
                "CANADA",
                "EGYPT",
                "ALGERIA",
                "CHINA"
            ]
        );
        assert_eq!(i32s(&n, "n_regionkey"), [0, 1, 1, 0, 1, 1, 0]);
        let w = col(&n, "n_weight", |a: &Float64Array, i| a.value(i));
        assert_eq!(w, [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]);
        let tax = col(&n, "n_tax", |a: &arrow_array::Decimal128Array, i| {
            a.value(i)
        });
        assert_eq!(tax, [5, 10, 5, 10, 5, 10, 5]);
        // A reference to a dimension copies the referenced row's value.
        let keys = i32s(&n, "n_region");
        let names = strs(&n, "n_region_name");
        let regions = strs(&r, "r_name");
        for (k, name) in keys.iter().zip(&names) {
            assert_eq!(&regions[*k as usize], name);
        }
    }
    // The dictionary holds each distinct value once.
    let n = rows_of(&d, "nation", 1.0, 64);
    let a = n[0]
        .column_by_name("n_name")
        .unwrap()
        .as_any()
        .downcast_ref::<DictionaryArray<UInt8Type>>()
        .unwrap()
        .clone();
    assert_eq!(a.values().len(), 6);
}

/// Days since 1970-01-01 of `y-m-d`, counted day by day from 1970 (an
/// oracle that shares nothing with the engine's calendar).
struct Walk {
    day: i32,
    y: i32,
    m: u32,
    d: u32,
    /// 1 (Monday) to 7.
    dow: u32,
}

fn leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn month_days(y: i32, m: u32) -> u32 {
    match m {
        2 if leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Walk {
    fn new() -> Walk {
        // 1970-01-01 was a Thursday.
        Walk {
            day: 0,
            y: 1970,
            m: 1,
            d: 1,
            dow: 4,
        }
    }

    fn next(&mut self) {
        self.day += 1;
        self.dow = self.dow % 7 + 1;
        self.d += 1;
        if self.d > month_days(self.y, self.m) {
            self.d = 1;
            self.m += 1;
            if self.m > 12 {
                self.m = 1;
                self.y += 1;
            }
        }
    }

    fn ordinal(&self) -> u32 {
        (1..self.m).map(|m| month_days(self.y, m)).sum::<u32>() + self.d
    }

    /// The ISO week: the week (Monday to Sunday) holding this day's
    /// Thursday, counted from the week holding its year's first Thursday.
    fn iso_week(&self) -> u32 {
        // The Thursday of this week, as (year, ordinal).
        let thursday = self.ordinal() as i32 + 4 - self.dow as i32;
        let days_in = |y: i32| if leap(y) { 366 } else { 365 };
        let ord = if thursday < 1 {
            thursday + days_in(self.y - 1)
        } else if thursday > days_in(self.y) {
            thursday - days_in(self.y)
        } else {
            thursday
        };
        ((ord - 1) / 7 + 1) as u32
    }
}

#[test]
fn calendar_rows_are_every_day_with_its_parts() {
    let d = Dataset::parse(DIMS, "dims.toml").unwrap();
    let t = d.table("days").unwrap();
    assert_eq!(d.tables[t].rows.as_ref().unwrap().at(1.0), 12 + 366 + 10);
    let b = rows_of(&d, "days", 1.0, 100);
    let date = col(&b, "date", |a: &Date32Array, i| a.value(i));
    let key = i32s(&b, "date_key");
    let year = i32s(&b, "year");
    let quarter = i32s(&b, "quarter");
    let month = i32s(&b, "month");
    let dom = i32s(&b, "day_of_month");
    let doy = i32s(&b, "day_of_year");
    let dow = i32s(&b, "day_of_week");
    let week = i32s(&b, "week_of_year");
    let day_name = strs(&b, "day_name");
    let month_name = strs(&b, "month_name");
    let weekend = col(&b, "weekend", |a: &BooleanArray, i| a.value(i));
    let days = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    let months = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let mut w = Walk::new();
    while (w.y, w.m, w.d) != (1999, 12, 20) {
        w.next();
    }
    for i in 0..date.len() {
        assert_eq!(date[i], w.day, "row {i}");
        assert_eq!(key[i], w.y * 10_000 + (w.m * 100 + w.d) as i32, "row {i}");
        assert_eq!(year[i], w.y);
        assert_eq!(quarter[i] as u32, (w.m - 1) / 3 + 1);
        assert_eq!(month[i] as u32, w.m);
        assert_eq!(dom[i] as u32, w.d);
        assert_eq!(doy[i] as u32, w.ordinal());
        assert_eq!(dow[i] as u32, w.dow);
        assert_eq!(
            week[i] as u32,
            w.iso_week(),
            "row {i}: {}-{}-{}",
            w.y,
            w.m,
            w.d
        );
        assert_eq!(day_name[i], days[w.dow as usize - 1]);
        assert_eq!(month_name[i], months[w.m as usize - 1]);
        assert_eq!(weekend[i], w.dow >= 6);
        w.next();
    }
    assert_eq!((w.y, w.m, w.d), (2001, 1, 11));
    // Some weeks checked by hand: 2000-01-02 (Sunday) is in week 52 of
    // 1999, 2000-01-03 starts week 1, 2000-12-31 (Sunday) is in week 52.
    let at = |y: i32| key.iter().position(|k| *k == y).unwrap();
    assert_eq!(week[at(20000102)], 52);
    assert_eq!(week[at(20000103)], 1);
    assert_eq!(week[at(20001231)], 52);
    assert_eq!(week[at(20010101)], 1);
    // References into the calendar copy the row's parts.
    let s = rows_of(&d, "sales", 1.0, 64);
    for (k, name) in i32s(&s, "s_date").iter().zip(strs(&s, "s_day")) {
        assert_eq!(day_name[at(*k)], name);
    }
}

#[test]
fn calendar_fields_read_the_parts_they_name() {
    let d = Dataset::parse(
        r#"
name = "d"
[[tables]]
name = "dates"
calendar = { start = 2024-02-27, end = 2024-03-02 }
[[tables.fields]]
name = "d_key"
type = "int64"
calendar = "date_key"
[[tables.fields]]
name = "d_day"
type = "dictionary"
calendar = "day_name"
[[tables.fields]]
name = "d_month"
type = "int16"
calendar = "month"
[[tables.fields]]
name = "d_week"
type = "int8"
calendar = "week_of_year"
[[tables.fields]]
name = "d_quarter"
type = "uint8"
calendar = "quarter"
[[tables.fields]]
name = "d_note"
type = "utf8"
constant = "-"
when = [{ field = "d_day", is = "Thursday", constant = "thursday" }]
"#,
        "d.toml",
    )
    .unwrap();
    let b = rows_of(&d, "dates", 1.0, 2);
    let keys = col(&b, "d_key", |a: &arrow_array::Int64Array, i| a.value(i));
    assert_eq!(keys, [20240227, 20240228, 20240229, 20240301, 20240302]);
    assert_eq!(
        dict_strs(&b, "d_day"),
        ["Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    );
    assert_eq!(
        col(&b, "d_month", |a: &Int16Array, i| a.value(i)),
        [2, 2, 2, 3, 3]
    );
    // Small parts fit 8-bit fields.
    assert_eq!(
        col(&b, "d_week", |a: &arrow_array::Int8Array, i| a.value(i)),
        [9, 9, 9, 9, 9]
    );
    assert_eq!(
        col(&b, "d_quarter", |a: &arrow_array::UInt8Array, i| a.value(i)),
        [1, 1, 1, 1, 1]
    );
    assert_eq!(strs(&b, "d_note"), ["-", "-", "thursday", "-", "-"]);
}

#[test]
fn per_parent_sequences_number_each_parents_children() {
    let d = Dataset::parse(
        r#"
name = "d"
[[tables]]
name = "customers"
rows = 400
[[tables.fields]]
name = "c_id"
type = "int64"
sequence = { start = 1 }
[[tables]]
name = "orders"
children_of = "customers"
count = { weighted = { values = [0, 1, 4], weights = [1, 1, 1] } }
[[tables.fields]]
name = "o_cust"
type = "int64"
parent = "c_id"
[[tables.fields]]
name = "o_line"
type = "int32"
sequence = { per_parent = true, start = 10 }
"#,
        "d.toml",
    )
    .unwrap();
    for batch in [7, 400] {
        let b = rows_of(&d, "orders", 1.0, batch);
        let cust = col(&b, "o_cust", |a: &arrow_array::Int64Array, i| a.value(i));
        let line = i32s(&b, "o_line");
        let mut per: std::collections::BTreeMap<i64, Vec<i32>> = Default::default();
        for (c, l) in cust.iter().zip(&line) {
            per.entry(*c).or_default().push(*l);
        }
        // Customers without orders exist (a third of them, about).
        let without = 400 - per.len();
        assert!((90..=180).contains(&without), "{without}");
        for lines in per.values() {
            assert!(lines == &[10] || lines == &[10, 11, 12, 13], "{lines:?}");
        }
    }
}

fn error_of(text: &str) -> String {
    Dataset::parse(text, "d.toml").unwrap_err().to_string()
}

#[test]
fn misplaced_or_short_dimension_rows_are_refused() {
    let table = |head: &str, field: &str| {
        format!(
            "name = \"d\"\n[[tables]]\nname = \"t\"\n{head}\n[[tables.fields]]\nname = \"f\"\n{field}\n"
        )
    };
    let cases = [
        (
            table(
                "rows = 3",
                "type = \"utf8\"\nvalues_by_row = [\"a\", \"b\"]",
            ),
            "d.toml:5: field `t.f`: `values_by_row` has 2 values but the table has 3 rows; give one value per row, or `cycle = true` to start the list again",
        ),
        (
            table("rows = 3", "type = \"int32\"\ncalendar = \"year\""),
            "d.toml:5: field `t.f`: `calendar` reads the day of a calendar table's row; give the table `calendar = { start = ..., end = ... }`",
        ),
        (
            table(
                "calendar = { start = 2000-01-01, end = 2000-01-31 }",
                "type = \"int8\"\ncalendar = \"year\"",
            ),
            "d.toml:8: field `t.f`: calendar part `year` needs a signed integer field of 16 bits or more",
        ),
        (
            table(
                "calendar = { start = 2000-01-01, end = 2000-01-31 }",
                "type = \"int8\"\ncalendar = \"day_of_year\"",
            ),
            "d.toml:8: field `t.f`: calendar part `day_of_year` needs an integer field of 16 bits or more",
        ),
        (
            table(
                "calendar = { start = 2000-01-01, end = 2000-01-31 }",
                "type = \"utf8\"\ncalendar = \"weekday\"",
            ),
            "d.toml:8: field `t.f`: unknown calendar part `weekday`; the parts are date, date_key, year, quarter, month, day_of_month, day_of_year, day_of_week, week_of_year, day_name, month_name, weekend",
        ),
        (
            table(
                "rows = 4\ncalendar = { start = 2000-01-01, end = 2000-01-31 }",
                "type = \"int32\"\nsequence = {}",
            ),
            "d.toml:5: table `t`: a calendar table has one row per day of its `calendar`; drop `rows`",
        ),
        (
            table(
                "calendar = { start = 2000-02-01, end = 2000-01-31 }",
                "type = \"int32\"\nsequence = {}",
            ),
            "d.toml:4: table `t`: the calendar ends before it starts",
        ),
        (
            table(
                "rows = 3",
                "type = \"int32\"\nsequence = { per_parent = true, step = 2 }",
            ),
            "d.toml:8: field `t.f`: a `per_parent` sequence steps by 1 (`step` is for plain sequences)",
        ),
        (
            table(
                "rows = 3",
                "type = \"int32\"\nsequence = { per_parent = true }",
            ),
            "d.toml:5: field `t.f`: a `per_parent` sequence (`position`) is for the fields of a child table; table `t` has no `children_of`",
        ),
        (
            table(
                "rows = 3",
                "type = \"list\"\nlength = 2\nitem = { type = \"int32\", values_by_row = [1, 2, 3] }",
            ),
            "d.toml:9: field `t.f.item`: `values_by_row` gives each row a value: it is for top-level fields, not those inside lists or maps",
        ),
        (
            format!(
                "{}[[tables]]\nname = \"c\"\nchildren_of = \"t\"\ncount = 2\n[[tables.fields]]\nname = \"g\"\ntype = \"int32\"\nvalues_by_row = [1, 2]\n",
                table("rows = 3", "type = \"int32\"\nsequence = {}")
            ),
            "d.toml:13: field `c.g`: `values_by_row` is for tables with rows of their own; a child table's rows follow its parent's (use `sequence = { per_parent = true }` to number them)",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(error_of(&text), want, "{text}");
    }
}

#[test]
fn more_rows_than_values_is_an_error_at_generation() {
    // A plain spec's row count is the caller's: asking past the list is
    // refused, without a panic; `cycle` starts it again.
    let spec = Spec::parse(
        "name = \"p\"\n[[fields]]\nname = \"a\"\ntype = \"utf8\"\nvalues_by_row = [\"x\", \"y\", \"z\"]\n",
        "p.toml",
    )
    .unwrap();
    let g = spec.generator(1).unwrap();
    let mut s = Default::default();
    let b = g.generate(1, 2, &mut s).unwrap();
    assert_eq!(strs(&[b], "a"), ["y", "z"]);
    let err = g.generate(2, 2, &mut s).unwrap_err().to_string();
    assert!(
        err.contains("field `a` has `values_by_row` for 3 rows, but 4 rows were asked for"),
        "{err}"
    );
    // A table whose row count follows the scale is checked when compiled.
    let d = Dataset::parse(
        "name = \"d\"\n[[tables]]\nname = \"t\"\nrows_per_scale = 2\n[[tables.fields]]\nname = \"a\"\ntype = \"int64\"\nvalues_by_row = [1, 2, 3]\n",
        "d.toml",
    )
    .unwrap();
    assert!(d.generator(0, 1, 1.5).is_ok());
    let err = d.generator(0, 1, 2.0).unwrap_err().to_string();
    assert!(
        err.contains("table `t`: field `a` has `values_by_row` for 3 rows, but 4 rows"),
        "{err}"
    );
}

#[test]
fn a_spec_built_in_code_with_no_values_by_row_is_an_error() {
    let mut spec = Spec::parse(
        "name = \"p\"\n[[fields]]\nname = \"a\"\ntype = \"int32\"\nvalues_by_row = [1]\n",
        "p.toml",
    )
    .unwrap();
    if let strata_gen::Kind::Scalar { generator, .. } = &mut spec.fields[0].kind {
        *generator = strata_gen::Generator::ByRow {
            values: vec![],
            cycle: true,
        };
    }
    let err = spec.generator(1).unwrap_err().to_string();
    assert!(
        err.contains("values_by_row needs at least one value"),
        "{err}"
    );
}
