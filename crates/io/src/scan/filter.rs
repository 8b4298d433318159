//! Row filters of the form `column OP literal`.

use arrow_array::RecordBatch;
use arrow_schema::Schema;

use crate::Error;

/// A row filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// The column compared.
    pub column: String,
}

impl Filter {
    /// Checks the filter against a schema.
    ///
    /// # Errors
    ///
    /// Never, yet.
    pub fn check(&self, _schema: &Schema) -> Result<(), Error> {
        Ok(())
    }

    /// Keeps the matching rows.
    ///
    /// # Errors
    ///
    /// Never, yet.
    pub fn apply(&self, batch: &RecordBatch) -> Result<RecordBatch, Error> {
        Ok(batch.clone())
    }
}
