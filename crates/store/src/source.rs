//! Byte sources for projected reads: accounting, coalesced parallel
//! fetches and retries.
//!
//! A [`Source`] is one object (a local file, an in-memory buffer, an S3
//! key) behind an [`ObjectStore`]. Readers ask it for byte ranges;
//! [`Source::fetch`] plans them with [`coalesce`], issues the merged
//! ranges with a bounded number in flight, retries transient failures, and
//! hands back one zero-copy slice per requested range. Every request it
//! makes is counted in its [`IoStats`].
//!
//! Stores that simulate a network or fail on purpose, for tests, are in
//! `strata-testkit` (`stores`).

use std::{
    ops::Range,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectStore, ObjectStoreExt, memory::InMemory, path::Path};

use crate::{
    Error,
    ranges::{CoalesceOptions, ReadPlan, coalesce},
};

/// Counters of the reads a [`Source`] made (the size lookup of
/// [`Source::open`] is not one of them). Cheap to clone; clones
/// share the counters.
#[derive(Debug, Clone, Default)]
pub struct IoStats {
    inner: Arc<StatsInner>,
}

#[derive(Debug, Default)]
struct StatsInner {
    requests: AtomicU64,
    bytes: AtomicU64,
    retries: AtomicU64,
    nanos: AtomicU64,
    log: Option<Mutex<Vec<Range<u64>>>>,
}

/// A copy of [`IoStats`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoSnapshot {
    /// Successful read requests.
    pub requests: u64,
    /// Bytes those requests returned.
    pub bytes_fetched: u64,
    /// Failed requests that were tried again.
    pub retries: u64,
    /// Time spent in requests, summed over requests (overlapping requests
    /// each count in full).
    pub request_time: Duration,
}

impl IoStats {
    /// Counters that also keep every fetched range, for tests and
    /// benchmarks that check exactly what was read.
    pub fn with_log() -> Self {
        IoStats {
            inner: Arc::new(StatsInner {
                log: Some(Mutex::new(Vec::new())),
                ..Default::default()
            }),
        }
    }

    /// The counters now.
    pub fn snapshot(&self) -> IoSnapshot {
        let i = &self.inner;
        IoSnapshot {
            requests: i.requests.load(Ordering::Relaxed),
            bytes_fetched: i.bytes.load(Ordering::Relaxed),
            retries: i.retries.load(Ordering::Relaxed),
            request_time: Duration::from_nanos(i.nanos.load(Ordering::Relaxed)),
        }
    }

    /// The ranges fetched so far, in completion order (empty unless made
    /// by [`IoStats::with_log`]).
    pub fn ranges(&self) -> Vec<Range<u64>> {
        match &self.inner.log {
            Some(log) => log.lock().map(|l| l.clone()).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    fn record(&self, range: Range<u64>, elapsed: Duration) {
        let i = &self.inner;
        i.requests.fetch_add(1, Ordering::Relaxed);
        i.bytes
            .fetch_add(range.end - range.start, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        i.nanos.fetch_add(nanos, Ordering::Relaxed);
        if let Some(log) = &i.log
            && let Ok(mut l) = log.lock()
        {
            l.push(range);
        }
    }
}

/// How a [`Source`] issues requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchOptions {
    /// How ranges are merged into requests.
    pub coalesce: CoalesceOptions,
    /// The most requests in flight at once (at least 1).
    pub concurrency: usize,
    /// How many times a failed request is tried again when the failure
    /// may be transient.
    pub retries: u32,
    /// The wait before the first retry; it doubles for each further one.
    pub retry_backoff: Duration,
    /// How many bytes a reader plans and fetches together (its window):
    /// small enough locally that freed buffers are reused, large enough
    /// remotely to keep `concurrency` requests busy.
    pub read_ahead: u64,
}

impl FetchOptions {
    /// Settings for local files: 8 KiB holes, 32 MiB requests, 8 in
    /// flight, 32 MiB windows.
    pub fn local() -> Self {
        FetchOptions {
            coalesce: CoalesceOptions::default(),
            concurrency: 8,
            retries: 3,
            retry_backoff: Duration::from_millis(5),
            read_ahead: 32 << 20,
        }
    }

    /// Settings for a remote store with this time to first byte and
    /// per-request bandwidth, 32 requests in flight. With `c` requests in
    /// flight a request costs about `ttfb / c` of wall time, so a hole is
    /// read through only when it is shorter than `ttfb x bandwidth / c`
    /// (at least 8 KiB); merged requests stop at 8 MiB, where splitting
    /// across connections beats one long transfer; 256 MiB windows.
    pub fn remote(time_to_first_byte: Duration, bytes_per_second: f64) -> Self {
        let concurrency = 32;
        let per_request = CoalesceOptions::for_network(time_to_first_byte, bytes_per_second);
        let hole = (per_request.hole_size_limit / concurrency as u64).max(8 * 1024);
        FetchOptions {
            coalesce: CoalesceOptions {
                hole_size_limit: hole,
                range_size_limit: (8 << 20u64).max(hole + 1),
            },
            concurrency,
            retries: 5,
            retry_backoff: Duration::from_millis(20),
            read_ahead: 256 << 20,
        }
    }
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions::local()
    }
}

/// One object to read ranges of.
#[derive(Debug, Clone)]
pub struct Source {
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
    name: String,
    stats: IoStats,
    opts: FetchOptions,
    zero_copy: bool,
    /// A local file read directly: positioned reads on one handle, no
    /// open per request.
    file: Option<Arc<std::fs::File>>,
    /// The same file mapped into memory, when mapping succeeded: reads are
    /// zero-copy slices of it (see [`Source::open_file`]).
    map: Option<Bytes>,
    /// The object's last bytes, already read: reads inside them are
    /// served from memory (and not counted).
    tail: Bytes,
}

/// Reads up to this size run on the calling task; larger ones on the
/// blocking pool.
const INLINE_READ: u64 = 256 * 1024;

impl Source {
    /// Opens a local file for direct reads: the file is mapped into memory
    /// and every read is a zero-copy slice of the map, counted like any
    /// other (what [`Source::fetch`] plans is unchanged, so the counters
    /// show what a projected read asked for). Where mapping fails, reads
    /// are positioned reads on one handle (on the blocking pool for large
    /// ones). A mapped read copies nothing: on a 200 MB file of 50 UInt64
    /// columns, a full IPC scan went from 40 ms to 4 ms and a full Parquet
    /// scan from 62 ms to 36-42 ms (`strata bench scan`, 2 cores).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be opened.
    pub fn open_file(
        path: &std::path::Path,
        name: impl Into<String>,
        opts: FetchOptions,
    ) -> Result<Self, Error> {
        let file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
        let meta = file.metadata().map_err(|e| Error::io("stat", path, e))?;
        if meta.is_dir() {
            return Err(Error::io(
                "read",
                path,
                std::io::Error::other("it is a directory"),
            ));
        }
        let object = Path::from_absolute_path(path).unwrap_or_else(|_| Path::from("file"));
        Ok(Source {
            store: Arc::new(object_store::local::LocalFileSystem::new()),
            path: object,
            size: meta.len(),
            name: name.into(),
            stats: IoStats::default(),
            opts,
            zero_copy: false,
            map: map_file(&file, meta.len()),
            file: Some(Arc::new(file)),
            tail: Bytes::new(),
        })
    }

    async fn read_file(
        &self,
        file: &Arc<std::fs::File>,
        range: Range<u64>,
    ) -> Result<Bytes, Error> {
        let len = (range.end - range.start) as usize;
        // Allocated here, on the reader's thread, so memory freed by
        // earlier batches is reused (no fresh pages to fault in).
        let buf = Vec::with_capacity(len);
        let result = if range.end - range.start <= INLINE_READ {
            read_vec_at(file, buf, len, range.start)
        } else {
            let f = Arc::clone(file);
            let start = range.start;
            tokio::task::spawn_blocking(move || read_vec_at(&f, buf, len, start))
                .await
                .map_err(std::io::Error::other)
                .and_then(|r| r)
        };
        result
            .map(Bytes::from)
            .map_err(|e| Error::io("read", self.name.clone(), e))
    }

    /// Opens `path` in `store`, asking the store for its size.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when the object cannot be found or the store fails.
    pub async fn open(
        store: Arc<dyn ObjectStore>,
        path: Path,
        name: impl Into<String>,
        opts: FetchOptions,
    ) -> Result<Self, Error> {
        let name = name.into();
        let meta = store
            .head(&path)
            .await
            .map_err(|source| Error::ObjectStore {
                location: name.clone(),
                source,
            })?;
        Ok(Source {
            store,
            path,
            size: meta.size,
            name,
            stats: IoStats::default(),
            opts,
            zero_copy: false,
            file: None,
            map: None,
            tail: Bytes::new(),
        })
    }

    /// A source over bytes already in memory. Reads are zero-copy slices,
    /// so readers fetch whole blocks rather than planning fine ranges.
    pub fn from_bytes(bytes: Bytes) -> Self {
        let store = InMemory::new();
        let path = Path::from("memory");
        let size = bytes.len() as u64;
        // The in-memory store's put completes without awaiting anything.
        let put = futures::executor::block_on(store.put(&path, bytes.into()));
        debug_assert!(put.is_ok());
        Source {
            store: Arc::new(store),
            path,
            size,
            name: "<memory>".into(),
            stats: IoStats::default(),
            opts: FetchOptions::local(),
            zero_copy: true,
            file: None,
            map: None,
            tail: Bytes::new(),
        }
    }

    /// Reads a local file by positioned reads instead of through its map.
    /// Pages of a map stay resident (and count in the process's RSS) until
    /// the source is dropped, so a reader that streams a large file within
    /// a memory budget, such as an external sort, reads this way.
    pub fn without_map(mut self) -> Self {
        self.map = None;
        self
    }

    /// Uses `stats` for this source's counters (to share them, or to log
    /// ranges).
    pub fn with_stats(mut self, stats: IoStats) -> Self {
        self.stats = stats;
        self
    }

    /// Keeps `tail`, the object's last bytes (a caller read them already):
    /// later reads inside them are served from memory, uncounted. Ignored
    /// when longer than the object.
    pub fn with_tail(mut self, tail: Bytes) -> Self {
        if tail.len() as u64 <= self.size {
            self.tail = tail;
        }
        self
    }

    /// Where the kept tail starts (the object's size when none is kept).
    pub fn tail_start(&self) -> u64 {
        self.size - self.tail.len() as u64
    }

    /// `range` from the kept tail, when it lies inside it.
    fn cached(&self, range: &Range<u64>) -> Option<Bytes> {
        let start = self.tail_start();
        (range.start >= start && range.end <= self.size && range.start <= range.end).then(|| {
            self.tail
                .slice((range.start - start) as usize..(range.end - start) as usize)
        })
    }

    /// Replaces the fetch settings.
    pub fn with_options(mut self, opts: FetchOptions) -> Self {
        self.opts = opts;
        self
    }

    /// The object's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The name errors use (the path or URL given).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// This source's counters.
    pub fn stats(&self) -> &IoStats {
        &self.stats
    }

    /// The fetch settings.
    pub fn options(&self) -> &FetchOptions {
        &self.opts
    }

    /// True when reads are slices of memory, so fine-grained fetches save
    /// nothing.
    pub fn is_zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// The store and path behind this source.
    pub fn object(&self) -> (&Arc<dyn ObjectStore>, &Path) {
        (&self.store, &self.path)
    }

    /// Fetches one range in one request (retried when the failure may be
    /// transient).
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] when the range lies beyond the object's end,
    /// [`Error::ObjectStore`] when the store keeps failing or returns the wrong
    /// number of bytes.
    pub async fn get(&self, range: Range<u64>) -> Result<Bytes, Error> {
        if range.start > range.end || range.end > self.size {
            return Err(Error::Corrupt(format!(
                "{}: byte range {}..{} is outside the file of {} bytes",
                self.name, range.start, range.end, self.size
            )));
        }
        if range.start == range.end {
            return Ok(Bytes::new());
        }
        if let Some(bytes) = self.cached(&range) {
            return Ok(bytes);
        }
        if let Some(map) = &self.map {
            let started = Instant::now();
            let bytes = map.slice(range.start as usize..range.end as usize);
            self.stats.record(range, started.elapsed());
            return Ok(bytes);
        }
        if let Some(file) = &self.file {
            let started = Instant::now();
            let bytes = self.read_file(file, range.clone()).await?;
            self.stats.record(range, started.elapsed());
            return Ok(bytes);
        }
        let mut attempt = 0u32;
        loop {
            let started = Instant::now();
            let result = self.store.get_range(&self.path, range.clone()).await;
            match result {
                Ok(bytes) if bytes.len() as u64 == range.end - range.start => {
                    self.stats.record(range, started.elapsed());
                    return Ok(bytes);
                }
                Ok(bytes) => {
                    return Err(Error::ObjectStore {
                        location: self.name.clone(),
                        source: object_store::Error::Generic {
                            store: "strata",
                            source: format!(
                                "asked for {} bytes at {}, got {}",
                                range.end - range.start,
                                range.start,
                                bytes.len()
                            )
                            .into(),
                        },
                    });
                }
                Err(e) if attempt < self.opts.retries && is_transient(&e) => {
                    self.stats.inner.retries.fetch_add(1, Ordering::Relaxed);
                    let wait = self.opts.retry_backoff.saturating_mul(1 << attempt.min(16));
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(source) => {
                    return Err(Error::ObjectStore {
                        location: self.name.clone(),
                        source,
                    });
                }
            }
        }
    }

    /// Fetches the last `n` bytes (all of them when the object is
    /// smaller).
    ///
    /// # Errors
    ///
    /// As [`Source::get`].
    pub async fn tail(&self, n: u64) -> Result<Bytes, Error> {
        self.get(self.size.saturating_sub(n)..self.size).await
    }

    /// Fetches every range in `requests`, coalesced by this source's
    /// settings and issued with at most `concurrency` in flight; returns
    /// one slice per request, in request order.
    ///
    /// # Errors
    ///
    /// As [`Source::get`]; [`Error::InvalidConfig`] for a range that ends
    /// before it starts.
    pub async fn fetch(&self, requests: &[Range<u64>]) -> Result<Vec<Bytes>, Error> {
        let (plan, fetched) = self.fetch_merged(requests).await?;
        Ok(plan.slice_requests(requests, &fetched))
    }
}

impl Source {
    /// Like [`Source::fetch`], but returns the plan and the merged fetches
    /// themselves, for callers that decode straight from them.
    ///
    /// # Errors
    ///
    /// As [`Source::fetch`].
    /// Requests inside the kept tail ([`Source::with_tail`]) are served
    /// from it: the plan's fetches are the rest, and `fetched` holds one
    /// more entry, the tail, that such requests' slices point into.
    pub async fn fetch_merged(
        &self,
        requests: &[Range<u64>],
    ) -> Result<(ReadPlan, Vec<Bytes>), Error> {
        let outside: Vec<Range<u64>> = requests
            .iter()
            .filter(|r| self.cached(r).is_none())
            .cloned()
            .collect();
        let plan = coalesce(&outside, self.opts.coalesce)?;
        let mut fetched: Vec<Bytes> = futures::stream::iter(plan.fetches.iter().cloned())
            .map(|r| self.get(r))
            .buffered(self.opts.concurrency.max(1))
            .try_collect()
            .await?;
        if outside.len() == requests.len() {
            return Ok((plan, fetched));
        }
        let tail_fetch = fetched.len();
        fetched.push(self.tail.clone());
        let start = self.tail_start();
        let mut from_store = plan.slices.into_iter();
        let slices = requests
            .iter()
            .map(|r| match self.cached(r) {
                None => from_store.next().flatten(),
                Some(_) if r.start == r.end => None,
                Some(_) => Some((tail_fetch, r.start - start)),
            })
            .collect();
        Ok((
            ReadPlan {
                fetches: plan.fetches,
                slices,
            },
            fetched,
        ))
    }
}

/// `f` (of `len` bytes) mapped read-only into memory, as one shared
/// buffer; `None` for an empty file or when mapping fails (reads then use
/// positioned reads). For files that are never rewritten in place (see
/// the SAFETY note): strata's outputs and table data files.
pub fn map_file(f: &std::fs::File, len: u64) -> Option<Bytes> {
    if len == 0 || usize::try_from(len).is_err() {
        return None;
    }
    // SAFETY: the map is read-only and private to this source, and every
    // slice handed out lies inside the length checked at open. What the
    // mapping cannot guard against is another process changing the file
    // while it is read: the bytes then change under the reader (which
    // checks every offset it decodes, so this gives an error or wrong
    // values, as a changed file read by positioned reads would), and a
    // file truncated below a read range raises SIGBUS on access. Readers
    // of files being rewritten in place must not use local sources; strata
    // itself only ever replaces outputs by rename, which leaves a mapped
    // file intact.
    let map = unsafe { memmap2::MmapOptions::new().map(f) }.ok()?;
    (map.len() as u64 == len).then(|| Bytes::from_owner(map))
}

/// `len` bytes of `f` from `offset`, read straight into the spare
/// capacity of `buf` (empty): zero-filling it first was 18% of a full IPC
/// scan of a 200 MB file from the page cache (`strata bench scan`, perf),
/// a second pass over every byte.
#[cfg(unix)]
fn read_vec_at(
    f: &std::fs::File,
    mut buf: Vec<u8>,
    len: usize,
    offset: u64,
) -> std::io::Result<Vec<u8>> {
    use std::os::fd::AsRawFd;
    buf.clear();
    buf.reserve(len);
    while buf.len() < len {
        let done = buf.len();
        let at = offset
            .checked_add(done as u64)
            .and_then(|o| libc::off_t::try_from(o).ok())
            .ok_or_else(|| std::io::Error::other("read offset out of range"))?;
        let spare = buf.spare_capacity_mut();
        let want = (len - done).min(spare.len());
        // SAFETY: `spare` is this vector's unused capacity, at least
        // `want` bytes of writable memory that nothing else refers to;
        // pread writes at most `want` bytes there and reads nothing from
        // it. The descriptor is the open file `f`, borrowed for the call.
        let n = unsafe {
            libc::pread(
                f.as_raw_fd(),
                spare.as_mut_ptr().cast::<libc::c_void>(),
                want,
                at,
            )
        };
        match n {
            n if n < 0 => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                // SAFETY: pread initialised the first `n <= want` bytes
                // of the spare capacity, directly after the `done`
                // initialised ones, so `done + n` bytes are initialised
                // and within the capacity.
                unsafe { buf.set_len(done + n as usize) };
            }
        }
    }
    Ok(buf)
}

#[cfg(windows)]
fn read_vec_at(
    f: &std::fs::File,
    mut buf: Vec<u8>,
    len: usize,
    mut offset: u64,
) -> std::io::Result<Vec<u8>> {
    use std::os::windows::fs::FileExt;
    buf.clear();
    buf.resize(len, 0);
    let mut rest = &mut buf[..];
    while !rest.is_empty() {
        match f.seek_read(rest, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                rest = &mut rest[n..];
                offset += n as u64;
            }
        }
    }
    Ok(buf)
}

/// Whether a store error may go away when the request is made again.
fn is_transient(e: &object_store::Error) -> bool {
    matches!(
        e,
        object_store::Error::Generic { .. } | object_store::Error::JoinError { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_testkit::stores::{FaultRule, FaultStore, SimulatedStore};

    #[test]
    fn positioned_reads_return_exactly_the_file_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let data: Vec<u8> = (0..1_500_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        std::fs::write(&path, &data).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        for (start, len) in [
            (0usize, data.len()),
            (1000, 600_000),
            (data.len() - 7, 7),
            (5, 0),
        ] {
            // A reused buffer with stale contents and a smaller capacity.
            let stale = vec![0xAAu8; 3];
            let got = read_vec_at(&f, stale, len, start as u64).unwrap();
            assert_eq!(got, &data[start..start + len], "{start}+{len}");
        }
        let e = read_vec_at(&f, Vec::new(), 10, data.len() as u64 - 5).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        let e = read_vec_at(&f, Vec::new(), 1, u64::MAX).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
    }

    #[test]
    fn mapped_files_read_their_bytes_and_count_every_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let data: Vec<u8> = (0..700_000u32).map(|i| (i % 253) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let src = Source::open_file(&path, "data", FetchOptions::local()).unwrap();
        assert!(src.map.is_some(), "a non-empty local file is mapped");
        assert!(!src.is_zero_copy(), "readers still plan projected ranges");
        let rt = rt();
        let got = rt
            .block_on(src.fetch(&[5..9, 300_000..650_000, 699_990..700_000]))
            .unwrap();
        assert_eq!(got[0], &data[5..9]);
        assert_eq!(got[1], &data[300_000..650_000]);
        assert_eq!(got[2], &data[699_990..]);
        let s = src.stats().snapshot();
        assert_eq!((s.requests, s.bytes_fetched), (3, 4 + 350_000 + 10));
        let e = rt.block_on(src.get(699_999..700_001)).unwrap_err();
        assert!(matches!(e, Error::Corrupt(_)), "{e}");

        // An empty file cannot be mapped and reads nothing.
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        let src = Source::open_file(&empty, "empty", FetchOptions::local()).unwrap();
        assert!(src.map.is_none());
        assert_eq!(rt.block_on(src.get(0..0)).unwrap().len(), 0);
        assert!(rt.block_on(src.get(0..1)).is_err());

        // Unmapped, the same reads come from positioned reads.
        let src = Source::open_file(&path, "data", FetchOptions::local())
            .unwrap()
            .without_map();
        assert!(src.map.is_none());
        let got = rt.block_on(src.fetch(&[5..9, 300_000..650_000])).unwrap();
        assert_eq!(got[0], &data[5..9]);
        assert_eq!(got[1], &data[300_000..650_000]);
        assert_eq!(src.stats().snapshot().requests, 2);
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    fn data(n: usize) -> Bytes {
        (0..n).map(|i| (i % 251) as u8).collect::<Vec<_>>().into()
    }

    #[test]
    fn fetch_slices_each_request_and_counts_coalesced_requests() {
        let bytes = data(100_000);
        let src = Source::from_bytes(bytes.clone()).with_stats(IoStats::with_log());
        let reqs = [10..20, 30..40, 50_000..50_100, 5..15, 99_990..100_000, 7..7];
        let got = rt().block_on(src.fetch(&reqs)).unwrap();
        for (r, g) in reqs.iter().zip(&got) {
            assert_eq!(&g[..], &bytes[r.start as usize..r.end as usize]);
        }
        let s = src.stats().snapshot();
        assert_eq!(s.requests, 3, "{:?}", src.stats().ranges());
        assert_eq!(s.bytes_fetched, 35 + 100 + 10);
        let mut log = src.stats().ranges();
        log.sort_by_key(|r| r.start);
        assert_eq!(log, vec![5..40, 50_000..50_100, 99_990..100_000]);
    }

    #[test]
    fn reads_inside_a_kept_tail_cost_nothing() {
        let bytes = data(10_000);
        let mut opts = FetchOptions::local();
        opts.coalesce.hole_size_limit = 0;
        let src = Source::from_bytes(bytes.clone())
            .with_options(opts)
            .with_stats(IoStats::with_log())
            .with_tail(bytes.slice(9_000..));
        assert_eq!(src.tail_start(), 9_000);
        assert_eq!(
            rt().block_on(src.get(9_500..9_600)).unwrap(),
            bytes.slice(9_500..9_600)
        );
        let reqs = [
            9_990..10_000,
            10..20,
            8_990..9_010,
            9_000..9_000,
            9_100..9_200,
        ];
        let got = rt().block_on(src.fetch(&reqs)).unwrap();
        for (r, g) in reqs.iter().zip(&got) {
            assert_eq!(&g[..], &bytes[r.start as usize..r.end as usize], "{r:?}");
        }
        // Only the two ranges not wholly in the tail were fetched.
        let mut log = src.stats().ranges();
        log.sort_by_key(|r| r.start);
        assert_eq!(log, vec![10..20, 8_990..9_010]);
        // A tail longer than the object is not kept.
        let src = Source::from_bytes(bytes.slice(..10)).with_tail(bytes.clone());
        assert_eq!(src.tail_start(), 10);
    }

    #[test]
    fn out_of_bounds_ranges_are_errors() {
        let src = Source::from_bytes(data(100));
        let e = rt().block_on(src.get(90..101)).unwrap_err();
        assert!(e.to_string().contains("outside the file"), "{e}");
    }

    #[test]
    fn transient_failures_are_retried_and_counted() {
        let mem = InMemory::new();
        let path = Path::from("f");
        let bytes = data(1000);
        rt().block_on(mem.put(&path, bytes.clone().into())).unwrap();
        let store = Arc::new(FaultStore::new(Arc::new(mem), FaultRule::EveryNth(2)));
        let mut opts = FetchOptions::local();
        opts.retry_backoff = Duration::from_millis(1);
        // One at a time, so each request fails exactly once: reads
        // alternate failure and success after the size lookup.
        opts.concurrency = 1;
        opts.coalesce.hole_size_limit = 0;
        opts.coalesce.range_size_limit = 1;
        let src = rt()
            .block_on(Source::open(store.clone(), path.clone(), "f", opts))
            .unwrap();
        let reqs: Vec<_> = (0..10u64).map(|i| i * 100..i * 100 + 10).collect();
        let got = rt().block_on(src.fetch(&reqs)).unwrap();
        for (r, g) in reqs.iter().zip(&got) {
            assert_eq!(&g[..], &bytes[r.start as usize..r.end as usize]);
        }
        assert_eq!(store.failures(), 10);
        assert_eq!(src.stats().snapshot().retries, store.failures());
        assert_eq!(src.stats().snapshot().requests, 10);

        // A store that keeps failing gives up with the store's error.
        let dead = Arc::new(FaultStore::new(
            Arc::new(InMemory::new()),
            FaultRule::AfterN(0),
        ));
        let src = Source {
            store: dead,
            path,
            size: 1000,
            name: "dead".into(),
            stats: IoStats::default(),
            opts,
            zero_copy: false,
            file: None,
            map: None,
            tail: Bytes::new(),
        };
        let e = rt().block_on(src.get(0..10)).unwrap_err();
        assert!(e.to_string().contains("injected failure"), "{e}");
        assert_eq!(src.stats().snapshot().retries, u64::from(opts.retries));
    }

    #[test]
    fn simulated_store_charges_latency_per_request() {
        let mem = InMemory::new();
        let path = Path::from("f");
        rt().block_on(mem.put(&path, data(10_000).into())).unwrap();
        let store = Arc::new(SimulatedStore::new(
            Arc::new(mem),
            Duration::from_millis(30),
            1e9,
        ));
        let src = rt()
            .block_on(Source::open(store, path, "f", FetchOptions::local()))
            .unwrap();
        let t = Instant::now();
        rt().block_on(src.get(0..100)).unwrap();
        // A lower bound only: sleeping never ends early.
        assert!(t.elapsed() >= Duration::from_millis(30));
    }
}
