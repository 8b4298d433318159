//! Projected Parquet reads.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use futures::stream::BoxStream;

use super::ScanRequest;
use crate::{Error, store::Source};

/// A Parquet file opened for projected reads.
#[derive(Debug, Clone)]
pub struct ParquetFile {
    source: Source,
}

impl ParquetFile {
    /// Opens a file.
    ///
    /// # Errors
    ///
    /// Always, yet.
    pub async fn open(source: Source, _tail: Option<Bytes>) -> Result<Self, Error> {
        Err(Error::InvalidConfig(format!("{}: parquet", source.name())))
    }

    /// The schema.
    pub fn schema(&self) -> SchemaRef {
        unimplemented!()
    }

    /// The source.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Streams batches.
    ///
    /// # Errors
    ///
    /// Always, yet.
    pub fn stream(
        &self,
        _req: &ScanRequest,
    ) -> Result<BoxStream<'static, Result<RecordBatch, Error>>, Error> {
        Err(Error::InvalidConfig("parquet".into()))
    }

    /// Picks rows.
    ///
    /// # Errors
    ///
    /// Always, yet.
    pub async fn take(
        &self,
        _rows: &[u64],
        _cols: Option<&[String]>,
    ) -> Result<RecordBatch, Error> {
        Err(Error::InvalidConfig("parquet".into()))
    }
}
