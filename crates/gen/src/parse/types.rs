//! Arrow type names as a spec writes them (`decimal(12, 2)`,
//! `timestamp(ms, UTC)`), decimal text, and the placeholder types of
//! fields that copy another's.

use arrow_array::types::Decimal256Type;
use arrow_schema::{DataType, TimeUnit};

use crate::facts::{MAX_DECIMAL_PRECISION, MAX_DECIMAL256_PRECISION};
use crate::model::{Generator, Value};

pub(super) const TYPES: &str = "boolean, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, \
                     float64, decimal(P, S), utf8, large_utf8, binary, fixed_size_binary(N), \
                     dictionary, date32, timestamp(UNIT[, TZ]), time32(s|ms), time64(us|ns), \
                     duration(UNIT), struct, list, map";

/// Most bytes of a `fixed_size_binary(N)` value.
pub(super) const MAX_FIXED_BYTES: i64 = 1 << 16;

pub(super) enum TypeSpec {
    Scalar(DataType),
    Dictionary,
    Struct,
    List,
    Map,
}

pub(super) fn parse_type(s: &str) -> Result<TypeSpec, String> {
    let t = s.trim().to_ascii_lowercase();
    let scalar = |d| Ok(TypeSpec::Scalar(d));
    match t.as_str() {
        "bool" | "boolean" => scalar(DataType::Boolean),
        "int8" => scalar(DataType::Int8),
        "int16" => scalar(DataType::Int16),
        "int32" => scalar(DataType::Int32),
        "int64" => scalar(DataType::Int64),
        "uint8" => scalar(DataType::UInt8),
        "uint16" => scalar(DataType::UInt16),
        "uint32" => scalar(DataType::UInt32),
        "uint64" => scalar(DataType::UInt64),
        "float32" | "float" => scalar(DataType::Float32),
        "float64" | "double" => scalar(DataType::Float64),
        "utf8" | "string" => scalar(DataType::Utf8),
        "large_utf8" | "large_string" => scalar(DataType::LargeUtf8),
        "binary" => scalar(DataType::Binary),
        "date32" | "date" => scalar(DataType::Date32),
        "dictionary" => Ok(TypeSpec::Dictionary),
        "struct" => Ok(TypeSpec::Struct),
        "list" => Ok(TypeSpec::List),
        "map" => Ok(TypeSpec::Map),
        _ if t.starts_with("decimal") => parse_decimal(s).map(TypeSpec::Scalar),
        _ if t.starts_with("time32(") || t.starts_with("time64(") || t.starts_with("duration(") => {
            let (kind, arg) = t.split_once('(').unwrap_or_default();
            let unit = arg.strip_suffix(')').map(str::trim);
            let unit = match unit {
                Some("s") => TimeUnit::Second,
                Some("ms") => TimeUnit::Millisecond,
                Some("us") => TimeUnit::Microsecond,
                Some("ns") => TimeUnit::Nanosecond,
                _ => {
                    return Err(format!(
                        "type `{s}`: the unit is s, ms, us or ns (time32 takes s or ms, time64 us or ns)"
                    ));
                }
            };
            match (kind, unit) {
                ("time32", TimeUnit::Second | TimeUnit::Millisecond) => {
                    scalar(DataType::Time32(unit))
                }
                ("time64", TimeUnit::Microsecond | TimeUnit::Nanosecond) => {
                    scalar(DataType::Time64(unit))
                }
                ("duration", _) => scalar(DataType::Duration(unit)),
                _ => Err(format!(
                    "type `{s}`: time32 takes s or ms, time64 us or ns (Arrow's time types)"
                )),
            }
        }
        _ if t.starts_with("fixed_size_binary(") => {
            let n = t["fixed_size_binary(".len()..]
                .strip_suffix(')')
                .and_then(|n| n.trim().parse::<i64>().ok());
            match n {
                Some(n) if (1..=MAX_FIXED_BYTES).contains(&n) => {
                    scalar(DataType::FixedSizeBinary(n as i32))
                }
                _ => Err(format!(
                    "type `{s}`: fixed_size_binary(N) takes a byte width N from 1 to {MAX_FIXED_BYTES}"
                )),
            }
        }
        _ => {
            if let Some(args) = t
                .strip_prefix("timestamp(")
                .and_then(|r| r.strip_suffix(')'))
            {
                let orig = s.trim();
                let raw_args = &orig["timestamp(".len()..orig.len() - 1];
                let mut it = raw_args.splitn(2, ',').map(str::trim);
                let unit = match it.next().map(|u| u.to_ascii_lowercase()) {
                    Some(u) if u == "s" => TimeUnit::Second,
                    Some(u) if u == "ms" => TimeUnit::Millisecond,
                    Some(u) if u == "us" => TimeUnit::Microsecond,
                    Some(u) if u == "ns" => TimeUnit::Nanosecond,
                    _ => {
                        return Err(format!(
                            "type `{s}`: the timestamp unit is s, ms, us or ns ({args})"
                        ));
                    }
                };
                let tz = it.next().filter(|z| !z.is_empty());
                // As Arrow reads it: an IANA name or a fixed offset.
                if let Some(z) = tz
                    && z.parse::<arrow_array::timezone::Tz>().is_err()
                {
                    return Err(format!(
                        "type `{s}`: unknown time zone `{z}`; give an IANA name such as Europe/Paris or UTC, or an offset such as +05:30"
                    ));
                }
                return scalar(DataType::Timestamp(unit, tz.map(Into::into)));
            }
            Err(format!("unknown type `{s}`; the types are {TYPES}"))
        }
    }
}

/// Checks that `g` draws values of exactly `width` bytes for a
/// `fixed_size_binary(width)` field (templates are checked as they are
/// drawn).
pub(super) fn check_fixed(width: usize, g: &Generator) -> Result<(), String> {
    let values: Vec<&Value> = match g {
        Generator::Constant(v) => vec![v],
        Generator::Weighted { values, .. } => values.iter().collect(),
        Generator::Zipf {
            values: Some(values),
            ..
        } => values.iter().collect(),
        Generator::Uuid if width == 16 => vec![],
        Generator::Uuid => {
            return Err(format!(
                "`uuid` makes 16 bytes; declare the field fixed_size_binary(16), not ({width})"
            ));
        }
        Generator::Template(_) | Generator::Reference(_) => vec![],
        other => {
            return Err(format!(
                "fixed_size_binary({width}) takes constant, weighted or zipf values of {width} bytes, a template, uuid or a reference, not {other}"
            ));
        }
    };
    for v in values {
        if let Value::Str(s) = v
            && s.len() != width
        {
            return Err(format!(
                "value {s:?} has {} bytes; fixed_size_binary({width}) holds exactly {width}",
                s.len()
            ));
        }
    }
    Ok(())
}

/// The item field of a placeholder list or map type (see `copied` in
/// [`P::field`]): replaced by the referenced field's type.
pub(super) fn placeholder_item() -> arrow_schema::FieldRef {
    std::sync::Arc::new(arrow_schema::Field::new("item", DataType::Null, true))
}

/// Whether `declared` is a placeholder (a dictionary, struct, list or map
/// declared to be copied) of the same kind as `actual`.
pub(super) fn placeholder_of(declared: &DataType, actual: &DataType) -> bool {
    match (declared, actual) {
        (DataType::Null, DataType::Dictionary(..)) => true,
        (DataType::Struct(f), DataType::Struct(_)) => f.is_empty(),
        (DataType::List(i), DataType::List(_)) | (DataType::Map(i, _), DataType::Map(..)) => {
            *i.data_type() == DataType::Null && i.name() == "item"
        }
        _ => false,
    }
}

/// `decimal(P, S)` (or `decimal128(P, S)`): Arrow's `Decimal128(P, S)`, for
/// `1 <= P <= 38` and `0 <= S <= P`, and `Decimal256(P, S)` for `P` up to
/// 76.
pub(super) fn parse_decimal(s: &str) -> Result<DataType, String> {
    let t = s.trim().to_ascii_lowercase();
    let usage = format!(
        "type `{s}`: a decimal type is `decimal(P, S)`, P digits (1 to {MAX_DECIMAL256_PRECISION}) of which S (0 to P) follow the point"
    );
    // `decimal128(P, S)` and `decimal256(P, S)` name the Arrow type;
    // `decimal(P, S)` takes the narrower that holds P digits.
    let (named, rest) = match (t.strip_prefix("decimal128"), t.strip_prefix("decimal256")) {
        (Some(r), _) => (Some(MAX_DECIMAL_PRECISION), Some(r)),
        (_, Some(r)) => (Some(MAX_DECIMAL256_PRECISION), Some(r)),
        _ => (None, t.strip_prefix("decimal")),
    };
    let Some(args) = rest
        .map(str::trim)
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.strip_suffix(')'))
    else {
        return Err(usage);
    };
    let parts: Vec<&str> = args.split(',').map(str::trim).collect();
    let [p, sc] = parts.as_slice() else {
        return Err(usage);
    };
    let (Ok(p), Ok(sc)) = (p.parse::<i64>(), sc.parse::<i64>()) else {
        return Err(usage);
    };
    if named == Some(MAX_DECIMAL_PRECISION) && p > i64::from(MAX_DECIMAL_PRECISION) {
        return Err(format!(
            "type `{s}`: precision {p} is more than {MAX_DECIMAL_PRECISION} digits (Decimal128); write decimal(P, S) for Decimal256 past 38"
        ));
    }
    if p > i64::from(MAX_DECIMAL256_PRECISION) {
        return Err(format!(
            "type `{s}`: precision {p} is more than {MAX_DECIMAL256_PRECISION} digits (Decimal256, the widest)"
        ));
    }
    if p < 1 {
        return Err(format!(
            "type `{s}`: the precision is 1 to {MAX_DECIMAL256_PRECISION} digits, not {p}"
        ));
    }
    if sc < 0 || sc > p {
        return Err(format!(
            "type `{s}`: the scale is 0 to the precision ({p}), not {sc}"
        ));
    }
    if p > i64::from(MAX_DECIMAL_PRECISION) || named == Some(MAX_DECIMAL256_PRECISION) {
        return Ok(DataType::Decimal256(p as u8, sc as i8));
    }
    Ok(DataType::Decimal128(p as u8, sc as i8))
}

/// Units of `10^-scale` of the decimal text `text` (`-12.5` at scale 2 is
/// -1250; an exponent as TOML floats have it, `1.5e3`; `_` is ignored),
/// exactly; `None` when it is not a decimal number, has digits
/// below `10^-scale` (other than zeros) or does not fit `i128`.
pub(super) fn decimal_units(text: &str, scale: u8) -> Option<i128> {
    let t: String = text.trim().chars().filter(|c| *c != '_').collect();
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(&t);
    let (mantissa, exp) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{frac}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Arrow rounds digits below the scale: refuse them, but for trailing
    // zeros.
    let below = i64::try_from(frac.len()).ok()? - i64::from(exp);
    let zeros = (digits.len() - digits.trim_end_matches('0').len()) as i64;
    if below - zeros.min(below.max(0)) > i64::from(scale) {
        return None;
    }
    // Decimal256 holds every i128; magnitudes up to `i128::MAX` are kept.
    let units = arrow_cast::parse::parse_decimal::<Decimal256Type>(
        &t,
        MAX_DECIMAL256_PRECISION,
        i8::try_from(scale).ok()?,
    )
    .ok()?;
    units.to_i128().filter(|&u| u != i128::MIN)
}

/// A data type as a spec spells it (for messages).
pub(super) fn type_text(dt: &DataType) -> String {
    match dt {
        DataType::Boolean => "boolean".into(),
        DataType::Utf8 => "utf8".into(),
        DataType::LargeUtf8 => "large_utf8".into(),
        DataType::Date32 => "date32".into(),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => format!("decimal({p}, {s})"),
        DataType::Timestamp(u, tz) => {
            let u = match u {
                TimeUnit::Second => "s",
                TimeUnit::Millisecond => "ms",
                TimeUnit::Microsecond => "us",
                TimeUnit::Nanosecond => "ns",
            };
            match tz {
                Some(z) => format!("timestamp({u}, {z})"),
                None => format!("timestamp({u})"),
            }
        }
        DataType::Null => "a dictionary".into(),
        DataType::Struct(f) if f.is_empty() => "a struct".into(),
        DataType::Dictionary(..) => "a dictionary".into(),
        DataType::Struct(_) => "a struct".into(),
        DataType::List(_) => "a list".into(),
        DataType::Map(..) => "a map".into(),
        other => other.to_string().to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::decimal_units;
    use crate::rng::RowRng;

    /// The units by hand: the digits as written times `10^(exp + scale)`,
    /// shifted as text; digits cut off below the scale must be written
    /// zeros.
    fn reference(text: &str, scale: u8) -> Option<i128> {
        let t = text.trim().replace('_', "");
        let (neg, rest) = match t.as_bytes().first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, &t[..]),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], rest[at + 1..].parse::<i32>().ok()?),
            None => (rest, 0),
        };
        let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = format!("{whole}{frac}");
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let shift = i64::from(exp) - frac.len() as i64 + i64::from(scale);
        let kept = if shift >= 0 {
            let significant = digits.trim_start_matches('0');
            if significant.is_empty() {
                return Some(0);
            }
            if significant.len() as i64 + shift > 40 {
                return None;
            }
            format!("{significant}{}", "0".repeat(shift as usize))
        } else {
            let cut = usize::try_from(-shift).ok()?;
            if cut > digits.len() || digits[digits.len() - cut..].bytes().any(|b| b != b'0') {
                return None;
            }
            digits[..digits.len() - cut].to_string()
        };
        let magnitude: i128 = match kept.trim_start_matches('0') {
            "" => 0,
            m => m.parse().ok()?,
        };
        Some(if neg { -magnitude } else { magnitude })
    }

    /// Decimal text: up to 44 digits, some with trailing zeros, a point,
    /// a sign, underscores anywhere, an exponent, now and then a stray
    /// character.
    fn random_text(rng: &mut RowRng) -> String {
        let mut digits: String = (0..rng.next_below(45))
            .map(|_| char::from(b'0' + rng.next_below(10) as u8))
            .collect();
        if rng.next_below(3) == 0 {
            digits.push_str(&"0".repeat(rng.next_below(20) as usize));
        }
        let mut s = String::new();
        let sign = ["-", "+", "", ""][rng.next_below(4) as usize];
        s.push_str(sign);
        let point = rng.next_below(digits.len() as u64 + 2) as usize;
        for (i, c) in digits.chars().enumerate() {
            if i == point && rng.next_below(3) != 0 {
                s.push('.');
            }
            if rng.next_below(8) == 0 {
                s.push('_');
            }
            s.push(c);
        }
        if point == digits.len() && rng.next_below(2) == 0 {
            s.push('.');
        }
        if rng.next_below(3) == 0 {
            s.push(['e', 'E'][rng.next_below(2) as usize]);
            s.push_str(["-", "+", "", "_"][rng.next_below(4) as usize]);
            s.push_str(&rng.next_below(50).to_string());
        }
        if rng.next_below(40) == 0 {
            s.push(['x', '.', '-', ' '][rng.next_below(4) as usize]);
        }
        s
    }

    #[test]
    fn decimal_units_match_a_reference_by_hand() {
        let fixed = [
            "1.005",
            "1.500",
            "1_000.5",
            "+1.5e3",
            "-2.5E-1",
            ".5",
            "5.",
            ".",
            "",
            "-",
            "1e",
            "e5",
            "--1",
            "+-1",
            "1.2.3",
            "0e-5",
            "000e-5",
            "0e45",
            "1.0000000000000000000000000000000000000000",
            "123456789012345678901234567890123456789012e-20",
            "170141183460469231731687303715884105727",
            "-170141183460469231731687303715884105727",
            "-170141183460469231731687303715884105728",
            "170141183460469231731687303715884105728",
            "1e38",
            "1e39",
            "1e2147483647",
            "1e-2147483648",
            "1e99999999999",
        ];
        let mut rng = RowRng::seeded(11);
        let texts = fixed
            .iter()
            .map(|s| s.to_string())
            .chain((0..30_000).map(|_| random_text(&mut rng)));
        let mut found = 0;
        for text in texts {
            for scale in 0..=10 {
                let want = reference(&text, scale);
                assert_eq!(
                    decimal_units(&text, scale),
                    want,
                    "{text:?} at scale {scale}"
                );
                found += usize::from(want.is_some());
            }
        }
        assert!(found > 100_000, "only {found} texts are decimals");
        assert_eq!(decimal_units("1.005", 2), None);
        assert_eq!(decimal_units("1.500", 2), Some(150));
        assert_eq!(decimal_units(" -1_2.5e1 ", 0), Some(-125));
    }
}
