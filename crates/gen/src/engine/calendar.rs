//! Calendar parts (year, month, day of week, ...) of a day number, for
//! calendar tables.

use crate::model::CalendarPart;

/// Part `part` of day `day` (days since 1970-01-01) as an integer (the
/// day itself, a number, 0/1, or the index of its name), and its category
/// code.
pub(super) fn calendar_int(day: i64, part: CalendarPart) -> (u64, u8) {
    use chrono::{Datelike, NaiveDate};
    // 1970-01-01 is day 719,163 of the common era.
    let Some(d) = i32::try_from(day + 719_163)
        .ok()
        .and_then(NaiveDate::from_num_days_from_ce_opt)
    else {
        return (0, 0);
    };
    let v: i64 = match part {
        CalendarPart::Date => day,
        CalendarPart::DateKey => {
            i64::from(d.year()) * 10_000 + i64::from(d.month()) * 100 + i64::from(d.day())
        }
        CalendarPart::Year => d.year().into(),
        CalendarPart::Quarter => ((d.month() - 1) / 3 + 1).into(),
        CalendarPart::Month => d.month().into(),
        CalendarPart::DayOfMonth => d.day().into(),
        CalendarPart::DayOfYear => d.ordinal().into(),
        CalendarPart::DayOfWeek => d.weekday().number_from_monday().into(),
        CalendarPart::WeekOfYear => d.iso_week().week().into(),
        CalendarPart::DayName => {
            let k = d.weekday().num_days_from_monday();
            return (k.into(), k as u8);
        }
        CalendarPart::MonthName => {
            let k = d.month0();
            return (k.into(), k as u8);
        }
        CalendarPart::Weekend => {
            let b = d.weekday().num_days_from_monday() >= 5;
            return (u64::from(b), u8::from(b));
        }
    };
    (v as u64, 0)
}
