//! Reading written files back, and order-free fingerprints of their rows.
//!
//! Used by tests and by anyone who wants to check that two runs produced
//! the same data: [`rows_as_text`] renders every row canonically (nested
//! values included) and [`multiset_hash`] hashes the sorted rendering, so
//! it is equal exactly when the row multisets are (up to hash collisions).

use std::{fs::File, path::Path};

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::Result;

/// Reads every batch of a Parquet or Arrow IPC file, its format found from
/// its magic bytes ([`strata_parquet::Format::detect`]).
///
/// # Errors
/// IO errors and decoding errors of either format.
pub fn read_batches(path: &Path) -> Result<Vec<RecordBatch>> {
    let format = strata_parquet::Format::detect(path)?;
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if format == strata_parquet::Format::Parquet {
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)?
            .with_batch_size(65536)
            .build()?;
        Ok(reader.collect::<std::result::Result<Vec<_>, _>>()?)
    } else {
        let reader = arrow_ipc::reader::FileReader::try_new(file, None)?;
        Ok(reader.collect::<std::result::Result<Vec<_>, _>>()?)
    }
}

/// One line of text per row: `col=value` pairs joined by `|`, nulls as
/// `NULL`, lists and structs in Arrow's display form.
///
/// # Errors
/// Arrow errors for types that cannot be displayed.
pub fn rows_as_text(batches: &[RecordBatch]) -> Result<Vec<String>> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in batches {
        let schema = batch.schema();
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for r in 0..batch.num_rows() {
            let mut line = String::new();
            for (i, f) in formatters.iter().enumerate() {
                if i > 0 {
                    line.push('|');
                }
                line.push_str(schema.field(i).name());
                line.push('=');
                line.push_str(&f.value(r).to_string());
            }
            rows.push(line);
        }
    }
    Ok(rows)
}

/// FNV-1a over the sorted rows: a fingerprint of the row multiset that
/// does not depend on row order, file boundaries or batch sizes.
pub fn multiset_hash(rows: &mut [String]) -> u64 {
    rows.sort_unstable();
    sequence_hash(rows)
}

/// FNV-1a over the rows in their order.
pub fn sequence_hash(rows: &[String]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for row in rows {
        for &b in row.as_bytes().iter().chain(b"\n") {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
    }
    h
}
