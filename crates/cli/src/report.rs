//! `strata report`: one self-contained HTML page showing a dataset's
//! columns, references and files, checked against its spec when one is
//! given.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args;

use crate::common::{StoreArgs, local_output};

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// The dataset: a directory of tables (one subdirectory per table, as
    /// `generate` writes a spec of several tables), a table's directory
    /// (Hive partitions, Iceberg or Delta tables included), Parquet or
    /// Arrow IPC files, or s3://BUCKET/PREFIX/ locations.
    #[arg(required = true, value_name = "INPUT")]
    pub(crate) inputs: Vec<String>,
    /// The spec the data was generated from (a file or a preset name): its
    /// distributions are drawn over the realised ones, its references are
    /// checked, and the summary flags every share more than 5 standard
    /// errors from it, as `generate --verify-distribution` does.
    #[arg(long)]
    pub(crate) spec: Option<String>,
    /// Write the page here (created only when complete).
    #[arg(short, long, value_parser = local_output)]
    pub(crate) output: PathBuf,
    /// Replace an existing --output (or --json) file.
    #[arg(long)]
    pub(crate) overwrite: bool,
    /// Also write what the page shows as JSON here.
    #[arg(long, value_parser = local_output)]
    pub(crate) json: Option<PathBuf>,
    /// The page's title [default: the spec's name, else the inputs].
    #[arg(long)]
    pub(crate) title: Option<String>,
    #[command(flatten)]
    pub(crate) store: StoreArgs,
}

/// Runs `strata report`.
pub(crate) fn run(args: ReportArgs) -> Result<()> {
    for p in std::iter::once(&args.output).chain(&args.json) {
        anyhow::ensure!(
            args.overwrite || !p.exists(),
            "{} exists; pass --overwrite to replace it",
            p.display()
        );
    }
    let spec = args
        .spec
        .as_deref()
        .map(crate::spec::file_or_preset)
        .transpose()?;
    let opts = strata_report::Options {
        spec,
        store: args.store.config(),
        title: args.title.clone(),
    };
    let report = strata_report::collect(&args.inputs, &opts)?;
    write(&report, &args.output, args.json.as_deref(), args.overwrite)?;
    let flagged = report.summary.iter().filter(|r| r.flagged).count();
    println!(
        "report of {} table(s) written to {}{}",
        report.tables.len(),
        args.output.display(),
        if report.summary.is_empty() {
            String::new()
        } else {
            format!(
                "; {flagged} of {} checks against the spec flagged",
                report.summary.len()
            )
        }
    );
    Ok(())
}

/// Writes `report` as HTML to `html` (and as JSON to `json`), each whole
/// or not at all.
pub(crate) fn write(
    report: &strata_report::Report,
    html: &std::path::Path,
    json: Option<&std::path::Path>,
    overwrite: bool,
) -> Result<()> {
    strata_report::write_html(report, html, overwrite)
        .with_context(|| format!("cannot write {}", html.display()))?;
    if let Some(path) = json {
        let bytes = serde_json::to_vec_pretty(report)?;
        strata_store::output::write_atomically(path, &bytes, overwrite, false)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
