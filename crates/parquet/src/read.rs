//! The checked way to decode a local Parquet file synchronously (the
//! merge and compaction read their inputs this way; `strata-scan` reads
//! through the same checks asynchronously): the footer is decoded under
//! [`crate::guard`] and checked by [`validate::parquet_footer`] before any
//! page is read, and every batch is decoded under the guard and checked by
//! [`validate::batch`].

use std::fs::File;

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};

use crate::{
    guard::{self, DecoderPanic},
    validate::{self, Malformed},
};

/// Why a Parquet file could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// parquet's reader reported an error.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// The file breaks the format's rules.
    #[error(transparent)]
    Malformed(#[from] Malformed),
    /// The decoder panicked on malformed data.
    #[error(transparent)]
    Panic(#[from] DecoderPanic),
    /// The file's size could not be read.
    #[error("cannot stat the file: {0}")]
    Io(#[from] std::io::Error),
}

/// A reader builder for `file`, its footer decoded and checked.
///
/// # Errors
/// [`ReadError`] when the footer does not decode or breaks a rule.
pub fn open(
    file: File,
    options: ArrowReaderOptions,
) -> Result<ParquetRecordBatchReaderBuilder<File>, ReadError> {
    let len = file.metadata()?.len();
    if let Some(footer) = footer_bytes(&file, len)? {
        validate::parquet_footer_bytes(&footer)?;
    }
    let builder =
        guard::catch(|| ParquetRecordBatchReaderBuilder::try_new_with_options(file, options))??;
    validate::parquet_footer(builder.metadata(), len)?;
    validate::schema_depth(builder.schema())?;
    Ok(builder)
}

/// A reader builder for a whole file in memory, its footer decoded and
/// checked as [`open`] does.
///
/// # Errors
/// As [`open`].
pub fn open_bytes(
    bytes: bytes::Bytes,
    options: ArrowReaderOptions,
) -> Result<ParquetRecordBatchReaderBuilder<bytes::Bytes>, ReadError> {
    let len = bytes.len() as u64;
    if len >= 12 {
        let end = &bytes[bytes.len() - 8..];
        let n = u64::from(u32::from_le_bytes([end[0], end[1], end[2], end[3]]));
        if n + 8 <= len {
            let start = (len - 8 - n) as usize;
            validate::parquet_footer_bytes(&bytes[start..bytes.len() - 8])?;
        }
    }
    let builder =
        guard::catch(|| ParquetRecordBatchReaderBuilder::try_new_with_options(bytes, options))??;
    validate::parquet_footer(builder.metadata(), len)?;
    validate::schema_depth(builder.schema())?;
    Ok(builder)
}

/// The footer's bytes, when the file's last 8 bytes give a length that
/// fits (otherwise parquet's reader reports the problem).
fn footer_bytes(file: &File, len: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::{Read, Seek, SeekFrom};
    if len < 12 {
        return Ok(None);
    }
    let mut f = file;
    let mut end = [0u8; 8];
    f.seek(SeekFrom::Start(len - 8))?;
    f.read_exact(&mut end)?;
    let n = u64::from(u32::from_le_bytes([end[0], end[1], end[2], end[3]]));
    if n + 8 > len {
        return Ok(None);
    }
    let mut footer = vec![0; n as usize];
    f.seek(SeekFrom::Start(len - 8 - n))?;
    f.read_exact(&mut footer)?;
    f.seek(SeekFrom::Start(0))?;
    Ok(Some(footer))
}

/// Builds the reader of `builder` under the guard.
///
/// # Errors
/// As [`open`].
pub fn build<T: parquet::file::reader::ChunkReader + 'static>(
    builder: ParquetRecordBatchReaderBuilder<T>,
) -> Result<ParquetRecordBatchReader, ReadError> {
    Ok(guard::catch(|| builder.build())??)
}

/// The next batch of `reader`, decoded under the guard and checked.
///
/// # Errors
/// As [`open`], for the pages of the batch.
pub fn next_batch(reader: &mut ParquetRecordBatchReader) -> Result<Option<RecordBatch>, ReadError> {
    // The check runs under the guard too: Arrow's validation itself can
    // panic on malformed buffers.
    guard::catch(|| match reader.next() {
        None => Ok(None),
        Some(b) => {
            let b = b.map_err(parquet::errors::ParquetError::from)?;
            validate::batch(&b)?;
            Ok(Some(b))
        }
    })?
}
