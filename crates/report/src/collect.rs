//! Gathering a [`Report`] from files: see the crate docs.

use strata_store::location::StoreConfig;

use crate::{Error, model::Report};

/// What to read and check.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The dataset's spec, for expected distributions, references and the
    /// summary's checks.
    pub spec: Option<strata_gen::Dataset>,
    /// How `s3://` inputs are reached.
    pub store: StoreConfig,
    /// The page's title (default: the spec's name, else the inputs).
    pub title: Option<String>,
}

/// Reads `inputs` (directories of tables, table directories, or files;
/// local or `s3://`) and gathers their report.
pub fn collect(inputs: &[String], opts: &Options) -> Result<Report, Error> {
    let _ = (inputs, opts);
    Err(Error::Input("not yet".into()))
}

/// `strata infer --compare`: the original dataset's columns beside the
/// generated dataset's, with each column's distance (from `comparison`,
/// which `strata_infer::compare` measured) in the summary.
pub fn collect_comparison(
    original: &[String],
    generated: &[String],
    comparison: &strata_infer::Comparison,
    opts: &Options,
) -> Result<Report, Error> {
    let _ = (original, generated, comparison, opts);
    Err(Error::Input("not yet".into()))
}
