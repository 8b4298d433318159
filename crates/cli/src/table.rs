//! `strata table`: `commit` (tables written in parts, committed as one)
//! and `clean` (the files a table does not reference, removed).

use std::{io::Write, path::PathBuf};

use strata_pipeline::table::StagedCommit;

use crate::common::StoreArgs;

use anyhow::Result;
use clap::{Args, Subcommand};

#[derive(Subcommand, Debug)]
pub(crate) enum TableCommand {
    /// Commit every part staged in an Iceberg or Delta table by `strata
    /// generate --format iceberg|delta --parts P --part I` runs as one
    /// snapshot or version (a new table, or an append), then remove the
    /// staged fragments.
    /// A missing part, or parts of different runs, are refused and nothing
    /// is committed.
    #[command(after_help = "Examples:
  # four parts, written anywhere, then one commit
  strata generate --preset lineitem --format iceberg --output-dir wh --parts 4 --part 1
  strata generate --preset lineitem --format iceberg --output-dir wh --parts 4 --part 2
  strata generate --preset lineitem --format iceberg --output-dir wh --parts 4 --part 3
  strata generate --preset lineitem --format iceberg --output-dir wh --parts 4 --part 4
  strata table commit wh/lineitem
  strata table commit wh/lineitem --catalog sqlite:catalog.db")]
    Commit(CommitArgs),
    /// List and remove the files a table does not reference: data files
    /// and manifests of runs killed before their commit, and strata's
    /// temporaries whose process is gone. Only files older than
    /// --older-than go (a run still writing has files no version names
    /// yet); the files of staged parts stay.
    #[command(after_help = "Examples:
  strata table clean warehouse/lineitem --dry-run
  strata table clean warehouse/lineitem --older-than 0")]
    Clean(CleanArgs),
}

#[derive(Args, Debug)]
pub(crate) struct CleanArgs {
    /// The table: a directory, or an `s3://bucket/prefix/TABLE` URL.
    table: String,
    /// Keep files younger than this: a number of seconds, or with a unit
    /// (`90s`, `30m`, `12h`, `7d`). Pass 0 when no writer is running.
    #[arg(long, default_value = "1d", value_name = "AGE", value_parser = parse_age)]
    older_than: std::time::Duration,
    /// List the files, remove nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    store: StoreArgs,
}

/// An age: seconds, or a number with `s`, `m`, `h` or `d`.
fn parse_age(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => t.split_at(i),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return Err(format!("unknown unit '{unit}' in '{s}' (use s, m, h or d)")),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("expected an age such as 3600, 30m or 7d, not '{s}'"))?;
    if !(n.is_finite() && n >= 0.0) {
        return Err(format!("an age is not negative: '{s}'"));
    }
    Ok(std::time::Duration::from_secs_f64(n * scale))
}

#[derive(Args, Debug)]
pub(crate) struct CommitArgs {
    /// The table (OUTPUT/TABLE of the part runs): a directory, or an
    /// `s3://bucket/prefix/TABLE` URL.
    table: String,
    /// Also register the table in Iceberg's SQL catalog in a SQLite file
    /// (`sqlite:PATH`).
    #[arg(long, value_name = "sqlite:PATH")]
    catalog: Option<String>,
    /// The catalog's name (its `catalog_name`).
    #[arg(long, default_value = "default", requires = "catalog")]
    catalog_name: String,
    /// The catalog namespace of the table.
    #[arg(long, default_value = "default", requires = "catalog")]
    namespace: String,
    /// Create the namespace if the catalog does not have it.
    #[arg(long, requires = "catalog")]
    create_namespace: bool,
    #[command(flatten)]
    store: StoreArgs,
}

/// A `--catalog sqlite:PATH` as the pipeline's catalog.
pub(crate) fn catalog(
    text: &str,
    name: &str,
    namespace: &str,
    create_namespace: bool,
) -> Result<strata_pipeline::table::Catalog> {
    let path = text
        .strip_prefix("sqlite:")
        .ok_or_else(|| anyhow::anyhow!("--catalog {text}: expected sqlite:PATH (a SQLite file)"))?;
    Ok(strata_pipeline::table::Catalog {
        // `sqlite:///PATH` as SQLAlchemy writes it (four slashes for an
        // absolute path), or `sqlite:PATH`.
        path: PathBuf::from(path.strip_prefix("///").unwrap_or(path)),
        name: name.to_string(),
        namespace: namespace.to_string(),
        create_namespace,
    })
}

/// Prints the line of an Iceberg table's new version: its snapshot, the
/// rows it added and holds, and the commits it was built on.
pub(crate) fn print_committed(
    dir: &std::path::Path,
    c: &strata_pipeline::table::IcebergCommitted,
) -> Result<()> {
    writeln!(
        std::io::stdout().lock(),
        "iceberg table {}: version {}, snapshot {} added {} rows ({} in the table){} ({})",
        dir.display(),
        c.version,
        c.snapshot_id,
        c.rows,
        c.total_rows,
        if c.retries > 0 {
            format!(", after {} concurrent commit(s)", c.retries)
        } else {
            String::new()
        },
        c.metadata.display()
    )?;
    Ok(())
}

/// Prints the lines of a Delta table's new version: the files and rows
/// it added, and its checkpoint when it wrote one.
pub(crate) fn print_delta_committed(
    dir: &std::path::Path,
    c: &strata_pipeline::table::DeltaCommitted,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "delta table {}: version {}, {} files, {} rows ({})",
        dir.display(),
        c.version,
        c.files,
        c.rows,
        c.log_file.display()
    )?;
    if let Some(cp) = &c.checkpoint {
        writeln!(
            out,
            "delta table {}: checkpoint at version {} ({} actions, {} files)",
            dir.display(),
            cp.version,
            cp.actions,
            cp.files
        )?;
    }
    Ok(())
}

/// Warns, on stderr, of a due checkpoint a committed Delta version could
/// not write (the commit stands).
pub(crate) fn warn_checkpoint(c: &strata_pipeline::table::DeltaCommitted) {
    if let Some(e) = &c.checkpoint_error {
        eprintln!("warning: version {} committed; {e}", c.version);
    }
}

pub(crate) fn run(cmd: TableCommand) -> Result<()> {
    match cmd {
        TableCommand::Clean(args) => {
            let dir = strata_pipeline::table::TableDir::open(&args.table, &args.store.config())?;
            let min_age = i64::try_from(args.older_than.as_millis()).unwrap_or(i64::MAX);
            let found = strata_pipeline::table::find_orphans(&dir, min_age)?;
            let mut out = std::io::stdout().lock();
            for o in &found.orphans {
                writeln!(out, "{} {}", o.bytes, dir.at(&o.path).display())?;
            }
            let bytes: u64 = found.orphans.iter().map(|o| o.bytes).sum();
            let verb = if args.dry_run {
                "would remove"
            } else {
                "removed"
            };
            if !args.dry_run {
                strata_pipeline::table::remove_orphans(&dir, &found.orphans)?;
            }
            writeln!(
                out,
                "{} table {dir}: {verb} {} unreferenced files ({bytes} bytes); {} referenced{}",
                found.format,
                found.orphans.len(),
                found.referenced,
                if found.young.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; kept {} unreferenced files younger than --older-than",
                        found.young.len()
                    )
                }
            )?;
            Ok(())
        }
        TableCommand::Commit(args) => {
            let catalog = args
                .catalog
                .as_deref()
                .map(|c| {
                    catalog(
                        c,
                        &args.catalog_name,
                        &args.namespace,
                        args.create_namespace,
                    )
                })
                .transpose()?;
            let dir = strata_pipeline::table::TableDir::open(&args.table, &args.store.config())?;
            match strata_pipeline::table::commit_staged(&dir, catalog.as_ref())? {
                StagedCommit::Iceberg(c) => print_committed(&dir.root(), &c),
                StagedCommit::Delta(c) => {
                    print_delta_committed(&dir.root(), &c)?;
                    warn_checkpoint(&c);
                    Ok(())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::parse_age;

    #[test]
    fn ages_take_units_and_refuse_the_rest() {
        assert_eq!(parse_age("0"), Ok(Duration::ZERO));
        assert_eq!(parse_age("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_age("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_age("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_age("7d"), Ok(Duration::from_secs(7 * 86400)));
        assert!(parse_age("3w").unwrap_err().contains("unknown unit"));
        assert!(parse_age("-1").unwrap_err().contains("not negative"));
        assert!(parse_age("soon").unwrap_err().contains("unknown unit"));
        assert!(parse_age("").unwrap_err().contains("expected an age"));
    }
}
