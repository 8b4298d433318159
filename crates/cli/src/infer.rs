//! `strata infer`: a dataset spec modelled on existing files, and the
//! comparison of a generated dataset with its original.

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use clap::Args;

use crate::common::{StoreArgs, local_output, parse};

#[derive(Args, Debug)]
pub(crate) struct InferArgs {
    /// Parquet, Arrow IPC or CSV files, directories (a table per
    /// subdirectory or file stem) or s3://BUCKET/PREFIX/ locations. With
    /// --compare: the original dataset, then the generated one.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,
    /// Write the spec here (TOML; created only when complete, never over an
    /// existing file without --overwrite) instead of printing it.
    #[arg(short, long, value_parser = local_output)]
    output: Option<PathBuf>,
    /// Replace an existing --output (or --report, --json, --html) file.
    #[arg(long)]
    overwrite: bool,
    /// Rows read per table: a count (1000000), a fraction (0.1) or `all`.
    /// Parquet inputs are sampled by whole row groups spread over the
    /// table (null counts and integer ranges still cover every row group,
    /// from the files' statistics); IPC and CSV inputs by their first rows.
    /// Parent-child tables are found only in tables read whole.
    #[arg(long, default_value = "10000000", value_parser = parse::<strata_infer::Sample, String>)]
    sample: strata_infer::Sample,
    /// The fewest times a value (a category, a word of a pattern, a
    /// character) must occur to be written into the spec.
    #[arg(long, default_value_t = 10, value_name = "K")]
    min_count: u64,
    /// Columns with more distinct values than this keep only their pattern
    /// or distribution, never a value.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    max_categories: usize,
    /// The dataset's name in the spec.
    #[arg(long, default_value = "inferred")]
    name: String,
    /// Write the report (every choice and relationship, with its evidence)
    /// as JSON here.
    #[arg(long, value_parser = local_output)]
    report: Option<PathBuf>,
    /// Compare: the first INPUT is the original dataset, the second the
    /// generated one; prints each column's distance and exits with status 1
    /// when one is out of bounds.
    #[arg(long)]
    compare: bool,
    /// With --compare: also write the comparison as JSON here.
    #[arg(long, value_parser = local_output)]
    json: Option<PathBuf>,
    /// With --compare: also write an HTML page (inline SVG, nothing
    /// fetched) drawing each column of the original beside the generated
    /// one, with the distances as its summary.
    #[arg(long, value_parser = local_output, requires = "compare")]
    html: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
}

fn write(path: &std::path::Path, bytes: &[u8], overwrite: bool) -> Result<()> {
    strata_store::output::write_atomically(path, bytes, overwrite, true)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Runs `strata infer`; a comparison out of bounds is a
/// [`CheckFailed`](crate::exit::CheckFailed) error.
pub(crate) fn run(args: InferArgs) -> Result<()> {
    let opts = strata_infer::Options {
        sample: args.sample,
        min_count: args.min_count,
        max_categories: args.max_categories,
        store: args.store.config(),
        name: args.name.clone(),
        ..Default::default()
    };
    for p in [&args.output, &args.report, &args.json, &args.html]
        .into_iter()
        .flatten()
    {
        if !args.overwrite && p.exists() {
            bail!("{} exists (add --overwrite to replace it)", p.display());
        }
    }
    if args.compare {
        let [original, generated] = args.inputs.as_slice() else {
            bail!(
                "--compare takes two inputs, the original dataset and the generated one, not {}",
                args.inputs.len()
            );
        };
        let c = strata_infer::compare(
            std::slice::from_ref(original),
            std::slice::from_ref(generated),
            &opts,
        )?;
        print!("{}", c.table());
        if let Some(p) = &args.json {
            write(p, &serde_json::to_vec_pretty(&c)?, args.overwrite)?;
        }
        if let Some(p) = &args.html {
            let report = strata_report::collect_comparison(
                std::slice::from_ref(original),
                std::slice::from_ref(generated),
                &c,
                &strata_report::Options {
                    store: args.store.config(),
                    title: Some(format!("{original} against {generated}")),
                    ..Default::default()
                },
            )?;
            crate::report::write(&report, p, None, args.overwrite)?;
        }
        if !c.passed() {
            return Err(crate::exit::CheckFailed(format!(
                "the generated data is out of bounds: {} column(s), {} key(s), {} table(s) unmatched",
                c.failed_columns(),
                c.failed_keys(),
                c.unmatched.len()
            ))
            .into());
        }
        return Ok(());
    }
    if args.json.is_some() {
        bail!("--json is for --compare; the inference's report is written by --report");
    }
    let out = strata_infer::infer(&args.inputs, &opts)?;
    if let Some(p) = &args.report {
        write(p, &serde_json::to_vec_pretty(&out.report)?, args.overwrite)?;
    }
    for r in &out.report.relationships {
        eprintln!(
            "{} {}.{}{}: {}",
            r.kind,
            r.table,
            r.column,
            r.target
                .as_ref()
                .map_or(String::new(), |t| format!(" -> {t}")),
            r.evidence
        );
    }
    match &args.output {
        Some(p) => {
            write(p, out.spec.as_bytes(), args.overwrite)?;
            let rows: u64 = out.report.tables.iter().map(|t| t.rows).sum();
            eprintln!(
                "wrote {} ({} tables, {rows} rows modelled)",
                p.display(),
                out.report.tables.len()
            );
        }
        None => print!("{}", out.spec),
    }
    Ok(())
}
