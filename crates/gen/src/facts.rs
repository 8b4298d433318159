//! Domain facts the spec's model, checks, engine and expected shares
//! share: the limits a spec must stay within and the calendar's names.
//! A leaf: it uses no other module of the crate.

/// Most elements a list or map may hold.
pub(crate) const MAX_LENGTH: i128 = 1 << 20;

/// The longest field or spec name, in bytes (names become column names
/// and file names).
pub(crate) const MAX_NAME_BYTES: usize = 255;

/// Most digits of a decimal type stored as Arrow's `Decimal128`; wider
/// ones are `Decimal256`.
pub(crate) const MAX_DECIMAL_PRECISION: u8 = 38;

/// Most digits of a decimal type (Arrow's `Decimal256`).
pub(crate) const MAX_DECIMAL256_PRECISION: u8 = 76;

/// The English names of the days of the week, Monday first.
pub(crate) const DAY_NAMES: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// The English names of the months.
pub(crate) const MONTH_NAMES: [&str; 12] = [
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

/// Draws of a map key before the engine gives up on drawing one the map
/// does not hold yet and takes the first unused key that can occur.
pub const MAP_KEY_DRAWS: u32 = 64;
