//! The interface every generator offers: rows by global row range, as Arrow batches.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::Error;

/// Produces the rows of a dataset as Arrow batches, by global row range.
pub trait BatchGenerator: Send + Sync {
    /// Per-producer reusable state (buffers handed back by
    /// [`BatchGenerator::recycle`]).
    type Scratch: Default + Send;

    /// The preset or spec name, used in file names and summaries.
    fn name(&self) -> &str;

    /// The schema of every batch.
    fn schema(&self) -> SchemaRef;

    /// The rows `first_row .. first_row + len` (for a child table of a
    /// dataset, the children of those rows of its root ancestor, however
    /// many there are).
    ///
    /// # Errors
    /// [`Error::BatchTooLarge`] when a column would overflow Arrow's 32-bit
    /// offsets; [`Error::Field`] when a field's values cannot be made (an
    /// expression that overflows, a sequence that would wrap), naming the
    /// spec line, table and field; [`Error::Arrow`] if the arrays fail
    /// validation.
    fn generate(
        &self,
        first_row: u64,
        len: usize,
        scratch: &mut Self::Scratch,
    ) -> Result<RecordBatch, Error>;

    /// Hands a consumed batch back so its buffers can be reused. Buffers
    /// still shared elsewhere are simply dropped.
    fn recycle(&self, batch: RecordBatch, scratch: &mut Self::Scratch) {
        let _ = (batch, scratch);
    }

    /// Parquet leaf paths whose values are (nearly) all distinct, where a
    /// dictionary encoding would only be built and thrown away.
    fn dictionary_unfriendly_leaves(&self) -> Vec<Vec<String>> {
        Vec::new()
    }

    /// Parquet leaf paths of integers drawn in order (sequences), which
    /// `DELTA_BINARY_PACKED` stores in a few bits per value.
    fn delta_leaves(&self) -> Vec<Vec<String>> {
        Vec::new()
    }

    /// Parquet leaf paths and the settings the spec gives them
    /// (`parquet = { ... }`), which win over the hints above.
    fn parquet_columns(&self) -> Vec<(Vec<String>, crate::model::ParquetColumn)> {
        Vec::new()
    }
}
