//! `strata infer` over lineitem-shaped Parquet (the `lineitem` preset:
//! 16 columns of keys, decimals, dates, categories and comment text), with
//! sampling off, beside DuckDB's `SUMMARIZE` of the same files on the same
//! number of threads. Both read every row; strata also fits
//! distributions, reads string patterns and looks for keys, and writes a
//! spec it parses back.

use super::common::{preset_files, summarize_case};
use crate::{Case, Config, Error, Size, Unit, case_err};

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let rows: u64 = match cfg.size {
        Size::Tiny => 50_000,
        Size::Full => 10_000_000,
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (dir, files) = preset_files("lineitem", rows, threads)?;
    let columns = 16;
    let name = format!("infer lineitem {rows} rows, sampling off");
    let input = vec![dir.path().display().to_string()];
    let d = dir.clone();
    Ok(vec![
        Case::new(&name, "strata", Unit::Rows, rows as f64, move || {
            let _keep = &d;
            let opts = strata_infer::Options {
                sample: strata_infer::Sample::All,
                ..strata_infer::Options::default()
            };
            let inferred = strata_infer::infer(&input, &opts).map_err(case_err)?;
            let t = &inferred.report.tables[0];
            if t.scanned != rows || t.columns.len() != columns {
                return Err(Error::Case(format!(
                    "inferred {} rows and {} columns, not {rows} and {columns}",
                    t.scanned,
                    t.columns.len()
                )));
            }
            Ok(())
        }),
        summarize_case(cfg, &name, &files, columns, threads, rows),
    ])
}
