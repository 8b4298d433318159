//! The spec document being read: its serde types (positions kept), the
//! keys of each table in the order written, errors naming file, line and
//! field, and typed reads of single values.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::facts::MAX_NAME_BYTES;
use crate::model::SpecError;
use crate::model::document::{At, Document, Items, ItemsShape, Loose, Raw, Shape};

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

/// A value as written, at its place.
pub(super) type V = At<Raw>;

/// The keys of every table, in the order written, with where each is
/// written, by the table's place.
type KeyIndex = HashMap<(usize, usize), Vec<(String, Range<usize>)>>;

/// An item of an array of tables, at its place: the table read as `T`,
/// or the other value written instead.
pub(super) type Item<'d, T> = (Range<usize>, Result<&'d T, &'d Raw>);

/// The item of a `Shape`: its table, or the value written instead.
pub(super) fn item<T>(at: &At<Shape<T>>) -> Item<'_, T> {
    let table = match &at.value {
        Shape::Table(t) => Ok(t),
        Shape::Value(v) => Err(v),
    };
    (at.span.clone(), table)
}

/// `item` of a boxed table.
pub(super) fn boxed_item<T>(at: &At<Shape<Box<T>>>) -> Item<'_, T> {
    let table = match &at.value {
        Shape::Table(t) => Ok(&**t),
        Shape::Value(v) => Err(v),
    };
    (at.span.clone(), table)
}

pub(super) struct P<'s> {
    origin: &'s str,
    /// The spec's text (as TOML).
    text: Cow<'s, str>,
    /// Byte offsets of the text's newlines, for line numbers in
    /// `O(log n)` (a spec of many thousand fields asks for thousands).
    newlines: Vec<usize>,
    /// The keys of every table, in the order written, with where each
    /// is written, by the table's place (serde's types know which keys
    /// a table takes; this knows their order and position, for errors).
    keys: KeyIndex,
    /// The place of the root table.
    root: Range<usize>,
    /// The spec's own word lists (`lists`), by name.
    pub(super) lists: std::collections::BTreeMap<String, Vec<String>>,
    /// Reads a file named by the spec (a word list's), relative to the
    /// spec file's directory; none for a spec that is no file.
    pub(super) files: Option<Files<'s>>,
}

/// How a spec's files are read: the text of a path, or why not.
pub type Files<'s> = &'s dyn Fn(&str) -> Result<String, String>;

/// The keys of `t` and of every table inside it, by place.
fn index_keys(t: &DeTable<'_>, span: Range<usize>, out: &mut KeyIndex) {
    fn visit(v: &Spanned<DeValue<'_>>, out: &mut KeyIndex) {
        match v.get_ref() {
            DeValue::Table(t) => index_keys(t, v.span(), out),
            DeValue::Array(items) => items.iter().for_each(|i| visit(i, out)),
            _ => {}
        }
    }
    out.insert(
        (span.start, span.end),
        t.iter()
            .map(|(k, _)| (k.get_ref().to_string(), k.span()))
            .collect(),
    );
    for (_, v) in t.iter() {
        visit(v, out);
    }
}

pub(super) fn distribution_message(e: crate::Error) -> String {
    match e {
        crate::Error::InvalidDistribution(m) => m,
        other => other.to_string(),
    }
}

/// The key a JSON spec's object is read under: the object becomes a
/// TOML inline table, `r={...}`, so that every value keeps its line.
const JSON_ROOT: &str = "r=";

/// A JSON spec as TOML text of the same lines: `r=` before the object,
/// each `:` between a key and its value an `=` (TOML allows inline tables
/// over several lines). The text is valid JSON (checked before).
fn json_as_toml(text: &str, origin: &str) -> Result<String, SpecError> {
    let mut out = String::with_capacity(text.len() + JSON_ROOT.len());
    out.push_str(JSON_ROOT);
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, '/') => {
                    // JSON's `\/` is no TOML escape; the same character.
                    out.push_str("u002F");
                    escaped = false;
                    continue;
                }
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            out.push(c);
            continue;
        }
        match c {
            '"' => in_string = true,
            ':' => {
                out.push('=');
                continue;
            }
            'n' if text[i..].starts_with("null") => {
                let line = text[..i].matches('\n').count() + 1;
                let column = i - text[..i].rfind('\n').map_or(0, |n| n + 1) + 1;
                return Err(SpecError {
                    origin: origin.to_string(),
                    line,
                    column: Some(column),
                    field: None,
                    message: "`null` is no spec value: leave the key out".into(),
                });
            }
            _ => {}
        }
        out.push(c);
    }
    Ok(out)
}

/// The document of a spec, TOML or JSON (an object: the same document,
/// as `strata spec schema` describes it): its reader state and serde
/// document.
pub(super) fn load<'i>(
    text: &'i str,
    origin: &'i str,
    files: Option<Files<'i>>,
) -> Result<(P<'i>, Document), SpecError> {
    let json = text.trim_start().starts_with('{');
    let text: Cow<'i, str> = if json {
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            return Err(SpecError {
                origin: origin.to_string(),
                line: e.line(),
                column: Some(e.column()),
                field: None,
                message: format!(
                    "JSON syntax: {}",
                    // The place is said once, before the message.
                    e.to_string()
                        .rsplit_once(" at line ")
                        .map_or(e.to_string(), |(m, _)| m.to_string())
                ),
            });
        }
        Cow::Owned(json_as_toml(text, origin)?)
    } else {
        Cow::Borrowed(text)
    };
    let mut p = P {
        origin,
        newlines: text
            .bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i)
            .collect(),
        text: Cow::Borrowed(""),
        keys: HashMap::new(),
        root: 0..0,
        lists: Default::default(),
        files,
    };
    // The column of a place (on the first line of a JSON spec, less the
    // `r=` before the object).
    let column = |span: Range<usize>| {
        let line_start = text[..span.start.min(text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let shift = if json && line_start == 0 {
            JSON_ROOT.len()
        } else {
            0
        };
        span.start.saturating_sub(line_start + shift) + 1
    };
    let to_error = |e: toml::de::Error, p: &P<'_>, syntax: &str| {
        let span = e.span().unwrap_or(0..0);
        SpecError {
            origin: origin.to_string(),
            line: p.line(span.start),
            column: Some(column(span)),
            field: None,
            message: format!("{syntax}{}", e.message().trim()),
        }
    };
    let syntax = if json { "" } else { "TOML syntax: " };
    let root = DeTable::parse(&text).map_err(|e| to_error(e, &p, syntax))?;
    let doc = if json {
        let Some((_, object)) = root.into_inner().into_iter().next() else {
            return Err(p.err(0..0, None, "the JSON text holds no object"));
        };
        p.root = object.span();
        if let DeValue::Table(t) = object.get_ref() {
            index_keys(t, object.span(), &mut p.keys);
        }
        Document::deserialize(toml::de::ValueDeserializer::from(object))
    } else {
        p.root = root.span();
        index_keys(root.get_ref(), root.span(), &mut p.keys);
        Document::deserialize(toml::de::Deserializer::from(root))
    }
    .map_err(|e| to_error(e, &p, ""))?;
    p.text = text;
    p.lists = p.word_lists(&doc)?;
    Ok((p, doc))
}

impl SpecError {
    pub(super) fn at_line(mut self, line: usize) -> Self {
        self.line = line;
        self
    }
}

impl P<'_> {
    /// A `name` (the dataset's or a table's), checked: it names files.
    pub(super) fn file_name(
        &self,
        name: Option<&Loose<String>>,
        what: &str,
        at: Range<usize>,
    ) -> Result<String, SpecError> {
        let Some(n) = name else {
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

    /// The spec's origin (its file name), for messages.
    pub(super) fn origin(&self) -> &str {
        self.origin
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

    /// The text of `v` as written (a number's digits, exactly).
    pub(super) fn written(&self, v: &V) -> &str {
        self.text.get(v.span.clone()).unwrap_or_default().trim()
    }

    /// The place of the root table.
    pub(super) fn root(&self) -> Range<usize> {
        self.root.clone()
    }

    /// The keys of the table written at `span`, in order, with where
    /// each is written.
    pub(super) fn keys(&self, span: &Range<usize>) -> &[(String, Range<usize>)] {
        self.keys
            .get(&(span.start, span.end))
            .map_or(&[], Vec::as_slice)
    }

    /// Refuses the first key of the table at `span` that is not one of
    /// `allowed`.
    pub(super) fn check_keys(
        &self,
        span: &Range<usize>,
        allowed: &[&str],
        field: Option<&str>,
        what: &str,
    ) -> Result<(), SpecError> {
        if let Some((k, at)) = self
            .keys(span)
            .iter()
            .find(|(k, _)| !allowed.contains(&k.as_str()))
        {
            return Err(self.err(
                at.clone(),
                field,
                format!(
                    "unknown key `{k}` in {what}; expected one of: {}",
                    allowed.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// The table `t` holds, or an error naming what it holds instead.
    pub(super) fn table<'a, T>(
        &self,
        t: &'a At<Shape<T>>,
        field: Option<&str>,
        what: &str,
    ) -> Result<&'a T, SpecError> {
        match &t.value {
            Shape::Table(t) => Ok(t),
            Shape::Value(other) => Err(self.err(
                t.span.clone(),
                field,
                format!("{what} must be a table, not {}", other.kind()),
            )),
        }
    }

    pub(super) fn string(
        &self,
        v: &V,
        field: Option<&str>,
        key: &str,
    ) -> Result<String, SpecError> {
        match &v.value {
            Raw::Str(s) => Ok(s.clone()),
            other => Err(self.err(
                v.span.clone(),
                field,
                format!("`{key}` must be a string, not {}", other.kind()),
            )),
        }
    }

    pub(super) fn boolean(&self, v: &V, field: Option<&str>, key: &str) -> Result<bool, SpecError> {
        match &v.value {
            Raw::Bool(b) => Ok(*b),
            other => Err(self.err(
                v.span.clone(),
                field,
                format!("`{key}` must be true or false, not {}", other.kind()),
            )),
        }
    }

    pub(super) fn number(&self, v: &V, field: Option<&str>, key: &str) -> Result<f64, SpecError> {
        match &v.value {
            Raw::Int(i) => Ok(*i as f64),
            Raw::Float(f) => Ok(*f),
            other => Err(self.err(
                v.span.clone(),
                field,
                format!("`{key}` must be a number, not {}", other.kind()),
            )),
        }
    }

    pub(super) fn integer(&self, v: &V, field: Option<&str>, key: &str) -> Result<i128, SpecError> {
        match &v.value {
            Raw::Int(i) => Ok(*i),
            other => Err(self.err(
                v.span.clone(),
                field,
                format!("`{key}` must be an integer, not {}", other.kind()),
            )),
        }
    }

    pub(super) fn rate(&self, v: &V, field: Option<&str>, key: &str) -> Result<f64, SpecError> {
        let r = self.number(v, field, key)?;
        if !(0.0..=1.0).contains(&r) {
            return Err(self.err(
                v.span.clone(),
                field,
                format!("`{key}` must be between 0 and 1, not {r}"),
            ));
        }
        Ok(r)
    }

    /// The items of an array of tables; one table stands for an array
    /// of one where `one` allows it. `not_array` says what is wrong with
    /// another value, given its kind.
    pub(super) fn items<'d, T>(
        &self,
        items: &'d Items<T>,
        one: bool,
        field: Option<&str>,
        not_array: impl FnOnce(&str) -> String,
    ) -> Result<Vec<Item<'d, T>>, SpecError> {
        match &items.at.value {
            ItemsShape::Array(list) => Ok(list.iter().map(item).collect()),
            ItemsShape::One(t) if one => Ok(vec![(items.span(), Ok(&**t))]),
            ItemsShape::One(_) => Err(self.err(items.span(), field, not_array("a table"))),
            ItemsShape::Value(v) => Err(self.err(items.span(), field, not_array(v.kind()))),
        }
    }

    /// The table of `item`, or an error naming what it is instead.
    pub(super) fn item_table<'d, T>(
        &self,
        item: &Item<'d, T>,
        field: Option<&str>,
        what: &str,
    ) -> Result<&'d T, SpecError> {
        item.1.map_err(|v| {
            self.err(
                item.0.clone(),
                field,
                format!("{what} must be a table, not {}", v.kind()),
            )
        })
    }
}
