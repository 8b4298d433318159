//! `strata report` over the default `contacts` output (nested lists of
//! structs, strings, categories; 4 uncompressed Parquet files) with its
//! spec, beside DuckDB's `SUMMARIZE` of the same files on the same number
//! of threads. Both read every row. strata profiles every column and
//! nested field (histograms, top values, lengths, null rates at each
//! level, key skew), reads the footers for the layout, checks the data
//! against the spec and draws the page.

use strata_gen::BatchGenerator;

use super::common::{preset_files, summarize_case};
use crate::{Case, Config, Error, Size, Unit, case_err};

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let rows: u64 = match cfg.size {
        Size::Tiny => 50_000,
        Size::Full => 10_000_000,
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (dir, files) = preset_files("contacts", rows, threads)?;
    let columns = strata_gen::preset("contacts", 42).schema().fields().len();
    let spec = strata_gen::Dataset::preset("contacts").map_err(case_err)?;
    let name = format!("report contacts {rows} rows");
    let input = vec![dir.path().display().to_string()];
    let d = dir.clone();
    Ok(vec![
        Case::new(&name, "strata", Unit::Rows, rows as f64, move || {
            let _keep = &d;
            let opts = strata_report::Options {
                spec: Some(spec.clone()),
                ..Default::default()
            };
            let report = strata_report::collect(&input, &opts).map_err(case_err)?;
            let page = strata_report::html::render(&report);
            let read = report.tables.first().map_or(0, |t| t.rows);
            if read != rows || page.is_empty() {
                return Err(Error::Case(format!(
                    "the report read {read} rows, not {rows}"
                )));
            }
            Ok(())
        }),
        summarize_case(cfg, &name, &files, columns, threads, rows),
    ])
}
