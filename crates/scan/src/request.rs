//! What a scan asks for ([`ScanRequest`]), how much of a file the first
//! read fetches, and the helpers both readers share: column names to
//! indices, and decoder panics turned into errors.

use arrow_array::RecordBatch;
use futures::{StreamExt, stream::BoxStream};
use strata_parquet::guard;

use crate::{Error, filter::Filter};

/// [`Error::UnknownColumn`] for `name`, listing `schema`'s columns.
pub(crate) fn unknown_column(schema: &arrow_schema::Schema, name: &str) -> Error {
    Error::UnknownColumn {
        name: name.to_string(),
        available: schema.fields().iter().map(|f| f.name().clone()).collect(),
    }
}

/// Top-level column names to indices, in the given order (`None`: all).
///
/// # Errors
///
/// [`Error::UnknownColumn`] for a name the schema lacks,
/// [`Error::InvalidConfig`] for a name given twice.
pub(crate) fn resolve_columns(
    schema: &arrow_schema::Schema,
    columns: Option<&[String]>,
) -> Result<Vec<usize>, Error> {
    let Some(names) = columns else {
        return Ok((0..schema.fields().len()).collect());
    };
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let i = schema
            .index_of(name)
            .map_err(|_| unknown_column(schema, name))?;
        if out.contains(&i) {
            return Err(Error::InvalidConfig(format!(
                "column '{name}' is asked for more than once"
            )));
        }
        out.push(i);
    }
    Ok(out)
}

fn decoder_failed(name: &str, panic: guard::DecoderPanic) -> Error {
    Error::Corrupt(format!("{name}: {panic}"))
}

/// Runs `fut`; a panic inside it (a third-party decoder meeting malformed
/// data it does not check) becomes [`Error::Corrupt`], and prints nothing
/// ([`strata_parquet::guard`]).
pub(crate) async fn guarded<T>(
    name: &str,
    fut: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match guard::catch_future(fut).await {
        Ok(r) => r,
        Err(p) => Err(decoder_failed(name, p)),
    }
}

/// [`guarded`] for a stream: a panic while polling ends the stream with
/// [`Error::Corrupt`].
pub(crate) fn guarded_stream(
    name: String,
    s: BoxStream<'static, Result<RecordBatch, Error>>,
) -> BoxStream<'static, Result<RecordBatch, Error>> {
    guard::catch_stream(s)
        .map(move |r| r.unwrap_or_else(|p| Err(decoder_failed(&name, p))))
        .boxed()
}

/// What a scan returns.
#[derive(Debug, Clone, Default)]
pub struct ScanRequest {
    /// Top-level columns to return, in this order; `None` for all.
    pub columns: Option<Vec<String>>,
    /// Rows to keep; the columns it reads need not be in `columns`.
    pub filter: Option<Filter>,
    /// The most rows to return.
    pub limit: Option<usize>,
}

/// How many bytes of the end of a file the first request reads: enough
/// for the footer of most files, so opening costs one request.
pub const TAIL_PREFETCH: u64 = 64 * 1024;

/// Files up to this size are read whole by the first request: one request
/// beats the two or three round trips of a projected read.
pub const SMALL_FILE: u64 = 1024 * 1024;

/// How many bytes the first request of a file of `size` bytes reads.
pub fn first_read_len(size: u64) -> u64 {
    if size <= SMALL_FILE {
        size
    } else {
        TAIL_PREFETCH
    }
}
