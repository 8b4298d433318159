//! Projected reads of Arrow IPC and Parquet files from local disk or object
//! stores: only the requested columns' bytes are fetched.
//!
//! # Data flow
//!
//! [`Source`] tail read -> format from the magic bytes -> the format's
//! metadata (IPC footer and batch headers, or the Parquet footer) -> byte
//! ranges of the projected columns -> [`Source::fetch`] (coalesced,
//! parallel, counted) -> decoded batches of the projected schema ->
//! optional row filter and limit.
//!
//! # Guarantee
//!
//! A scan returns exactly what a full read followed by the projection,
//! filter and limit returns, and fetches only the projected columns' bytes
//! (plus metadata and small coalescing holes; files up to [`SMALL_FILE`]
//! are read whole, in one request). Malformed files give an
//! error, never a panic.

mod error;
pub mod filter;
pub mod inputs;
pub mod ipc;
mod layout;
pub mod parquet;
mod request;
pub mod write;

pub use error::Error;
pub use filter::Filter;
pub use inputs::MultiScanner;

pub use request::{SMALL_FILE, ScanRequest, TAIL_PREFETCH, first_read_len};

use std::time::Instant;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::{StreamExt, stream::BoxStream};

use strata_parquet::Format;
use strata_store::source::{IoSnapshot, Source};

/// A file opened for scanning, of either format.
#[derive(Debug, Clone)]
pub enum ScanFile {
    /// An Arrow IPC file.
    Ipc(ipc::IpcFile),
    /// A Parquet file.
    Parquet(Box<parquet::ParquetFile>),
}

impl ScanFile {
    /// Opens `source`: one tail read, the format from its magic bytes.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when the file is neither format or its footer is
    /// invalid; [`Error::Store`] when reading fails.
    pub async fn open(source: Source) -> Result<Self, Error> {
        let tail = source.tail(first_read_len(source.size())).await?;
        match Format::from_tail(&tail) {
            Some(Format::Ipc) => Ok(ScanFile::Ipc(ipc::IpcFile::open(source, Some(tail)).await?)),
            Some(Format::Parquet) => Ok(ScanFile::Parquet(Box::new(
                parquet::ParquetFile::open(source, Some(tail)).await?,
            ))),
            None => Err(Error::Corrupt(format!(
                "{} is not an Arrow IPC file or a Parquet file (no ARROW1 or PAR1 magic at its end)",
                source.name()
            ))),
        }
    }

    /// The file's schema.
    pub fn schema(&self) -> SchemaRef {
        match self {
            ScanFile::Ipc(f) => f.schema(),
            ScanFile::Parquet(f) => f.schema(),
        }
    }

    /// The source read from.
    pub fn source(&self) -> &Source {
        match self {
            ScanFile::Ipc(f) => f.source(),
            ScanFile::Parquet(f) => f.source(),
        }
    }

    /// The schema of the batches a scan of `columns` returns.
    ///
    /// # Errors
    ///
    /// An unknown or repeated column.
    pub fn projected_schema(&self, columns: Option<&[String]>) -> Result<SchemaRef, Error> {
        match self {
            ScanFile::Ipc(f) => Ok(std::sync::Arc::new(
                f.schema().project(&f.resolve(columns)?)?,
            )),
            ScanFile::Parquet(f) => f.projected_schema(columns),
        }
    }

    /// Streams the batches `req` asks for.
    ///
    /// # Errors
    ///
    /// A bad request; read errors arrive in the stream.
    pub fn stream(
        &self,
        req: &ScanRequest,
    ) -> Result<BoxStream<'static, Result<RecordBatch, Error>>, Error> {
        match self {
            ScanFile::Ipc(f) => f.stream(req),
            ScanFile::Parquet(f) => f.stream(req),
        }
    }

    /// Rows `rows` (in that order) of `columns`.
    ///
    /// # Errors
    ///
    /// A row past the end, an unknown column, or a read error.
    pub async fn take(
        &self,
        rows: &[u64],
        columns: Option<&[String]>,
    ) -> Result<RecordBatch, Error> {
        match self {
            ScanFile::Ipc(f) => f.take(rows, columns).await,
            ScanFile::Parquet(f) => f.take(rows, columns).await,
        }
    }
}

/// What a scan cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScanStats {
    /// Requests and bytes fetched (the open included).
    pub io: IoSnapshot,
    /// Bytes of the arrays returned (the sliced extent of their buffers).
    pub bytes_decoded: u64,
    /// Rows returned.
    pub rows: u64,
    /// Seconds from open to the last batch.
    pub elapsed_s: f64,
}

/// The runtime every [`Scanner`] of the process shares, with one worker per
/// core, started by the first one: a runtime per scanner cost more than a
/// short scan (new threads, cold stacks and allocator arenas).
fn runtime() -> Result<(&'static tokio::runtime::Runtime, usize), Error> {
    static RT: std::sync::OnceLock<Result<(tokio::runtime::Runtime, usize), String>> =
        std::sync::OnceLock::new();
    let started = RT.get_or_init(|| {
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .thread_name("strata-scan")
            .enable_all()
            .build()
            .map(|rt| (rt, workers))
            .map_err(|e| e.to_string())
    });
    match started {
        Ok((rt, workers)) => Ok((rt, *workers)),
        Err(e) => Err(Error::InvalidConfig(format!(
            "cannot start the IO runtime: {e}"
        ))),
    }
}

/// The largest projected row group (uncompressed bytes) that
/// [`Scanner::scan`] decodes in parallel with others. Larger ones are
/// streamed one batch at a time: holding several of them decoded costs
/// fresh memory whose page faults outweigh the second core (a full scan of
/// 50 UInt64 columns in 52 MB row groups took 58 ms in parallel against
/// 36-42 ms streamed, 2 cores).
pub const PARALLEL_ROW_GROUP_BYTES: u64 = 16 << 20;

/// The smallest projection (uncompressed bytes, all row groups together)
/// that [`Scanner::scan`] decodes in parallel; a smaller one is decoded
/// by one stream. Each row group handed to a worker costs a wake-up and
/// fresh memory faulted in by the worker's allocator arena; on 2 cores a
/// projection of 3 of 50 UInt64 columns (11.4 MiB in 4 row groups) read
/// in 1.64 ms on one stream against 1.84-1.98 ms in parallel, and of 4
/// (15.3 MiB) in 2.25-2.33 ms against 1.80-1.93 ms; with 2 columns the
/// parallel read was bimodal (0.88-2.15 ms against 1.08-1.10 ms).
pub const PARALLEL_MIN_SCAN_BYTES: u64 = 14 << 20;

/// A blocking front end over [`ScanFile`], on a runtime shared by all
/// scanners of the process (one worker per core). Its methods block, so
/// they must not be called from inside an async runtime.
///
/// A Parquet scan without a limit whose projected row groups are small
/// (see [`PARALLEL_ROW_GROUP_BYTES`]) and together large enough (see
/// [`PARALLEL_MIN_SCAN_BYTES`]) decodes up to one row group per
/// worker at once (each fetched and decoded by its own stream) and hands
/// the batches on in file order, so it holds at most that many decoded
/// row groups. Local files are memory-mapped by their [`Source`], so reading
/// them copies nothing before decoding.
#[derive(Debug)]
pub struct Scanner {
    rt: &'static tokio::runtime::Runtime,
    workers: usize,
    file: ScanFile,
    started: Instant,
    decoded: u64,
    rows: u64,
    parallel_min_bytes: u64,
}

impl Scanner {
    /// Opens `source` for blocking scans.
    ///
    /// # Errors
    ///
    /// As [`ScanFile::open`]; [`Error::InvalidConfig`] when no runtime can
    /// be started.
    pub fn open(source: Source) -> Result<Self, Error> {
        Self::start(|| async move { Ok(source) })
    }

    /// Opens a local path, `file://` URL or `s3://bucket/key` URL (see
    /// [`strata_store::location`]) for blocking scans.
    ///
    /// # Errors
    ///
    /// As [`strata_store::location::open_source`] and [`ScanFile::open`].
    pub fn open_location(
        location: &str,
        cfg: &strata_store::location::StoreConfig,
    ) -> Result<Self, Error> {
        let location = location.to_string();
        let cfg = cfg.clone();
        Self::start(
            || async move { Ok(strata_store::location::open_source(&location, &cfg).await?) },
        )
    }

    fn start<F, Fut>(source: F) -> Result<Self, Error>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Source, Error>>,
    {
        let started = Instant::now();
        let (rt, workers) = runtime()?;
        let file = rt.block_on(async move { ScanFile::open(source().await?).await })?;
        Ok(Scanner {
            rt,
            workers,
            file,
            started,
            decoded: 0,
            rows: 0,
            parallel_min_bytes: PARALLEL_MIN_SCAN_BYTES,
        })
    }

    /// Decodes row groups in parallel from projections of `bytes` on
    /// ([`PARALLEL_MIN_SCAN_BYTES`] unless set): 0 for every scan whose
    /// row groups are small, `u64::MAX` for none.
    #[must_use]
    pub fn with_parallel_min_bytes(mut self, bytes: u64) -> Self {
        self.parallel_min_bytes = bytes;
        self
    }

    /// The opened file.
    pub fn file(&self) -> &ScanFile {
        &self.file
    }

    /// Calls `each` with every batch of the scan, in order.
    ///
    /// # Errors
    ///
    /// The first error of the scan or of `each`.
    pub fn scan(
        &mut self,
        req: &ScanRequest,
        mut each: impl FnMut(&RecordBatch) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if let ScanFile::Parquet(f) = &self.file
            && req.limit.is_none()
        {
            let sizes = f.projected_row_group_bytes(req)?;
            if sizes.iter().all(|&(_, b)| b <= PARALLEL_ROW_GROUP_BYTES)
                && sizes.iter().map(|&(_, b)| b).sum::<u64>() >= self.parallel_min_bytes
            {
                let f = f.clone();
                let groups = sizes.into_iter().map(|(g, _)| g);
                return self.scan_row_groups(&f, req, groups, each);
            }
        }
        let mut stream = self.file.stream(req)?;
        while let Some(b) = self.rt.block_on(stream.next()) {
            let b = b?;
            self.count(&b);
            each(&b)?;
        }
        Ok(())
    }

    /// Calls `each` with the batches of Parquet row groups `groups` only
    /// (a sample of the file), in the given order, decoded in parallel as
    /// [`Scanner::scan`] decodes; an IPC file is scanned whole.
    ///
    /// # Errors
    ///
    /// A row group the file does not have; the first error of the scan or
    /// of `each`.
    pub fn scan_groups(
        &mut self,
        req: &ScanRequest,
        groups: &[usize],
        each: impl FnMut(&RecordBatch) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let ScanFile::Parquet(f) = &self.file else {
            return self.scan(req, each);
        };
        let have = f.metadata().num_row_groups();
        if let Some(g) = groups.iter().find(|&&g| g >= have) {
            return Err(Error::InvalidConfig(format!(
                "{}: no row group {g} (the file has {have})",
                f.source().name()
            )));
        }
        let f = f.clone();
        self.scan_row_groups(&f, req, groups.iter().copied(), each)
    }

    /// A Parquet scan of row groups `groups` (those `req` reads, in file
    /// order) decoded in parallel: a window of one task per worker, each
    /// decoding one row group; batches are handed on in file order. On an
    /// error the tasks still running are stopped.
    fn scan_row_groups(
        &mut self,
        f: &parquet::ParquetFile,
        req: &ScanRequest,
        mut groups: impl Iterator<Item = usize>,
        mut each: impl FnMut(&RecordBatch) -> Result<(), Error>,
    ) -> Result<(), Error> {
        type Task = tokio::task::JoinHandle<Result<Vec<RecordBatch>, Error>>;
        /// Stops the tasks still running when the scan ends early.
        struct Window(std::collections::VecDeque<Task>);
        impl Drop for Window {
            fn drop(&mut self) {
                for t in &self.0 {
                    t.abort();
                }
            }
        }
        let mut window = Window(std::collections::VecDeque::new());
        loop {
            while window.0.len() < self.workers {
                let Some(g) = groups.next() else { break };
                let stream = f.stream_row_groups(req, Some(vec![g]))?;
                window.0.push_back(
                    self.rt.spawn(
                        async move { stream.collect::<Vec<_>>().await.into_iter().collect() },
                    ),
                );
            }
            let Some(task) = window.0.pop_front() else {
                return Ok(());
            };
            let batches = self.rt.block_on(task).map_err(|e| {
                Error::Corrupt(format!("{}: decoding stopped: {e}", f.source().name()))
            })??;
            for b in &batches {
                self.count(b);
                each(b)?;
            }
        }
    }

    /// The rows of the file (an IPC file without row counts in its footer
    /// has its batch headers read).
    ///
    /// # Errors
    ///
    /// A read error.
    pub fn num_rows(&self) -> Result<u64, Error> {
        match &self.file {
            ScanFile::Parquet(f) => Ok(f.num_rows()),
            ScanFile::Ipc(f) => Ok(self.rt.block_on(f.row_counts())?.iter().sum()),
        }
    }

    /// Rows `rows` of `columns`, in the given order.
    ///
    /// # Errors
    ///
    /// As [`ScanFile::take`].
    pub fn take(&mut self, rows: &[u64], columns: Option<&[String]>) -> Result<RecordBatch, Error> {
        let b = self.rt.block_on(self.file.take(rows, columns))?;
        self.count(&b);
        Ok(b)
    }

    fn count(&mut self, b: &RecordBatch) {
        self.rows += b.num_rows() as u64;
        self.decoded += b
            .columns()
            .iter()
            .map(|c| c.to_data().get_slice_memory_size().unwrap_or(0) as u64)
            .sum::<u64>();
    }

    /// The cost so far.
    pub fn stats(&self) -> ScanStats {
        ScanStats {
            io: self.file.source().stats().snapshot(),
            bytes_decoded: self.decoded,
            rows: self.rows,
            elapsed_s: self.started.elapsed().as_secs_f64(),
        }
    }
}
