//! Values as a Delta log writes them: a file's partition values (strings,
//! read from the `name=value` directories its path holds: every row of a
//! file is in one partition), column bounds in a file's statistics
//! (dates, timestamps, decimals), and a file's path as the URI an `add`
//! action holds.

use std::collections::BTreeMap;

use strata_layout::{civil, hive};

use super::schema::Primitive;
use crate::Error;

/// Microseconds in a second.
const MICROS: i64 = 1_000_000;

/// `days` since the epoch as `YYYY-MM-DD`.
pub fn date_text(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `micros` since the epoch as ISO 8601 with all six fractional digits:
/// `1998-01-02T03:04:05.000006`, with `Z` when `utc` (a `timestamp`; a
/// `timestamp_ntz` has no zone).
pub fn timestamp_text(micros: i64, utc: bool) -> String {
    let secs = micros.div_euclid(MICROS);
    let frac = micros.rem_euclid(MICROS);
    let t = secs.rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}.{frac:06}{}",
        date_text(secs.div_euclid(86_400)),
        t / 3600,
        t / 60 % 60,
        t % 60,
        if utc { "Z" } else { "" }
    )
}

/// The partition value of each of `columns` (with its type) for the data
/// file at `path` (relative to the table), read from the path's
/// `name=value` directories: the text as Delta serialises a partition
/// value, or `None` for the null partition.
///
/// # Errors
/// [`Error::BadTable`] naming the file when a column has no directory of
/// its own in the path, or a value does not read as its type's.
pub fn partition_values(
    path: &str,
    columns: &[(String, Primitive)],
) -> Result<BTreeMap<String, Option<String>>, Error> {
    let bad = |reason: String| Error::BadTable {
        path: path.into(),
        reason,
    };
    let mut out = BTreeMap::new();
    for (name, p) in columns {
        let value = hive::value_in_path(path, name).ok_or_else(|| {
            bad(format!(
                "the data file's path has no `{name}=VALUE` directory for partition column `{name}`"
            ))
        })?;
        let value = match value {
            None => None,
            Some(text) => Some(partition_text(&text, *p).ok_or_else(|| {
                bad(format!(
                    "partition column `{name}`: `{text}` is not a {} value",
                    p.name()
                ))
            })?),
        };
        out.insert(name.clone(), value);
    }
    Ok(out)
}

/// A partition directory's value text (as [`hive::human`] writes it) as
/// Delta serialises a partition value of type `p`: timestamps with six
/// fractional digits (`1998-01-02T03:04:05.000000Z` for a `timestamp`,
/// `1998-01-02 03:04:05.000000` for a `timestamp_ntz`), every other type
/// as written; `None` for a timestamp that does not read.
fn partition_text(text: &str, p: Primitive) -> Option<String> {
    if !matches!(p, Primitive::Timestamp | Primitive::TimestampNtz) {
        return Some(text.to_string());
    }
    let (date, time) = text.split_once('T')?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let date_ok = matches!(
        date.rsplitn(3, '-').collect::<Vec<_>>()[..],
        [d, m, y] if digits(d, 2) && digits(m, 2) && !y.is_empty()
    );
    let hms_ok = matches!(
        hms.split(':').collect::<Vec<_>>()[..],
        [h, m, s] if digits(h, 2) && digits(m, 2) && digits(s, 2)
    );
    let frac_ok = frac.len() <= 6 && frac.bytes().all(|b| b.is_ascii_digit());
    if !(date_ok && hms_ok && frac_ok) {
        return None;
    }
    Some(if p == Primitive::Timestamp {
        format!("{date}T{hms}.{frac:0<6}Z")
    } else {
        format!("{date} {hms}.{frac:0<6}")
    })
}

/// A path relative to the table as the URI an `add` action holds (RFC
/// 2396, which readers decode): letters, digits, `-`, `_`, `.`, `~`, `=`
/// and the `/` separators as they are, every other byte as `%XX` (a
/// partition directory's own escapes too: `s=a%2Fb` is `s=a%252Fb`).
pub fn path_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'=' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path an `add` or `remove` action's URI names: each `%XX` as its
/// byte (the inverse of [`path_uri`]); `None` for a malformed escape or
/// bytes that are not UTF-8.
pub fn path_from_uri(uri: &str) -> Option<String> {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = uri.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_survives_its_uri() {
        for p in [
            "a/b.parquet",
            "s=a%2Fb/x y.parquet",
            "k=\u{e9}t\u{e9}/f.parquet",
        ] {
            assert_eq!(path_from_uri(&path_uri(p)).as_deref(), Some(p));
        }
        assert_eq!(path_from_uri("a%2"), None);
        assert_eq!(path_from_uri("a%zz"), None);
    }

    #[test]
    fn dates_and_timestamps_read_as_iso_8601() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(-1), "1969-12-31");
        assert_eq!(date_text(10_591), "1998-12-31");
        assert_eq!(timestamp_text(0, true), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            timestamp_text(1_510_871_468_000_001, true),
            "2017-11-16T22:31:08.000001Z"
        );
        assert_eq!(timestamp_text(-1, false), "1969-12-31T23:59:59.999999");
    }

    #[test]
    fn partition_values_come_from_the_directories() {
        let columns = [
            ("flag".to_string(), Primitive::String),
            ("day".to_string(), Primitive::Date),
            ("at".to_string(), Primitive::Timestamp),
            ("local".to_string(), Primitive::TimestampNtz),
            ("price".to_string(), Primitive::Decimal(9, 2)),
        ];
        let path = "flag=a%2Fb/day=1998-01-02/at=2017-11-16T22:31:08.5/\
                    local=2017-11-16T22:31:08/price=__HIVE_DEFAULT_PARTITION__/f_0.parquet";
        let got = partition_values(path, &columns).unwrap();
        let want: BTreeMap<String, Option<String>> = [
            ("flag", Some("a/b")),
            ("day", Some("1998-01-02")),
            ("at", Some("2017-11-16T22:31:08.500000Z")),
            ("local", Some("2017-11-16 22:31:08.000000")),
            ("price", None),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
        .collect();
        assert_eq!(got, want);
        let e = partition_values("flag=R/f_0.parquet", &columns).unwrap_err();
        assert!(e.to_string().contains("no `day=VALUE` directory"), "{e}");
        let e = partition_values(
            "at=yesterday/f.parquet",
            &[("at".into(), Primitive::Timestamp)],
        )
        .unwrap_err();
        assert!(e.to_string().contains("is not a timestamp value"), "{e}");
    }

    #[test]
    fn paths_are_percent_encoded() {
        assert_eq!(
            path_uri("l_returnflag=R/lineitem_0.parquet"),
            "l_returnflag=R/lineitem_0.parquet"
        );
        assert_eq!(
            path_uri("s=a%2Fb c/t=1998-01-02T03%3A04%3A05/é.parquet"),
            "s=a%252Fb%20c/t=1998-01-02T03%253A04%253A05/%C3%A9.parquet"
        );
    }
}
