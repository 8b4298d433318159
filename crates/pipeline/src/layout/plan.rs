//! Seeing a layout before writing it: the files a laid-out run would
//! replace, and the partitions and files a sample of its rows promises
//! (`--dry-run`, `--max-partitions`).

use std::{collections::BTreeMap, fs, path::PathBuf};

use parquet::file::properties::WriterProperties;
use serde::Serialize;
use strata_gen::BatchGenerator;
use strata_parquet::writer::ParquetWriter;

use super::{Layout, Target, keys::Keys, write::with_layout};
use crate::Error;

/// Existing files a laid-out run of `cfg` would replace: `STEM_*.parquet`
/// in the output directory and in its partition directories (`name=value`,
/// at any depth).
pub(crate) fn conflicting_files(cfg: &Target) -> Vec<PathBuf> {
    let prefix = format!("{}_", cfg.stem);
    let ext = ".parquet";
    let mut out = Vec::new();
    let mut dirs = vec![cfg.dir.clone()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if name.starts_with('.') {
                continue;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if name.contains('=') {
                    dirs.push(path);
                }
            } else if name.starts_with(&prefix) && name.ends_with(ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A dry run's view of a layout: the partitions expected and the files
/// of each, estimated from a sample of the rows.
#[derive(Debug, Clone, Serialize)]
pub struct LayoutPlan {
    /// The layout.
    pub layout: Layout,
    /// Rows sampled.
    pub sample_rows: u64,
    /// Partitions found in the sample.
    pub sampled_partitions: u64,
    /// Partitions expected in the whole run (Chao1's estimate from the
    /// sample's partitions seen once and twice).
    pub partitions: u64,
    /// Bytes per row of the sample, encoded.
    pub bytes_per_row: f64,
    /// Bytes expected in all.
    pub bytes: u64,
    /// Files expected per partition (on average).
    pub files_per_partition: f64,
    /// The largest partitions of the sample: directory and share of rows.
    pub largest: Vec<(String, f64)>,
}

/// Samples the rows of a run of `generator` with `cfg` and `layout`: the
/// partitions found and expected, and the files of each; refuses a run
/// expected to pass `--max-partitions`.
///
/// # Errors
/// [`Error::InvalidConfig`] when the estimate passes the limit; the
/// generator's and encoder's errors.
pub fn plan_layout<G: BatchGenerator>(
    generator: &G,
    cfg: &Target,
    layout: &Layout,
    props: WriterProperties,
    encode: bool,
) -> Result<LayoutPlan, Error> {
    let schema = generator.schema();
    let keys = Keys::new(layout, &schema, cfg.field_ids.as_deref())?;
    let props = with_layout(props, layout, &keys)?;
    let rows = cfg.rows.clone();
    let total = rows.end - rows.start;
    // Sixteen stretches spread over the rows.
    let stretches = 16u64;
    let each = (total / stretches).clamp(1, 4096);
    let mut scratch = G::Scratch::default();
    let mut counts: BTreeMap<Vec<u8>, (String, u64)> = BTreeMap::new();
    // Rows asked of the generator, and the table's rows it gave (a child
    // table's batches hold more rows than the rows asked).
    let (mut asked, mut sample_rows) = (0u64, 0u64);
    let mut bytes = 0u64;
    for s in 0..stretches.min(total) {
        let start = rows.start + total * s / stretches.min(total);
        let n = each.min(rows.end - start);
        let b = generator.generate(start, n as usize, &mut scratch)?;
        asked += n;
        sample_rows += b.num_rows() as u64;
        let chunk = keys.chunk(&b, false)?;
        for p in &chunk.pieces {
            let e = counts.entry(p.key.clone()).or_insert((p.dir.clone(), 0));
            e.1 += p.rows.len() as u64;
        }
        if encode {
            let mut w =
                ParquetWriter::try_new(Vec::new(), keys.file_schema.clone(), props.clone())?;
            w.write(&chunk.batch)?;
            bytes += w.finish()?.len() as u64;
        }
    }
    let seen = counts.len() as u64;
    let f1 = counts.values().filter(|c| c.1 == 1).count() as f64;
    let f2 = counts.values().filter(|c| c.1 == 2).count() as f64;
    let chao1 = seen as f64
        + if f2 > 0.0 {
            f1 * f1 / (2.0 * f2)
        } else {
            f1 * (f1 - 1.0) / 2.0
        };
    let partitions = (chao1.round() as u64).min(total).max(seen);
    if partitions > layout.max_partitions {
        return Err(Error::InvalidConfig(format!(
            "table `{}`: partitioning by {} gives about {partitions} partitions ({seen} in a \
             sample of {sample_rows} rows), more than --max-partitions ({}); raise \
             --max-partitions or partition more coarsely",
            generator.name(),
            layout.partition_by.join(", "),
            layout.max_partitions
        )));
    }
    let bytes_per_row = bytes as f64 / sample_rows.max(1) as f64;
    let all_bytes =
        (bytes_per_row * total as f64 * sample_rows as f64 / asked.max(1) as f64) as u64;
    let per_partition = all_bytes as f64 / partitions.max(1) as f64;
    let files_per_partition = match layout.target_file_size {
        Some(t) => (per_partition / t as f64).ceil().max(1.0),
        None => 1.0,
    };
    let mut largest: Vec<(String, f64)> = counts
        .into_values()
        .map(|(d, c)| (d, c as f64 / sample_rows.max(1) as f64))
        .collect();
    largest.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    largest.truncate(5);
    Ok(LayoutPlan {
        layout: layout.clone(),
        sample_rows,
        sampled_partitions: seen,
        partitions,
        bytes_per_row,
        bytes: all_bytes,
        files_per_partition,
        largest,
    })
}
