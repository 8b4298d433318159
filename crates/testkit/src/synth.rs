//! Synthetic datasets for tests and benchmarks: `files` Parquet files, each
//! sorted by an `Int64` key `id`, whose key ranges overlap by a chosen
//! fraction, with `contacts` columns (`name`, `phones`) or a short string
//! beside the key.
//!
//! File `f` draws its keys uniformly from `[f * step, f * step + width)`,
//! where `width = rows_per_file * files * 4` and `step = width * (1 -
//! overlap)`: overlap 0 gives disjoint consecutive ranges, 1 gives every
//! file the whole range (every file overlaps every other). The same spec
//! gives the same bytes.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::{
    arrow::ArrowWriter,
    basic::{Compression, ZstdLevel},
    file::properties::WriterProperties,
};
use strata_gen::{BatchGenerator, rng::RowRng};
use strata_store::output::PendingFile;

use crate::Result;

/// The columns beside the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// The `contacts` preset's `name` and `phones` (a list of structs).
    Contacts,
    /// One string column `v` naming the file and row.
    Text,
}

/// What [`write_dataset`] writes.
#[derive(Debug, Clone)]
pub struct SyntheticDataset {
    /// Number of files.
    pub files: usize,
    /// Rows in each file.
    pub rows_per_file: usize,
    /// How much neighbouring files' key ranges overlap, from 0 (disjoint)
    /// to 1 (every file spans the whole key range).
    pub overlap: f64,
    /// The seed of keys and payload.
    pub seed: u64,
    /// The columns beside the key.
    pub payload: Payload,
}

impl SyntheticDataset {
    /// The key range file `f` draws from.
    pub fn key_range(&self, f: usize) -> std::ops::Range<i64> {
        let width = (self.rows_per_file * self.files * 4).max(1) as u64;
        let step = (width as f64 * (1.0 - self.overlap.clamp(0.0, 1.0))) as u64;
        let start = f as u64 * step;
        start as i64..(start + width) as i64
    }

    /// The schema of every file.
    pub fn schema(&self) -> Arc<Schema> {
        let mut fields = vec![Field::new("id", DataType::Int64, false)];
        match self.payload {
            Payload::Contacts => {
                let c = strata_gen::contacts(0).schema();
                fields.extend(c.fields().iter().map(|f| f.as_ref().clone()));
            }
            Payload::Text => fields.push(Field::new("v", DataType::Utf8, true)),
        }
        Arc::new(Schema::new(fields))
    }
}

/// Writes the files `in-00.parquet`, `in-01.parquet`, ... of `spec` into
/// `dir` and returns their paths. They are written as most Parquet files
/// are, by parquet's `ArrowWriter` with its defaults and zstd level 1,
/// each through a temporary renamed when complete.
///
/// # Errors
///
/// An error naming the file when one cannot be written (one that exists
/// is not replaced).
pub fn write_dataset(dir: &Path, spec: &SyntheticDataset) -> Result<Vec<PathBuf>> {
    (0..spec.files)
        .map(|f| {
            let path = dir.join(format!("in-{f:02}.parquet"));
            write_file(&path, spec, f)?;
            Ok(path)
        })
        .collect()
}

fn write_file(path: &Path, spec: &SyntheticDataset, f: usize) -> Result<()> {
    let err = |e: strata_store::Error| format!("{}: {e}", path.display());
    let parquet = |e: parquet::errors::ParquetError| format!("{}: parquet: {e}", path.display());
    let rows = spec.rows_per_file;
    let range = spec.key_range(f);
    let mut rng = RowRng::seeded(spec.seed.wrapping_add(f as u64));
    let width = (range.end - range.start) as u64;
    let mut keys: Vec<i64> = (0..rows)
        .map(|_| range.start + rng.next_below(width) as i64)
        .collect();
    keys.sort_unstable();
    let schema = spec.schema();
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let (pending, file) = PendingFile::create(path.to_path_buf(), false).map_err(err)?;
    let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(parquet)?;
    let contacts = strata_gen::contacts(spec.seed.wrapping_add(f as u64 + 1));
    let mut scratch = Default::default();
    for start in (0..rows).step_by(8192) {
        let n = 8192.min(rows - start);
        let mut cols: Vec<ArrayRef> =
            vec![Arc::new(Int64Array::from(keys[start..start + n].to_vec()))];
        match spec.payload {
            Payload::Contacts => {
                let b = contacts
                    .generate((f * rows + start) as u64, n, &mut scratch)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                cols.extend(b.columns().iter().cloned());
            }
            Payload::Text => cols.push(Arc::new(StringArray::from_iter(
                (start..start + n).map(|i| (i % 7 != 0).then(|| format!("f{f}-r{i}"))),
            ))),
        }
        let batch = RecordBatch::try_new(schema.clone(), cols)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        w.write(&batch).map_err(parquet)?;
    }
    let file = w.into_inner().map_err(parquet)?;
    file.sync_all()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    pending.commit().map_err(err)?;
    Ok(())
}
