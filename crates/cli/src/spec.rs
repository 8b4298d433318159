//! `strata spec`: show a preset, check a spec file, print a spec's first
//! rows, print the JSON Schema.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::Result;
use clap::Subcommand;
use strata_gen::{BatchGenerator, Dataset, Rows, Spec};

#[derive(Subcommand, Debug)]
pub(crate) enum SpecCommand {
    /// Print a preset's spec (TOML), a starting point for your own.
    #[command(after_help = "Examples:
  strata spec show orders
  strata spec show events > events.toml")]
    Show {
        /// contacts, wide-u64, events, lineitem, or a dataset of several
        /// tables: star or orders.
        name: String,
    },
    /// Check a spec file and print the schema it describes, with each
    /// field's generator; errors name the line and field.
    #[command(after_help = "Examples:
  strata spec check events.toml")]
    Check {
        /// The spec file (TOML).
        file: PathBuf,
    },
    /// Print the first rows of every table of a spec as a table on the
    /// terminal, without writing files.
    #[command(after_help = "Examples:
  strata spec sample orders --rows 5
  strata spec sample events.toml --table events --seed 7")]
    Sample {
        /// A spec file (TOML) or a preset name.
        spec: String,
        /// Rows to print per table.
        #[arg(long, short = 'n', default_value_t = 10)]
        rows: u64,
        /// Only this table of a dataset.
        #[arg(long, short)]
        table: Option<String>,
        /// The seed.
        #[arg(long, default_value_t = strata_pipeline::generate::DEFAULT_SEED)]
        seed: u64,
    },
    /// Print the JSON Schema of spec files (for editors and validators).
    #[command(after_help = "Examples:
  strata spec schema > spec.schema.json")]
    Schema,
}

/// Most rows `spec sample` prints per table.
const MAX_SAMPLE_ROWS: u64 = 10_000;

pub(crate) fn preset_names() -> Vec<&'static str> {
    strata_gen::PRESETS
        .iter()
        .chain(strata_gen::DATASET_PRESETS)
        .map(|(n, _)| *n)
        .collect()
}

/// A spec file: one table (a plain spec) or a dataset of `[[tables]]`,
/// of at most [`strata_gen::MAX_SPEC_BYTES`].
pub(crate) fn read_dataset(path: &Path) -> Result<Dataset> {
    Ok(strata_pipeline::flow::read_spec_file(path)?)
}

/// A spec file, or a preset when `spec` names no file but a preset (a
/// directory of that name, such as a dataset generated from the preset,
/// does not hide it).
pub(crate) fn file_or_preset(spec: &str) -> Result<Dataset> {
    let path = Path::new(spec);
    if !path.is_file() && Dataset::preset_text(spec).is_some() {
        return Ok(Dataset::preset(spec)?);
    }
    read_dataset(path)
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
            // What the spec computes per run, at scale 1, once for all its
            // tables; the unresolved dataset shows what it was written as.
            let at_one = dataset.at_scale(1.0)?;
            for (i, table) in dataset.tables.iter().enumerate() {
                let spec = &table.spec;
                // Compiling checks what parsing cannot (nothing, for a
                // parsed spec; but a failure here is a bug worth reporting
                // plainly).
                let generator = at_one.generator(i, 0, 1.0)?;
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
                        (Some(Rows::Expr { value, per_scale }), _) => format!(
                            "{} rows{}, computed per run ({} at scale 1)",
                            value.source,
                            if *per_scale {
                                " per unit of --scale"
                            } else {
                                ""
                            },
                            at_one.tables[i].rows.as_ref().map_or(0, |r| r.at(1.0))
                        ),
                        (None, None) => String::new(),
                    };
                    writeln!(
                        out,
                        "table `{}`: {rows}{}, {} top-level fields",
                        spec.name,
                        if table.stratified { ", stratified" } else { "" },
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
                if let (Some(c), Some(key)) = (&spec.changes, &spec.primary_key) {
                    writeln!(
                        out,
                        "  history: {} versions after version 0 (primary key `{key}`): per version \
                         insert {}, update {}, delete {} of the rows alive; updates {}; update \
                         fields {}; on delete {}",
                        c.versions,
                        c.insert,
                        c.update,
                        c.delete,
                        c.zipf.map_or_else(
                            || "on every row alike".to_string(),
                            |s| format!("on hot rows (zipf {s})")
                        ),
                        c.update_fields.join(", "),
                        c.on_delete.name()
                    )?;
                }
            }
        }
        SpecCommand::Sample {
            spec,
            rows,
            table,
            seed,
        } => sample(
            &mut out,
            &file_or_preset(&spec)?,
            rows,
            table.as_deref(),
            seed,
        )?,
        SpecCommand::Schema => {
            out.write_all(strata_gen::json_schema().as_bytes())?;
        }
    }
    Ok(())
}

/// `strata spec sample`: the first `rows` rows of each table (or of
/// `only`), as text tables, each under its name for a dataset.
fn sample(
    out: &mut impl Write,
    dataset: &Dataset,
    rows: u64,
    only: Option<&str>,
    seed: u64,
) -> Result<()> {
    anyhow::ensure!(
        (1..=MAX_SAMPLE_ROWS).contains(&rows),
        "--rows must be between 1 and {MAX_SAMPLE_ROWS}, not {rows}"
    );
    let tables: Vec<usize> = match only {
        None => (0..dataset.tables.len()).collect(),
        Some(name) => vec![dataset.table(name).ok_or_else(|| {
            anyhow::anyhow!(
                "--table: `{}` has no table `{name}`; its tables are {}",
                dataset.name,
                dataset
                    .tables
                    .iter()
                    .map(|t| t.spec.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?],
    };
    // What the spec computes per run, at scale 1.
    let dataset = &*dataset.at_scale(1.0)?;
    for (n, &i) in tables.iter().enumerate() {
        let table = &dataset.tables[i];
        let generator = dataset.generator(i, seed, 1.0)?;
        // A table of its own rows, or a child table: the children of its
        // root's first rows, as many of those as give `rows` children.
        let root_rows = match &dataset.tables[dataset.root_of(i)].rows {
            Some(r) if dataset.multi_table => r.at(1.0),
            _ => u64::MAX,
        };
        let per_root = dataset.rows_per_root_row(i).max(1e-3);
        let mut batches = Vec::new();
        let (mut have, mut first) = (0u64, 0u64);
        let mut scratch = Default::default();
        while have < rows && first < root_rows {
            let want = ((rows - have) as f64 / per_root).ceil() as u64;
            let ask = want.clamp(1, MAX_SAMPLE_ROWS).min(root_rows - first);
            let batch = generator.generate(first, ask as usize, &mut scratch)?;
            let keep = batch.num_rows().min((rows - have) as usize);
            have += keep as u64;
            batches.push(batch.slice(0, keep));
            first += ask;
        }
        if n > 0 {
            writeln!(out)?;
        }
        if dataset.multi_table {
            writeln!(out, "table `{}`:", table.spec.name)?;
        }
        writeln!(
            out,
            "{}",
            arrow_cast::pretty::pretty_format_batches(&batches)?
        )?;
    }
    Ok(())
}

/// The fields of `spec` and its leaves' Parquet encodings, as `strata
/// spec check` prints them.
fn check_lines(
    out: &mut impl Write,
    spec: &Spec,
    generator: &strata_gen::SpecGenerator,
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
fn spec_line(f: &strata_gen::Field) -> String {
    use strata_gen::Kind;
    let mut line = match &f.kind {
        Kind::Scalar {
            data_type,
            generator,
        } => format!(
            "{}: {data_type}, {}",
            f.name,
            generator.display_as(data_type)
        ),
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
        line.push_str(&format!(", null {}", strata_gen::share_text(f.null_rate)));
    } else if !f.nullable {
        line.push_str(", not null");
    }
    if f.hidden {
        line.push_str(", hidden (not written)");
    }
    for w in &f.when {
        match &f.kind {
            Kind::Scalar { data_type, .. } => {
                line.push_str(&format!(", {}", w.display_as(data_type)));
            }
            _ => line.push_str(&format!(", {w}")),
        }
    }
    line
}
