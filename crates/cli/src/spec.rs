//! `strata spec`: show a preset, check a spec file, print the JSON Schema.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result};
use clap::Subcommand;
use strata_gen::{
    BatchGenerator,
    spec::{Dataset, Rows, Spec},
};

#[derive(Subcommand, Debug)]
pub(crate) enum SpecCommand {
    /// Print a preset's spec (TOML), a starting point for your own.
    Show {
        /// contacts, wide-u64, events, lineitem, or a dataset of several
        /// tables: star or orders.
        name: String,
    },
    /// Check a spec file and print the schema it describes, with each
    /// field's generator; errors name the line and field.
    Check {
        /// The spec file (TOML).
        file: PathBuf,
    },
    /// Print the JSON Schema of spec files (for editors and validators).
    Schema,
}

pub(crate) fn preset_names() -> Vec<&'static str> {
    strata_gen::spec::PRESETS
        .iter()
        .chain(strata_gen::spec::DATASET_PRESETS)
        .map(|(n, _)| *n)
        .collect()
}

/// A spec file: one table (a plain spec) or a dataset of `[[tables]]`.
pub(crate) fn read_dataset(path: &Path) -> Result<Dataset> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read spec file {}", path.display()))?;
    Ok(Dataset::parse(&text, &path.display().to_string())?)
}

pub(crate) fn run(cmd: SpecCommand) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match cmd {
        SpecCommand::Show { name } => {
            let text = Dataset::preset_text(&name).ok_or_else(|| {
                anyhow::anyhow!(
                    "no preset named '{name}'; the presets are {}",
                    preset_names().join(", ")
                )
            })?;
            out.write_all(text.as_bytes())?;
        }
        SpecCommand::Check { file } => {
            let dataset = read_dataset(&file)?;
            if dataset.multi_table {
                writeln!(
                    out,
                    "{}: ok, dataset `{}` with {} tables",
                    file.display(),
                    dataset.name,
                    dataset.tables.len()
                )?;
            }
            for (i, table) in dataset.tables.iter().enumerate() {
                let spec = &table.spec;
                // Compiling checks what parsing cannot (nothing, for a
                // parsed spec; but a failure here is a bug worth reporting
                // plainly).
                let generator = dataset.generator(i, 0, 1.0)?;
                if dataset.multi_table {
                    let rows = match (&table.rows, &table.children_of) {
                        (_, Some(c)) => {
                            let mut text = format!("{} rows per `{}` row", c.count, c.parent);
                            for w in &c.count_when {
                                text.push_str(&format!(
                                    ", {} where {}",
                                    w.count, w.condition.source
                                ));
                            }
                            text
                        }
                        (Some(Rows::Fixed(n)), _) if table.calendar.is_some() => {
                            format!("a calendar of {n} days, one row each")
                        }
                        (Some(Rows::Fixed(n)), _) => format!("{n} rows"),
                        (Some(Rows::PerScale(r)), _) => format!("{r} rows per unit of --scale"),
                        (None, None) => String::new(),
                    };
                    writeln!(
                        out,
                        "table `{}`: {rows}, {} top-level fields",
                        spec.name,
                        spec.fields.len()
                    )?;
                } else {
                    writeln!(
                        out,
                        "{}: ok, spec `{}` with {} top-level fields",
                        file.display(),
                        spec.name,
                        spec.fields.len()
                    )?;
                }
                check_lines(&mut out, spec, &generator)?;
            }
        }
        SpecCommand::Schema => {
            out.write_all(strata_gen::spec::JSON_SCHEMA.as_bytes())?;
        }
    }
    Ok(())
}

/// The fields of `spec` and its leaves' Parquet encodings, as `strata
/// spec check` prints them.
fn check_lines(
    out: &mut impl Write,
    spec: &Spec,
    generator: &strata_gen::spec::SpecGenerator,
) -> Result<()> {
    for (f, depth) in spec.walk() {
        writeln!(out, "{}{}", "  ".repeat(depth + 1), spec_line(f))?;
    }
    for (what, leaves) in [
        (
            "Parquet DELTA_BINARY_PACKED (sequences)",
            generator.delta_leaves(),
        ),
        (
            "Parquet dictionary off (many distinct values)",
            generator.dictionary_unfriendly_leaves(),
        ),
        (
            "Parquet BYTE_STREAM_SPLIT with a codec (floats of many values)",
            strata_pipeline::generate::split_leaves(generator)?,
        ),
        (
            "Parquet DELTA_LENGTH_BYTE_ARRAY (strings of many values)",
            strata_pipeline::generate::lengths_leaves(generator)?,
        ),
    ] {
        if !leaves.is_empty() {
            let paths: Vec<String> = leaves.iter().map(|l| l.join(".")).collect();
            writeln!(out, "{what}: {}", paths.join(", "))?;
        }
    }
    Ok(())
}

/// One line of `strata spec check`: name, Arrow type, generator, nulls.
fn spec_line(f: &strata_gen::spec::Field) -> String {
    use strata_gen::spec::Kind;
    let mut line = match &f.kind {
        Kind::Scalar {
            data_type,
            generator,
        } => format!("{}: {data_type}, {generator}", f.name),
        Kind::Struct(c) => format!("{}: struct of {} fields", f.name, c.len()),
        Kind::List {
            length,
            empty_as_null,
            ..
        } => format!(
            "{}: list, length {length}{}",
            f.name,
            if *empty_as_null {
                ", empty lists null"
            } else {
                ""
            }
        ),
        Kind::Map { length, .. } => format!("{}: map, length {length}", f.name),
    };
    if f.null_rate > 0.0 {
        line.push_str(&format!(", null {}", f.null_rate));
    } else if !f.nullable {
        line.push_str(", not null");
    }
    for w in &f.when {
        line.push_str(&format!(", {w}"));
    }
    line
}
