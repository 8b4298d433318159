//! Calendar dates and times, on chrono: days of a proleptic Gregorian
//! date, and the text forms a spec's values and its expressions accept.

use chrono::NaiveDate;

/// Days in the 400 years after which the Gregorian calendar repeats.
const CYCLE_DAYS: i128 = 146_097;

/// Days since 1970-01-01 of the proleptic Gregorian date `y-m-d`, `None`
/// when there is no such day. Years beyond chrono's (about 262,000 either
/// side of year 0) are read through the 400-year cycle.
pub(crate) fn days_from_civil(y: i128, m: u32, d: u32) -> Option<i128> {
    let in_cycle = i32::try_from(y.rem_euclid(400)).ok()?;
    let date = NaiveDate::from_ymd_opt(in_cycle, m, d)?;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    Some(i128::from((date - epoch).num_days()) + y.div_euclid(400) * CYCLE_DAYS)
}

/// Days since 1970-01-01 of a spec's date text, `Y-M-D` with years from
/// -1,000,000 to 1,000,000.
pub(crate) fn spec_date(s: &str) -> Option<i128> {
    let mut it = s.trim().splitn(3, '-');
    let y: i128 = it.next()?.parse().ok()?;
    let m: u32 = it.next()?.parse().ok()?;
    let d: u32 = it.next()?.parse().ok()?;
    if !(-1_000_000..=1_000_000).contains(&y) {
        return None;
    }
    days_from_civil(y, m, d)
}

/// Days since 1970-01-01 of `YYYY-MM-DD`.
pub(crate) fn parse_date(s: &str) -> Option<i32> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_days() {
        assert_eq!(days_from_civil(1970, 1, 1), Some(0));
        assert_eq!(days_from_civil(2000, 3, 1), Some(11_017));
        assert_eq!(days_from_civil(1969, 12, 31), Some(-1));
        assert_eq!(spec_date("2024-02-29"), Some(19_782));
    }
}
