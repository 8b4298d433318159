//! What the suites share: running a Python peer, reading its timings, and
//! checking a case read what it should.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};

use std::time::Instant;

use crate::{Body, Case, Config, Error, Sample, Unit};

/// What a peer script measured: samples per case, and the cases it could
/// not run with the reason (a peer that runs out of memory at a limit).
#[derive(Debug, Default)]
pub(crate) struct PeerReply {
    cases: BTreeMap<String, Vec<Sample>>,
    failed: BTreeMap<String, String>,
}

/// Runs a Python peer script (embedded source) with `request` as JSON on
/// stdin. The script prints `{"cases": {NAME: [{"wall": s, "cpu": s},
/// ...]}, "failed": {NAME: REASON}}` (`failed` optional), or
/// `{"unavailable": REASON}` when a module it needs is not installed. Any
/// failure becomes the reason every peer case is unavailable.
pub(crate) fn python_peer(
    cfg: &Config,
    script: &str,
    request: &serde_json::Value,
    subject: &str,
    names: &[String],
) -> Result<PeerReply, String> {
    if !cfg.peers {
        return Err("peers are off".into());
    }
    if !names.iter().any(|n| cfg.wants(n, subject)) {
        return Err("filtered out".into());
    }
    let python = cfg.python.clone().unwrap_or_else(|| "python3".into());
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let path = dir.path().join("peer.py");
    std::fs::write(&path, script).map_err(|e| format!("cannot write the peer script: {e}"))?;
    let mut child = Command::new(&python)
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let input = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&input)
            .map_err(|e| format!("cannot talk to {}: {e}", python.display()))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{} failed: {e}", python.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!("the peer script failed ({}): {last}", out.status));
    }
    #[derive(serde::Deserialize)]
    struct Reply {
        cases: Option<BTreeMap<String, Vec<Sample>>>,
        failed: Option<BTreeMap<String, String>>,
        unavailable: Option<String>,
    }
    let reply: Reply = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("the peer script printed no result ({e})"))?;
    match (reply.cases, reply.unavailable) {
        (_, Some(why)) => Err(why),
        (Some(cases), None) => Ok(PeerReply {
            cases,
            failed: reply.failed.unwrap_or_default(),
        }),
        (None, None) => Err("the peer script returned nothing".into()),
    }
}

/// The body of a peer case from a peer reply.
pub(crate) fn peer_body(reply: &Result<PeerReply, String>, name: &str) -> Body {
    match reply {
        Err(why) => Body::Unavailable(why.clone()),
        Ok(r) => match (r.cases.get(name), r.failed.get(name)) {
            (Some(s), _) => Body::Measured(s.clone()),
            (None, Some(why)) => Body::Unavailable(format!("the peer failed: {why}")),
            (None, None) => Body::Unavailable(format!("the peer did not run `{name}`")),
        },
    }
}

/// Timing parameters every peer script receives.
pub(crate) fn peer_timing(cfg: &Config) -> serde_json::Value {
    serde_json::json!({ "runs": cfg.runs, "warmup": cfg.warmup })
}

/// An error unless a read returned all `want` rows or values.
pub(crate) fn expect_count(got: usize, want: usize) -> Result<(), crate::Error> {
    if got == want {
        Ok(())
    } else {
        Err(crate::Error::Case(format!("read {got} of {want}")))
    }
}

/// How many times to repeat `f` per timed iteration so that one iteration
/// takes about `min_s` seconds.
fn repeats(f: &mut dyn FnMut() -> Result<(), Error>, min_s: f64) -> Result<usize, Error> {
    f()?;
    let t = Instant::now();
    f()?;
    let once = t.elapsed().as_secs_f64().max(1e-7);
    Ok(((min_s / once).ceil() as usize).clamp(1, 1 << 20))
}

/// A case that repeats `f` until one timed iteration takes at least
/// `min_s` seconds (calibrated once, when the case is selected): a single
/// call of a millisecond or less is mostly timer and scheduler noise.
/// Samples and counters are per call.
pub(crate) fn repeated(
    cfg: &Config,
    name: &str,
    subject: &str,
    unit: Unit,
    work: f64,
    min_s: f64,
    mut f: impl FnMut() -> Result<(), Error> + 'static,
) -> Result<Case, Error> {
    let k = if cfg.calibrate && cfg.wants(name, subject) {
        repeats(&mut f, min_s)?
    } else {
        1
    };
    let mut c = Case::new(name, subject, unit, work, move || {
        for _ in 0..k {
            f()?;
        }
        Ok(())
    });
    c.repeats = k as u64;
    Ok(c)
}

/// `rows` rows of preset `preset` (seed 42) in 4 uncompressed Parquet
/// files of 1,048,576-row row groups, in a temporary directory kept as
/// long as the returned handle; with the files' paths.
pub(crate) fn preset_files(
    preset: &str,
    rows: u64,
    threads: usize,
) -> Result<(std::sync::Arc<tempfile::TempDir>, Vec<std::path::PathBuf>), Error> {
    use strata_parquet::{Compression, Format};
    use strata_pipeline::generate::{GenerateConfig, ParquetEncoder, Part, generate};
    let dir = std::sync::Arc::new(tempfile::tempdir().map_err(crate::case_err)?);
    let gen_cfg = GenerateConfig {
        target_records: rows,
        record_batch_size: 8192,
        num_writers: 4,
        threads,
        row_group_rows: 1 << 20,
        format: Format::Parquet,
        compression: Compression::None,
        output_dir: dir.path().to_path_buf(),
        output_filename: preset.into(),
        overwrite: true,
        seed: 42,
        encoder: ParquetEncoder::Auto,
        page_checksums: true,
        part: Part::default(),
        layout: None,
        field_ids: None,
        row_offset: 0,
    };
    let g = strata_gen::preset(preset, 42);
    let summary = generate(&g, &gen_cfg, &|_| {}).map_err(crate::case_err)?;
    Ok((dir, summary.files.iter().map(|f| f.path.clone()).collect()))
}

/// DuckDB's `SUMMARIZE` of `files` (`columns` top-level columns) on
/// `threads` threads, as the case `name` (the peer of the infer and
/// dataset-report suites).
pub(crate) fn summarize_case(
    cfg: &Config,
    name: &str,
    files: &[std::path::PathBuf],
    columns: usize,
    threads: usize,
    rows: u64,
) -> Case {
    const PEER: &str = include_str!("../../python/infer_peer.py");
    let mut request = peer_timing(cfg);
    request["name"] = name.into();
    request["threads"] = threads.into();
    request["columns"] = columns.into();
    request["inputs"] = serde_json::json!(
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    );
    let names = [name.to_string()];
    let reply = python_peer(cfg, PEER, &request, "duckdb", &names);
    Case {
        name: name.to_string(),
        subject: "duckdb".into(),
        unit: Unit::Rows,
        work: rows as f64,
        repeats: 1,
        body: peer_body(&reply, name),
    }
}
