//! Arrow IPC files written by strata: standard files (pyarrow and arrow-rs
//! read them unchanged) whose footer also records each batch's row count.
//!
//! The footer's custom metadata holds [`BATCH_ROWS_KEY`]: the row counts
//! of the record batches, in file order, as decimal numbers joined by
//! commas. With it, a reader finds the batch holding a row, or how many
//! batches a limit needs, from the footer alone; without it (files from
//! other writers) it reads every batch header first.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_schema::Schema;

use crate::Error;

/// The footer metadata key holding per-batch row counts.
pub const BATCH_ROWS_KEY: &str = "strata.batch_rows";

/// An Arrow IPC file writer that records per-batch row counts in the
/// footer.
pub struct IpcFileWriter<W: Write> {
    inner: FileWriter<W>,
    rows: Vec<usize>,
}

impl<W: Write> IpcFileWriter<W> {
    /// Starts a file of `schema` on `out`.
    ///
    /// # Errors
    ///
    /// [`Error::Arrow`] when the header cannot be written.
    pub fn try_new(out: W, schema: &Schema, options: IpcWriteOptions) -> Result<Self, Error> {
        Ok(IpcFileWriter {
            inner: FileWriter::try_new_with_options(out, schema, options)?,
            rows: Vec::new(),
        })
    }

    /// Appends one record batch.
    ///
    /// # Errors
    ///
    /// [`Error::Arrow`] when the batch does not match the schema or the
    /// write fails.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        self.inner.write(batch)?;
        self.rows.push(batch.num_rows());
        Ok(())
    }

    /// Writes the footer (with the row counts) and returns the output.
    ///
    /// # Errors
    ///
    /// [`Error::Arrow`] when the footer cannot be written.
    pub fn finish(mut self) -> Result<W, Error> {
        let counts: Vec<String> = self.rows.iter().map(|n| n.to_string()).collect();
        self.inner.write_metadata(BATCH_ROWS_KEY, counts.join(","));
        self.inner.finish()?;
        Ok(self.inner.into_inner()?)
    }
}

/// Parses a [`BATCH_ROWS_KEY`] value for a file of `batches` batches;
/// `None` when it is malformed or has the wrong count (the reader then
/// reads batch headers instead).
pub fn parse_batch_rows(value: &str, batches: usize) -> Option<Vec<u64>> {
    if batches == 0 {
        return value.is_empty().then(Vec::new);
    }
    let rows: Option<Vec<u64>> = value.split(',').map(|s| s.parse().ok()).collect();
    rows.filter(|r| r.len() == batches)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int32Array};
    use arrow_ipc::reader::FileReader;

    use super::*;

    #[test]
    fn footer_records_row_counts_and_stays_readable() {
        let col: ArrayRef = Arc::new(Int32Array::from_iter_values(0..10));
        let batch = RecordBatch::try_from_iter([("a", col)]).unwrap();
        let mut w = IpcFileWriter::try_new(Vec::new(), &batch.schema(), IpcWriteOptions::default())
            .unwrap();
        w.write(&batch).unwrap();
        w.write(&batch.slice(2, 3)).unwrap();
        w.write(&batch.slice(0, 0)).unwrap();
        let bytes = w.finish().unwrap();
        let r = FileReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
        assert_eq!(r.custom_metadata()[BATCH_ROWS_KEY], "10,3,0");
        let rows: usize = r.map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(rows, 13);
    }

    #[test]
    fn malformed_row_counts_are_ignored() {
        assert_eq!(parse_batch_rows("1,2,3", 3), Some(vec![1, 2, 3]));
        assert_eq!(parse_batch_rows("", 0), Some(vec![]));
        assert_eq!(parse_batch_rows("1,2", 3), None);
        assert_eq!(parse_batch_rows("1,x,3", 3), None);
        assert_eq!(parse_batch_rows("-1,2,3", 3), None);
        assert_eq!(parse_batch_rows("", 1), None);
    }
}
