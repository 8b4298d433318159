//! The entry points on a spec and a dataset: reading spec text, parsing
//! it, finding presets, and building generators.

use crate::engine::SpecGenerator;
use crate::model::{DATASET_PRESETS, Dataset, Field, Kind, PRESETS, Spec, SpecError};
use crate::{expected, parse};

/// The largest spec file [`read_text`] reads: 16 MiB, far above any
/// hand-written spec (the presets are a few KiB), so that a wrong path
/// (`/dev/zero`, a data file) fails at once instead of filling memory.
pub const MAX_SPEC_BYTES: u64 = 16 << 20;

/// The text of a spec from `reader` (a file), at most [`MAX_SPEC_BYTES`]
/// bytes.
///
/// # Errors
/// The reader's errors; [`std::io::ErrorKind::InvalidData`] for text
/// that is not UTF-8 or is larger than [`MAX_SPEC_BYTES`].
pub fn read_text(reader: impl std::io::Read) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    reader.take(MAX_SPEC_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SPEC_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB, the most a spec file may hold",
                MAX_SPEC_BYTES >> 20
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not valid UTF-8 text: {e}"),
        )
    })
}

impl Spec {
    /// Parses and checks a spec; `origin` (a file name) prefixes errors.
    ///
    /// # Errors
    /// A [`SpecError`] naming the line and field of the first problem.
    pub fn parse(text: &str, origin: &str) -> Result<Spec, SpecError> {
        parse::parse(text, origin)
    }

    /// The text of preset `name`.
    pub fn preset_text(name: &str) -> Option<&'static str> {
        PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// Preset `name`, parsed.
    ///
    /// # Errors
    /// A [`SpecError`] when there is no such preset (presets themselves
    /// are checked by the crate's tests).
    pub fn preset(name: &str) -> Result<Spec, SpecError> {
        // A dataset preset is found too, and refused as several tables.
        let text = Dataset::preset_text(name).ok_or_else(|| no_preset(name))?;
        Spec::parse(text, &format!("preset {name}"))
    }

    /// Every field, depth first, with its depth (0 for top-level).
    pub fn walk(&self) -> Vec<(&Field, usize)> {
        fn go<'a>(f: &'a Field, depth: usize, out: &mut Vec<(&'a Field, usize)>) {
            out.push((f, depth));
            match &f.kind {
                Kind::Scalar { .. } => {}
                Kind::Struct(children) => {
                    for c in children {
                        go(c, depth + 1, out);
                    }
                }
                Kind::List { item, .. } => go(item, depth + 1, out),
                Kind::Map { key, value, .. } => {
                    go(key, depth + 1, out);
                    go(value, depth + 1, out);
                }
            }
        }
        let mut out = Vec::new();
        for f in &self.fields {
            go(f, 0, &mut out);
        }
        out
    }

    /// The generator for `seed`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidDistribution`] for parameters that
    /// [`Spec::parse`] accepted but cannot be sampled (never for a parsed
    /// spec; fields built in code may still be wrong).
    pub fn generator(&self, seed: u64) -> Result<SpecGenerator, crate::Error> {
        SpecGenerator::new(self, seed)
    }
}

/// The error for a preset name that is none of the presets.
fn no_preset(name: &str) -> SpecError {
    SpecError {
        origin: name.to_string(),
        line: 0,
        column: None,
        field: None,
        message: format!(
            "no such preset; the presets are {}",
            PRESETS
                .iter()
                .chain(DATASET_PRESETS)
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl Dataset {
    /// Parses and checks a dataset: a file of `[[tables]]`, or a plain
    /// spec (one table, its row count left to the caller). Every
    /// reference is resolved: its table and field exist, the types agree,
    /// and no table reaches itself through references.
    ///
    /// # Errors
    /// A [`SpecError`] naming the line and field of the first problem.
    pub fn parse(text: &str, origin: &str) -> Result<Dataset, SpecError> {
        parse::parse_dataset(text, origin, None)
    }

    /// [`Dataset::parse`] of a spec file whose word lists may be files
    /// (`lists = { colours = { file = "colours.txt" } }`): `read` gives
    /// the text of such a path (relative to the spec file's directory; the
    /// caller reads it, so that this crate does no I/O), or why not.
    ///
    /// # Errors
    /// As [`Dataset::parse`]; a list's file that `read` refuses is a
    /// [`SpecError`] at its line.
    pub fn parse_with_files(
        text: &str,
        origin: &str,
        read: &dyn Fn(&str) -> Result<String, String>,
    ) -> Result<Dataset, SpecError> {
        parse::parse_dataset(text, origin, Some(read))
    }

    /// The text of preset `name`: a dataset of several tables
    /// ([`DATASET_PRESETS`]) or a single-table one ([`PRESETS`]).
    pub fn preset_text(name: &str) -> Option<&'static str> {
        DATASET_PRESETS
            .iter()
            .chain(PRESETS)
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
    }

    /// Preset `name`, parsed.
    ///
    /// # Errors
    /// A [`SpecError`] when there is no such preset.
    pub fn preset(name: &str) -> Result<Dataset, SpecError> {
        let text = Dataset::preset_text(name).ok_or_else(|| no_preset(name))?;
        Dataset::parse(text, &format!("preset {name}"))
    }

    /// The index of table `name`.
    pub fn table(&self, name: &str) -> Option<usize> {
        self.tables.iter().position(|t| t.spec.name == name)
    }

    /// The table whose rows drive `table`'s: `table` itself, or for a
    /// child table its root ancestor (a batch of a child table's generator
    /// holds the children of the root rows it is asked for).
    pub fn root_of(&self, table: usize) -> usize {
        let mut at = table;
        for _ in 0..self.tables.len() {
            match self.tables[at]
                .children_of
                .as_ref()
                .and_then(|c| self.table(&c.parent))
            {
                Some(p) => at = p,
                None => break,
            }
        }
        at
    }

    /// The mean rows of `table` per row of its root (1 for a table with
    /// rows of its own): the product of the mean counts down the chain
    /// (with `count` cases, of the table's own count: an estimate).
    pub fn rows_per_root_row(&self, table: usize) -> f64 {
        let mut mean = 1.0;
        let mut at = table;
        for _ in 0..self.tables.len() {
            let Some(c) = &self.tables[at].children_of else {
                break;
            };
            mean *= expected::length_pmf(&c.count)
                .map_or(1.0, |p| p.points.iter().map(|(l, q)| *l as f64 * q).sum());
            match self.table(&c.parent) {
                Some(p) => at = p,
                None => break,
            }
        }
        mean
    }

    /// The generator of table `table` for `seed`, its references drawing
    /// from their tables' row counts at `scale`.
    ///
    /// # Errors
    /// As [`Spec::generator`], and [`crate::Error::InvalidDistribution`]
    /// when a referenced table has no rows at `scale`.
    pub fn generator(
        &self,
        table: usize,
        seed: u64,
        scale: f64,
    ) -> Result<SpecGenerator, crate::Error> {
        SpecGenerator::for_table(self, table, seed, scale)
    }
}
