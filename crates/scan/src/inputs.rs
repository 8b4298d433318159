//! One scan over several files: a directory, a glob of files or an S3
//! prefix, read as one input.
//!
//! [`expand`] turns each location into its data files: a file as it is; a
//! directory (local, or an `s3://bucket/prefix/` ending in `/`) as the
//! `.parquet`, `.arrow`, `.ipc` and `.feather` files directly in it; a
//! last path component with `*` or `?` as the data files it matches.
//! Hidden files (`.name`) and files whose name starts with `_` (such as
//! `_strata_manifest.json`, or unfinished outputs) are skipped. Files are
//! ordered by name, with runs of digits compared as numbers (`f_2` before
//! `f_10`), so the order is the same on every run and store.
//!
//! [`MultiScanner`] opens every file (each a [`Scanner`]), requires them
//! all to have the first one's columns, and scans them in that order:
//! filters and projections per file, the limit over all of them, and
//! row numbers of [`MultiScanner::take`] counted across the files.

use std::sync::Arc;
use strata_store::FromStore as _;

use arrow_array::{RecordBatch, UInt32Array};
use arrow_schema::SchemaRef;
use strata_store::{
    location::{Kind, StoreConfig, parse_dir},
    source::IoSnapshot,
};

use crate::{Error, ScanRequest, ScanStats, Scanner};

/// Extensions of the data files a directory or glob gives.
const DATA_EXTENSIONS: [&str; 4] = ["parquet", "arrow", "ipc", "feather"];

/// Whether `name` (a file name) is a data file a directory listing keeps.
fn is_data_file(name: &str) -> bool {
    !name.starts_with('.')
        && !name.starts_with('_')
        && name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| DATA_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext)))
}

/// Whether `name` matches `pattern`: `*` any run of characters, `?` one.
fn matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The last `*` seen, and where in `name` it was tried up to.
    let (mut pi, mut ni, mut star) = (0, 0, None);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// The order of file names: text runs byte-wise, digit runs as numbers.
fn natural_key(name: &str) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = Vec::new();
    for c in name.chars() {
        let digit = c.is_ascii_digit();
        match out.last_mut() {
            Some((d, run)) if *d == digit => run.push(c),
            _ => out.push((digit, c.to_string())),
        }
    }
    // Digit runs compare by length first (no leading zeros), then digits.
    out.into_iter()
        .map(|(digit, run)| {
            if digit {
                let trimmed = run.trim_start_matches('0');
                (true, format!("{:0>40}", trimmed))
            } else {
                (false, run)
            }
        })
        .collect()
}

fn sort_names(names: &mut [String]) {
    names.sort_by(|a, b| natural_order(a, b));
}

/// The order scans read file names in: text runs byte-wise, digit runs as
/// numbers (`f_2` before `f_10`), then byte-wise.
pub fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    natural_key(a).cmp(&natural_key(b)).then_with(|| a.cmp(b))
}

/// The data files `location` stands for, in scan order (see the module
/// documentation); a single file is returned as given.
///
/// # Errors
///
/// [`Error::InvalidConfig`] for a wildcard outside the last component, a
/// directory, glob or prefix with no data file, and a bad location;
/// [`Error::Store`] when a listing fails.
pub async fn expand(location: &str, cfg: &StoreConfig) -> Result<Vec<String>, Error> {
    // Parsed as a directory: `s3://bucket/` names the whole bucket.
    let loc = parse_dir(location, cfg)?;
    match (&loc.kind, &loc.file) {
        (Kind::Local, Some(path)) => expand_local(location, path),
        _ => expand_remote(location, cfg).await,
    }
}

fn expand_local(location: &str, path: &std::path::Path) -> Result<Vec<String>, Error> {
    if path.is_file() {
        return Ok(vec![location.to_string()]);
    }
    let (dir, pattern) = if path.is_dir() {
        (path.to_path_buf(), None)
    } else {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        if has_wildcard(&dir.to_string_lossy()) {
            return Err(wildcard_in_dir(location));
        }
        if !has_wildcard(&name) {
            // Missing: opening it says so.
            return Ok(vec![location.to_string()]);
        }
        (dir.to_path_buf(), Some(name))
    };
    let entries = std::fs::read_dir(&dir).map_err(|e| Error::io("list", &dir, e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("list", &dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let keep = is_data_file(&name) && pattern.as_ref().is_none_or(|p| matches(p, &name));
        if keep && entry.path().is_file() {
            names.push(name);
        }
    }
    sort_names(&mut names);
    if names.is_empty() {
        return Err(no_data_files(location));
    }
    Ok(names
        .into_iter()
        .map(|n| dir.join(n).display().to_string())
        .collect())
}

async fn expand_remote(location: &str, cfg: &StoreConfig) -> Result<Vec<String>, Error> {
    // `scheme://bucket/prefix/` or `.../PATTERN`: the part after the last
    // `/` is the pattern (empty for every data file).
    let (base, last) = location.rsplit_once('/').unwrap_or(("", location));
    if !location.ends_with('/') && !has_wildcard(last) {
        return Ok(vec![location.to_string()]);
    }
    if has_wildcard(base) {
        return Err(wildcard_in_dir(location));
    }
    // The listing's prefix: the directory (`s3://bucket` is the whole
    // bucket).
    let dir = parse_dir(base, cfg)?;
    let listed: Vec<object_store::ObjectMeta> = dir
        .store
        .list_with_delimiter(Some(&dir.path))
        .await
        .map_err(|e| {
            Error::Store(strata_store::Error::ObjectStore {
                location: location.to_string(),
                source: e,
            })
        })?
        .objects;
    let mut names: Vec<String> = listed
        .iter()
        .filter_map(|o| o.location.filename().map(str::to_string))
        .filter(|n| is_data_file(n) && (last.is_empty() || matches(last, n)))
        .collect();
    sort_names(&mut names);
    if names.is_empty() {
        return Err(no_data_files(location));
    }
    Ok(names.into_iter().map(|n| format!("{base}/{n}")).collect())
}

fn wildcard_in_dir(location: &str) -> Error {
    Error::InvalidConfig(format!(
        "{location}: wildcards (* and ?) are read in the file name only, not in directories"
    ))
}

fn no_data_files(location: &str) -> Error {
    Error::InvalidConfig(format!(
        "{location} matches no data file (.parquet, .arrow, .ipc or .feather; hidden and \
         _-prefixed files are skipped)"
    ))
}

/// A blocking scan over several files as one input (see the module
/// documentation).
#[derive(Debug)]
pub struct MultiScanner {
    parts: Vec<(String, Scanner)>,
}

impl MultiScanner {
    /// Opens the data files of `locations`, each expanded by [`expand`], in
    /// that order.
    ///
    /// # Errors
    ///
    /// As [`expand`] and [`Scanner::open_location`]; [`Error::InvalidConfig`]
    /// when no location is given or a file's columns differ from the first
    /// file's.
    pub fn open_locations(locations: &[String], cfg: &StoreConfig) -> Result<Self, Error> {
        let (rt, _) = crate::runtime()?;
        let mut files = Vec::new();
        for l in locations {
            files.extend(rt.block_on(expand(l, cfg))?);
        }
        if files.is_empty() {
            return Err(Error::InvalidConfig("no input to scan".into()));
        }
        let mut parts: Vec<(String, Scanner)> = Vec::with_capacity(files.len());
        for f in files {
            let s = Scanner::open_location(&f, cfg)?;
            if let Some((first, s0)) = parts.first() {
                let (want, got) = (s0.file().schema(), s.file().schema());
                if want.fields() != got.fields() {
                    return Err(Error::InvalidConfig(format!(
                        "{f} does not have the columns of {first}, so they cannot be scanned as \
                         one input: {} against {}",
                        describe(&got),
                        describe(&want)
                    )));
                }
            }
            parts.push((f, s));
        }
        Ok(MultiScanner { parts })
    }

    /// The files, in scan order.
    pub fn files(&self) -> Vec<&str> {
        self.parts.iter().map(|(f, _)| f.as_str()).collect()
    }

    /// The schema of the batches a scan of `columns` returns.
    ///
    /// # Errors
    ///
    /// An unknown or repeated column.
    pub fn projected_schema(&self, columns: Option<&[String]>) -> Result<SchemaRef, Error> {
        self.parts[0].1.file().projected_schema(columns)
    }

    /// Calls `each` with every batch of the scan, file after file.
    ///
    /// # Errors
    ///
    /// The first error of the scan or of `each`.
    pub fn scan(
        &mut self,
        req: &ScanRequest,
        mut each: impl FnMut(&RecordBatch) -> Result<(), Error>,
    ) -> Result<(), Error> {
        // Every file checks the request before any row is handed on.
        for (_, s) in &self.parts {
            s.file().projected_schema(req.columns.as_deref())?;
            if let Some(f) = &req.filter {
                f.check(&s.file().schema())?;
            }
        }
        let mut left = req.limit;
        for (_, s) in &mut self.parts {
            if left == Some(0) {
                break;
            }
            let part = ScanRequest {
                limit: left,
                ..req.clone()
            };
            s.scan(&part, |b| {
                if let Some(l) = &mut left {
                    *l -= b.num_rows().min(*l);
                }
                each(b)
            })?;
        }
        Ok(())
    }

    /// Rows `rows` (numbered across the files, in scan order) of
    /// `columns`, in the given order.
    ///
    /// # Errors
    ///
    /// A row past the last file's end, an unknown column, or a read error.
    pub fn take(&mut self, rows: &[u64], columns: Option<&[String]>) -> Result<RecordBatch, Error> {
        if let [(_, s)] = &mut self.parts[..] {
            return s.take(rows, columns);
        }
        let counts: Vec<u64> = self
            .parts
            .iter()
            .map(|(_, s)| s.num_rows())
            .collect::<Result<_, _>>()?;
        let total: u64 = counts.iter().sum();
        if let Some(bad) = rows.iter().find(|&&r| r >= total) {
            return Err(Error::InvalidConfig(format!(
                "row {bad} is out of range: the {} files hold {total} rows",
                self.parts.len()
            )));
        }
        // Each file's rows in the order asked, then back to that order.
        let mut starts = Vec::with_capacity(counts.len());
        let mut at = 0;
        for c in &counts {
            starts.push(at);
            at += c;
        }
        // Each row's file found once: (position asked, row in its file).
        let mut per_file: Vec<Vec<(usize, u64)>> = vec![Vec::new(); starts.len()];
        for (k, &r) in rows.iter().enumerate() {
            let i = starts.partition_point(|&s| s <= r) - 1;
            per_file[i].push((k, r - starts[i]));
        }
        let mut batches = Vec::new();
        let mut position = vec![0u32; rows.len()];
        let mut taken = 0u32;
        for ((_, s), mine) in self.parts.iter_mut().zip(&per_file) {
            if mine.is_empty() {
                continue;
            }
            let local: Vec<u64> = mine.iter().map(|&(_, r)| r).collect();
            batches.push(s.take(&local, columns)?);
            for (n, &(k, _)) in mine.iter().enumerate() {
                position[k] = taken + n as u32;
            }
            taken += mine.len() as u32;
        }
        let schema = self.projected_schema(columns)?;
        let all = arrow_select::concat::concat_batches(&schema, &batches)?;
        Ok(arrow_select::take::take_record_batch(
            &all,
            &UInt32Array::from(position),
        )?)
    }

    /// The cost so far, over all the files.
    pub fn stats(&self) -> ScanStats {
        let mut out = ScanStats::default();
        for (_, s) in &self.parts {
            let one = s.stats();
            out.io = add(out.io, one.io);
            out.bytes_decoded += one.bytes_decoded;
            out.rows += one.rows;
            out.elapsed_s = out.elapsed_s.max(one.elapsed_s);
        }
        out
    }
}

fn add(a: IoSnapshot, b: IoSnapshot) -> IoSnapshot {
    IoSnapshot {
        requests: a.requests + b.requests,
        bytes_fetched: a.bytes_fetched + b.bytes_fetched,
        retries: a.retries + b.retries,
        request_time: a.request_time + b.request_time,
    }
}

/// `name: type` of every column, for messages.
fn describe(schema: &Arc<arrow_schema::Schema>) -> String {
    let cols: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect();
    format!("({})", cols.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_names() {
        for (p, n, want) in [
            ("*.parquet", "a.parquet", true),
            ("*.parquet", "a.arrow", false),
            ("part-?.parquet", "part-1.parquet", true),
            ("part-?.parquet", "part-10.parquet", false),
            ("*-*.parquet", "a-b-c.parquet", true),
            ("*", "", true),
            ("a*b", "ab", true),
            ("a*b", "acbd", false),
        ] {
            assert_eq!(matches(p, n), want, "{p} {n}");
        }
    }

    #[test]
    fn data_files_and_their_order() {
        for (n, want) in [
            ("a.parquet", true),
            ("a.PARQUET", true),
            ("b.feather", true),
            ("_strata_manifest.json", false),
            ("_part.parquet", false),
            (".hidden.parquet", false),
            ("a.parquet.tmp", false),
            ("notes.txt", false),
            ("noext", false),
        ] {
            assert_eq!(is_data_file(n), want, "{n}");
        }
        let mut names: Vec<String> = ["f_10.parquet", "f_2.parquet", "f_1.parquet", "e.parquet"]
            .map(String::from)
            .to_vec();
        sort_names(&mut names);
        assert_eq!(
            names,
            ["e.parquet", "f_1.parquet", "f_2.parquet", "f_10.parquet"]
        );
    }
}
