//! `strata table commit`: tables written in parts, committed as one.

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
    ///
    /// Example: for i in 1 2 3 4; do strata generate --preset lineitem
    /// --format iceberg --output-dir wh --parts 4 --part $i; done; strata
    /// table commit wh/lineitem
    Commit(CommitArgs),
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

pub(crate) fn run(cmd: TableCommand) -> Result<()> {
    match cmd {
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
                    if let Some(e) = &c.checkpoint_error {
                        eprintln!("warning: version {} committed; {e}", c.version);
                    }
                    Ok(())
                }
            }
        }
    }
}
