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

/// `YYYY-MM-DD HH:MM:SS` (UTC) of Unix seconds.
pub fn utc(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
        .map_or_else(
            || format!("{secs} s after 1970"),
            |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
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
