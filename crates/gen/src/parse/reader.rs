//! The TOML document being read: positions of its keys, errors naming
//! file, line and field, and typed reads of single keys.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::facts::MAX_NAME_BYTES;
use crate::model::SpecError;

/// `name` for an error message: whole when short, else its start.
pub(super) fn shown(name: &str) -> String {
    if name.len() <= 40 {
        return name.to_string();
    }
    let mut end = 40;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &name[..end])
}

pub(super) struct P<'s> {
    origin: &'s str,
    /// Byte offsets of the text's newlines, for line numbers in
    /// `O(log n)` (a spec of many thousand fields asks for thousands).
    newlines: Vec<usize>,
}

pub(super) type Sp<'i> = Spanned<DeValue<'i>>;

pub(super) fn get<'a, 'i>(t: &'a DeTable<'i>, key: &str) -> Option<&'a Sp<'i>> {
    t.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
}

pub(super) fn kind_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

impl SpecError {
    pub(super) fn at_line(mut self, line: usize) -> Self {
        self.line = line;
        self
    }
}

pub(super) fn distribution_message(e: crate::Error) -> String {
    match e {
        crate::Error::InvalidDistribution(m) => m,
        other => other.to_string(),
    }
}

pub(super) fn int_of(text: &str, radix: u32) -> Option<i128> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(&t)),
    };
    let digits = if radix != 10 {
        digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0o"))
            .or_else(|| digits.strip_prefix("0b"))
            .unwrap_or(digits)
    } else {
        digits
    };
    let v = i128::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

pub(super) fn float_of(text: &str) -> Option<f64> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    match t.as_str() {
        "inf" | "+inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        _ => t.parse().ok(),
    }
}

/// The TOML document of a spec: its parser state and root table.
pub(super) fn load<'i>(text: &'i str, origin: &'i str) -> Result<(P<'i>, DeTable<'i>), SpecError> {
    let p = P {
        origin,
        newlines: text
            .bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i)
            .collect(),
    };
    let root = DeTable::parse(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let line = p.line(span.start);
        let line_start = text[..span.start.min(text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        SpecError {
            origin: origin.to_string(),
            line,
            column: Some(span.start.saturating_sub(line_start) + 1),
            field: None,
            message: format!("TOML syntax: {}", e.message().trim()),
        }
    })?;
    Ok((p, root.into_inner()))
}

impl P<'_> {
    /// The `name` of `t` (the dataset's or a table's), checked: it names
    /// files.
    pub(super) fn file_name(
        &self,
        t: &DeTable<'_>,
        what: &str,
        at: Range<usize>,
    ) -> Result<String, SpecError> {
        let Some(n) = get(t, "name") else {
            return Err(self.err(at, None, format!("{what} needs a `name`")));
        };
        let name = self.string(n, None, "name")?;
        if name.len() > MAX_NAME_BYTES {
            return Err(self.err(
                n.span(),
                None,
                format!(
                    "`name` = \"{}\" is {} bytes long; names are at most {MAX_NAME_BYTES}",
                    shown(&name),
                    name.len()
                ),
            ));
        }
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            || name == "."
            || name == ".."
        {
            return Err(self.err(
                n.span(),
                None,
                format!(
                    "`name` = {name:?}: use letters, digits, `-`, `_` and `.` (it names files)"
                ),
            ));
        }
        Ok(name)
    }
}

/// Whether `name` can stand in an expression as it is (`ps` in `ps.x`).
pub(super) fn is_plain_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl<'s> P<'s> {
    pub(super) fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }

    pub(super) fn err(
        &self,
        span: Range<usize>,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> SpecError {
        SpecError {
            origin: self.origin.to_string(),
            line: self.line(span.start),
            column: None,
            field: field.map(str::to_string),
            message: message.into(),
        }
    }

    /// An error at a known line.
    pub(super) fn err_at(
        &self,
        line: usize,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> SpecError {
        SpecError {
            origin: self.origin.to_string(),
            line,
            column: None,
            field: field.map(str::to_string),
            message: message.into(),
        }
    }

    pub(super) fn check_keys(
        &self,
        t: &DeTable<'_>,
        allowed: &[&str],
        field: Option<&str>,
        what: &str,
    ) -> Result<(), SpecError> {
        for (k, _) in t.iter() {
            if !allowed.contains(&k.get_ref().as_ref()) {
                return Err(self.err(
                    k.span(),
                    field,
                    format!(
                        "unknown key `{}` in {what}; expected one of: {}",
                        k.get_ref(),
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn table<'a, 'i>(
        &self,
        v: &'a Sp<'i>,
        field: Option<&str>,
        what: &str,
    ) -> Result<&'a DeTable<'i>, SpecError> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t),
            other => Err(self.err(
                v.span(),
                field,
                format!("{what} must be a table, not {}", kind_name(other)),
            )),
        }
    }

    pub(super) fn string(
        &self,
        v: &Sp<'_>,
        field: Option<&str>,
        key: &str,
    ) -> Result<String, SpecError> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.err(
                v.span(),
                field,
                format!("`{key}` must be a string, not {}", kind_name(other)),
            )),
        }
    }

    pub(super) fn boolean(
        &self,
        v: &Sp<'_>,
        field: Option<&str>,
        key: &str,
    ) -> Result<bool, SpecError> {
        match v.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            other => Err(self.err(
                v.span(),
                field,
                format!("`{key}` must be true or false, not {}", kind_name(other)),
            )),
        }
    }

    pub(super) fn number(
        &self,
        v: &Sp<'_>,
        field: Option<&str>,
        key: &str,
    ) -> Result<f64, SpecError> {
        let bad = |what: &str| {
            self.err(
                v.span(),
                field,
                format!("`{key}` must be a number, not {what}"),
            )
        };
        match v.get_ref() {
            DeValue::Integer(i) => int_of(i.as_str(), i.radix())
                .map(|i| i as f64)
                .ok_or_else(|| bad("an integer this large")),
            DeValue::Float(f) => {
                let x: f64 = float_of(f.as_str()).ok_or_else(|| bad("this float"))?;
                Ok(x)
            }
            other => Err(bad(kind_name(other))),
        }
    }

    pub(super) fn integer(
        &self,
        v: &Sp<'_>,
        field: Option<&str>,
        key: &str,
    ) -> Result<i128, SpecError> {
        match v.get_ref() {
            DeValue::Integer(i) => int_of(i.as_str(), i.radix())
                .ok_or_else(|| self.err(v.span(), field, format!("`{key}`: integer out of range"))),
            other => Err(self.err(
                v.span(),
                field,
                format!("`{key}` must be an integer, not {}", kind_name(other)),
            )),
        }
    }

    pub(super) fn rate(
        &self,
        v: &Sp<'_>,
        field: Option<&str>,
        key: &str,
    ) -> Result<f64, SpecError> {
        let r = self.number(v, field, key)?;
        if !(0.0..=1.0).contains(&r) {
            return Err(self.err(
                v.span(),
                field,
                format!("`{key}` must be between 0 and 1, not {r}"),
            ));
        }
        Ok(r)
    }
}
