//! Calendar dates and times: the text forms a spec and its expressions
//! accept, read with chrono.

/// Days since 1970-01-01 of `YYYY-MM-DD`.
pub(crate) fn parse_date(s: &str) -> Option<i32> {
    use chrono::NaiveDate;
    let d = NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").ok()?;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    i32::try_from((d - epoch).num_days()).ok()
}

/// Microseconds since 1970-01-01 00:00:00 of `YYYY-MM-DD[ HH:MM:SS[.f]]`.
pub(crate) fn parse_timestamp(s: &str) -> Option<i64> {
    use chrono::NaiveDateTime;
    let s = s.trim();
    let t = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f"))
        .ok()
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()?
                .and_hms_opt(0, 0, 0)
        })?;
    Some(t.and_utc().timestamp_micros())
}
