//! Hive-style partition directories: `name=value` segments, values as
//! text (Iceberg's human form of a partition value: `1998-01` for a
//! month) escaped as Hive escapes them, null as Hive's default partition.

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Decimal128Type, Int32Type};
use arrow_schema::DataType;

use crate::transform::{PartitionField, Transform, civil};

/// The directory name Hive, Spark, DuckDB and pyarrow read as null.
pub const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// `text` as Hive escapes a path name: control characters, `"`, `#`,
/// `%`, `'`, `*`, `/`, `:`, `=`, `?`, `\`, DEL, `{`, `[`, `]` and `^` as
/// `%XX` (upper-case hex); an empty value is the default partition.
pub fn escape(text: &str) -> String {
    if text.is_empty() {
        return NULL_PARTITION.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let escaped = matches!(
            c,
            '\u{1}'
                ..='\u{1F}'
                    | '"'
                    | '#'
                    | '%'
                    | '\''
                    | '*'
                    | '/'
                    | ':'
                    | '='
                    | '?'
                    | '\\'
                    | '\u{7F}'
                    | '{'
                    | '['
                    | ']'
                    | '^'
        );
        if escaped {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Row `i` of `values` (what `field` gave a column) as its directory's
/// text, unescaped; `None` for null.
pub fn human(field: &PartitionField, values: &dyn Array, i: usize) -> Option<String> {
    if values.is_null(i) {
        return None;
    }
    let date = |days: i64| {
        let (y, m, d) = civil(days);
        format!("{y:04}-{m:02}-{d:02}")
    };
    match field.transform {
        Transform::Year => {
            let v = values.as_primitive_opt::<Int32Type>()?.value(i);
            Some(format!("{:04}", 1970 + i64::from(v)))
        }
        Transform::Month => {
            let v = i64::from(values.as_primitive_opt::<Int32Type>()?.value(i));
            Some(format!(
                "{:04}-{:02}",
                1970 + v.div_euclid(12),
                v.rem_euclid(12) + 1
            ))
        }
        Transform::Hour => {
            let v = i64::from(values.as_primitive_opt::<Int32Type>()?.value(i));
            Some(format!(
                "{}-{:02}",
                date(v.div_euclid(24)),
                v.rem_euclid(24)
            ))
        }
        _ => Some(match values.data_type() {
            DataType::Date32 => date(i64::from(values.as_primitive::<Date32Type>().value(i))),
            DataType::Decimal128(_, s) => {
                let v = values.as_primitive::<Decimal128Type>().value(i);
                decimal_text(v, *s)
            }
            DataType::Utf8 => values.as_string::<i32>().value(i).to_string(),
            _ => scalar_text(values, i)?,
        }),
    }
}

/// `unscaled` at `scale` as text (`1420` at 2: `14.20`): every digit
/// of the scale, no exponent.
pub fn decimal_text(unscaled: i128, scale: i8) -> String {
    if scale <= 0 {
        return (unscaled * 10i128.pow(scale.unsigned_abs() as u32)).to_string();
    }
    let digits = unscaled.unsigned_abs().to_string();
    let s = scale as usize;
    let padded = format!("{digits:0>width$}", width = s + 1);
    let (int, frac) = padded.split_at(padded.len() - s);
    let sign = if unscaled < 0 { "-" } else { "" };
    format!("{sign}{int}.{frac}")
}

/// Row `i` of an integer, boolean or timestamp array as text (timestamps
/// in ISO 8601, as Iceberg writes them); `None` for other types.
fn scalar_text(values: &dyn Array, i: usize) -> Option<String> {
    use arrow_array::types::*;
    use arrow_schema::TimeUnit;
    // `v` units of which `per_second` make a second.
    let timestamp = |v: i64, per_second: i64| {
        let secs = v.div_euclid(per_second);
        let frac = v.rem_euclid(per_second);
        let (y, m, d) = civil(secs.div_euclid(86_400));
        let t = secs.rem_euclid(86_400);
        let mut s = format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            t / 3600,
            t / 60 % 60,
            t % 60
        );
        if frac != 0 {
            let width = per_second.ilog10() as usize;
            s.push_str(&format!(".{frac:0width$}"));
        }
        s
    };
    Some(match values.data_type() {
        DataType::Boolean => values.as_boolean().value(i).to_string(),
        DataType::Int8 => values.as_primitive::<Int8Type>().value(i).to_string(),
        DataType::Int16 => values.as_primitive::<Int16Type>().value(i).to_string(),
        DataType::Int32 => values.as_primitive::<Int32Type>().value(i).to_string(),
        DataType::Int64 => values.as_primitive::<Int64Type>().value(i).to_string(),
        DataType::UInt8 => values.as_primitive::<UInt8Type>().value(i).to_string(),
        DataType::UInt16 => values.as_primitive::<UInt16Type>().value(i).to_string(),
        DataType::UInt32 => values.as_primitive::<UInt32Type>().value(i).to_string(),
        DataType::Timestamp(TimeUnit::Second, _) => {
            timestamp(values.as_primitive::<TimestampSecondType>().value(i), 1)
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => timestamp(
            values.as_primitive::<TimestampMillisecondType>().value(i),
            1_000,
        ),
        DataType::Timestamp(TimeUnit::Microsecond, _) => timestamp(
            values.as_primitive::<TimestampMicrosecondType>().value(i),
            1_000_000,
        ),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => timestamp(
            values.as_primitive::<TimestampNanosecondType>().value(i),
            1_000_000_000,
        ),
        _ => return None,
    })
}

/// The directory of one partition: `name=value` segments joined by `/`,
/// values escaped ([`escape`]) and null as [`NULL_PARTITION`].
pub fn directory(segments: &[(&str, Option<String>)]) -> String {
    segments
        .iter()
        .map(|(name, v)| {
            format!(
                "{}={}",
                escape(name),
                v.as_deref().map_or(NULL_PARTITION.to_string(), escape)
            )
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// `text` with Hive's `%XX` escapes undone: the inverse of [`escape`]
/// (for a value other than the default partition). `None` when a `%` is
/// not followed by two hex digits or the bytes are not UTF-8.
pub fn unescape(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The value of partition `name` in a file's path relative to its
/// table (`l_returnflag=R/part_0.parquet`), as [`directory`] wrote it:
/// `Some(Some(value))` unescaped, `Some(None)` for the default (null)
/// partition, and `None` when no directory of the path is `name`'s (or
/// its value's escapes are malformed). The file name itself is not
/// read.
pub fn value_in_path(path: &str, name: &str) -> Option<Option<String>> {
    let prefix = format!("{}=", escape(name));
    let (dirs, _file) = path.rsplit_once('/')?;
    let value = dirs.split('/').find_map(|d| d.strip_prefix(&prefix))?;
    if value == NULL_PARTITION {
        return Some(None);
    }
    unescape(value).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::ArrayRef;

    use arrow_array::{
        BooleanArray, Date32Array, Decimal128Array, Int32Array, StringArray,
        TimestampMicrosecondArray,
    };

    #[test]
    fn values_are_escaped_as_hive_escapes_them() {
        assert_eq!(escape("plain-value_1.5 x"), "plain-value_1.5 x");
        assert_eq!(escape("a/b=c:d"), "a%2Fb%3Dc%3Ad");
        assert_eq!(escape("100%"), "100%25");
        // `}` is not in Hive's list; `{` is.
        assert_eq!(escape("{[^]}*?#'\"\\"), "%7B%5B%5E%5D}%2A%3F%23%27%22%5C");
        assert_eq!(escape("tab\there\u{7f}"), "tab%09here%7F");
        assert_eq!(escape("été"), "été");
        assert_eq!(escape(""), NULL_PARTITION);
        assert_eq!(
            directory(&[
                ("m", Some("1998-01".into())),
                ("f", None),
                ("s", Some("a/b".into()))
            ]),
            "m=1998-01/f=__HIVE_DEFAULT_PARTITION__/s=a%2Fb"
        );
    }

    #[test]
    fn escapes_are_undone_and_values_found_in_paths() {
        for text in [
            "plain",
            "a/b=c:d",
            "100%",
            "{[^]}*?#'\"\\",
            "tab\there\u{7f}",
            "été",
        ] {
            assert_eq!(unescape(&escape(text)).as_deref(), Some(text));
        }
        assert_eq!(unescape("bad%2"), None);
        assert_eq!(unescape("bad%zz"), None);
        assert_eq!(unescape("%FF"), None);
        let path = "m=1998-01/f=__HIVE_DEFAULT_PARTITION__/s=a%2Fb/x=1.parquet";
        assert_eq!(value_in_path(path, "m"), Some(Some("1998-01".into())));
        assert_eq!(value_in_path(path, "f"), Some(None));
        assert_eq!(value_in_path(path, "s"), Some(Some("a/b".into())));
        // The file name is no directory.
        assert_eq!(value_in_path(path, "x"), None);
        assert_eq!(value_in_path("part_0.parquet", "m"), None);
        assert_eq!(value_in_path("a=b=c/f", "a=b"), None);
        assert_eq!(value_in_path("a%3Db=c/f", "a=b"), Some(Some("c".into())));
    }

    #[test]
    fn partition_values_read_as_iceberg_writes_them() {
        let f = |t: &str| PartitionField::parse(t).unwrap();
        let text = |field: &PartitionField, a: ArrayRef| {
            let v = field.apply(&a).unwrap();
            (0..v.len())
                .map(|i| human(field, &v, i))
                .collect::<Vec<_>>()
        };
        let dates: ArrayRef = Arc::new(Date32Array::from(vec![Some(17486), None, Some(-1)]));
        assert_eq!(
            text(&f("month(d)"), dates.clone()),
            [Some("2017-11".into()), None, Some("1969-12".into())]
        );
        assert_eq!(
            text(&f("year(d)"), dates.clone()),
            [Some("2017".into()), None, Some("1969".into())]
        );
        assert_eq!(
            text(&f("d"), dates),
            [Some("2017-11-16".into()), None, Some("1969-12-31".into())]
        );
        let ts: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
            1_510_871_468_000_000,
            1_510_871_468_000_001,
        ]));
        assert_eq!(
            text(&f("hour(t)"), ts.clone()),
            [Some("2017-11-16-22".into()), Some("2017-11-16-22".into())]
        );
        assert_eq!(
            text(&f("t"), ts),
            [
                Some("2017-11-16T22:31:08".into()),
                Some("2017-11-16T22:31:08.000001".into())
            ]
        );
        let dec: ArrayRef = Arc::new(
            Decimal128Array::from(vec![1420, -5, 0])
                .with_precision_and_scale(9, 2)
                .unwrap(),
        );
        assert_eq!(
            text(&f("v"), dec),
            [
                Some("14.20".into()),
                Some("-0.05".into()),
                Some("0.00".into())
            ]
        );
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![34, -7]));
        assert_eq!(
            text(&f("bucket(100, k)"), ints.clone()),
            [
                Some("79".into()),
                Some(format!(
                    "{}",
                    (crate::transform::hash_long(-7) & i32::MAX) % 100
                ))
            ]
        );
        assert_eq!(text(&f("k"), ints), [Some("34".into()), Some("-7".into())]);
        let b: ArrayRef = Arc::new(BooleanArray::from(vec![true, false]));
        assert_eq!(
            text(&f("b"), b),
            [Some("true".into()), Some("false".into())]
        );
        let s: ArrayRef = Arc::new(StringArray::from(vec!["R", "a/b"]));
        assert_eq!(text(&f("s"), s), [Some("R".into()), Some("a/b".into())]);
    }
}
