//! `layout = { ... }`: how a table's files are laid out, read as written
//! (partition fields and sort keys as text, sizes as numbers). The text
//! is checked against the table where the files are written, which also
//! lays the command line's settings over it.

use super::reader::P;
use crate::model::document::{self as doc, Raw, Tab};
use crate::model::{Layout, RowGroupSize, SpecError, parse_byte_size};

/// The keys of `layout = { ... }`.
const KEYS: [&str; 6] = [
    "partition_by",
    "sort_by",
    "target_file_size",
    "row_group_size",
    "page_size",
    "partition_columns",
];

impl P<'_> {
    /// The layout written at `t` (all unset when absent).
    pub(super) fn layout(&self, t: Option<&Tab<doc::Layout>>) -> Result<Layout, SpecError> {
        let Some(t) = t else {
            return Ok(Layout::default());
        };
        let lt = self.params(&t.at, None, "`layout`", &KEYS)?;
        let names = |v: &Option<doc::Loose<Vec<String>>>,
                     key: &str|
         -> Result<Vec<String>, SpecError> {
            let Some(v) = v else {
                return Ok(Vec::new());
            };
            let bad = |kind: &str| {
                self.err(
                    v.span(),
                    None,
                    format!("`layout.{key}` must be a string or an array of strings, not {kind}"),
                )
            };
            let list = match v.raw() {
                Raw::Str(s) => vec![s.clone()],
                Raw::Array(items) => items
                    .iter()
                    .map(|i| match &i.value {
                        Raw::Str(s) => Ok(s.clone()),
                        other => Err(bad(&format!("an array holding {}", other.kind()))),
                    })
                    .collect::<Result<_, _>>()?,
                other => return Err(bad(other.kind())),
            };
            if let Some(empty) = list.iter().find(|s| s.trim().is_empty()) {
                return Err(self.err(
                    v.span(),
                    None,
                    format!("`layout.{key}` holds an empty name ({empty:?})"),
                ));
            }
            Ok(list)
        };
        // A size: a positive integer, or text with a unit.
        let size =
            |v: &Option<doc::Loose<u64>>, key: &str| -> Result<Option<(u64, bool)>, SpecError> {
                let Some(v) = v else {
                    return Ok(None);
                };
                match v.raw() {
                Raw::Int(n) if *n >= 1 && *n <= i128::from(u64::MAX) => {
                    Ok(Some((*n as u64, false)))
                }
                Raw::Int(n) => Err(self.err(
                    v.span(),
                    None,
                    format!("`layout.{key}` = {n}: must be at least 1"),
                )),
                Raw::Str(s) => parse_byte_size(s)
                    .map(|b| Some((b, true)))
                    .map_err(|m| self.err(v.span(), None, format!("`layout.{key}`: {m}"))),
                other => Err(self.err(
                    v.span(),
                    None,
                    format!(
                        "`layout.{key}` must be a number or text with a unit (\"512MiB\"), not {}",
                        other.kind()
                    ),
                )),
            }
            };
        let keep_partition_columns = match &lt.partition_columns {
            None => None,
            Some(v) => match self.string(v, None, "partition_columns")?.as_str() {
                "keep" => Some(true),
                "drop" => Some(false),
                other => {
                    return Err(self.err(
                        v.span(),
                        None,
                        format!("`layout.partition_columns` = {other:?}: expected keep or drop"),
                    ));
                }
            },
        };
        Ok(Layout {
            line: self.line(t.span().start),
            partition_by: names(&lt.partition_by, "partition_by")?,
            sort_by: names(&lt.sort_by, "sort_by")?,
            target_file_size: size(&lt.target_file_size, "target_file_size")?.map(|(b, _)| b),
            row_group_size: size(&lt.row_group_size, "row_group_size")?.map(|(n, unit)| {
                if unit {
                    RowGroupSize::Bytes(n)
                } else {
                    RowGroupSize::Rows(n)
                }
            }),
            page_size: size(&lt.page_size, "page_size")?.map(|(b, _)| b),
            keep_partition_columns,
        })
    }
}
