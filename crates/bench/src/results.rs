//! A suite's results: what they hold, their dates, and saving and loading them as JSON.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{CaseResult, Context, Error, Suite, error::io_err};

/// One suite's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The suite.
    pub suite: Suite,
    /// Where and how.
    pub context: Context,
    /// Every case, in suite order.
    pub cases: Vec<CaseResult>,
}

/// `YYYY-MM-DD HH:MM:SS` of Unix seconds (days to civil date by the
/// proleptic Gregorian calendar, in 400-year eras).
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Reads a saved run.
pub fn load(path: &Path) -> Result<RunResult, Error> {
    let text = std::fs::read_to_string(path).map_err(io_err("read", path))?;
    serde_json::from_str(&text).map_err(|e| Error::BadResults {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Saves `run` as JSON at `path`.
pub fn save(run: &RunResult, path: &Path) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(run).map_err(|e| Error::BadResults {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    write_atomic(path, &text)
}

/// Writes `text` to `path` (its directory created if missing) through a
/// temporary renamed when complete ([`strata_store::output::write_atomically`]).
///
/// # Errors
/// [`Error::Io`] when the directory cannot be created, [`Error::Store`]
/// when the file cannot be written.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), Error> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
    }
    strata_store::output::write_atomically(path, text.as_bytes(), true, false)?;
    Ok(())
}
