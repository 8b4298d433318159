//! Object stores for tests: [`SimulatedStore`] makes every read wait like
//! one connection to a remote store (a time to first byte plus the bytes
//! over a bandwidth), [`FaultStore`] fails chosen reads. Both wrap any
//! [`ObjectStore`]; writes and listings pass straight through.

use std::{
    fmt,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, path::Path,
};

/// An [`ObjectStore`] that makes every read wait like one connection to a
/// remote store: a time to first byte plus the bytes over a bandwidth.
/// Writes and listings pass straight through.
#[derive(Debug)]
pub struct SimulatedStore {
    inner: Arc<dyn ObjectStore>,
    time_to_first_byte: Duration,
    bytes_per_second: f64,
}

impl SimulatedStore {
    /// Wraps `inner`; each read waits `time_to_first_byte + len /
    /// bytes_per_second`.
    pub fn new(
        inner: Arc<dyn ObjectStore>,
        time_to_first_byte: Duration,
        bytes_per_second: f64,
    ) -> Self {
        SimulatedStore {
            inner,
            time_to_first_byte,
            bytes_per_second,
        }
    }
}

impl fmt::Display for SimulatedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Simulated({}, ttfb {:?}, {} B/s)",
            self.inner, self.time_to_first_byte, self.bytes_per_second
        )
    }
}

/// Which reads a [`FaultStore`] fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultRule {
    /// Reads number `k * n` (counting from 1) fail with an error that may
    /// be transient, so a retry succeeds.
    EveryNth(u64),
    /// Every read after the first `n` fails.
    AfterN(u64),
}

/// An [`ObjectStore`] whose reads fail by a [`FaultRule`]. Writes and
/// listings pass straight through.
#[derive(Debug)]
pub struct FaultStore {
    inner: Arc<dyn ObjectStore>,
    rule: FaultRule,
    reads: AtomicU64,
    failed: AtomicU64,
}

impl FaultStore {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ObjectStore>, rule: FaultRule) -> Self {
        FaultStore {
            inner,
            rule,
            reads: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        }
    }

    /// How many reads failed so far.
    pub fn failures(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }
}

impl fmt::Display for FaultStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fault({}, {:?})", self.inner, self.rule)
    }
}

/// Implements [`ObjectStore`] for a read wrapper: `get_opts` as given,
/// everything else passed through to `self.inner`.
macro_rules! read_wrapper {
    ($ty:ty, $get_opts:item) => {
        #[async_trait]
        impl ObjectStore for $ty {
        $get_opts
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> object_store::Result<PutResult> {
            self.inner.put_opts(location, payload, opts).await
        }

        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            self.inner.put_multipart_opts(location, opts).await
        }

        fn delete_stream(
            &self,
            locations: BoxStream<'static, object_store::Result<Path>>,
        ) -> BoxStream<'static, object_store::Result<Path>> {
            self.inner.delete_stream(locations)
        }

        fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.inner.list(prefix)
        }

        async fn list_with_delimiter(
            &self,
            prefix: Option<&Path>,
        ) -> object_store::Result<ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }

        async fn copy_opts(
            &self,
            from: &Path,
            to: &Path,
            options: CopyOptions,
        ) -> object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
        }
    };
}

read_wrapper!(
    SimulatedStore,
    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let head = options.head;
        let result = self.inner.get_opts(location, options).await?;
        let len = if head {
            0
        } else {
            result.range.end - result.range.start
        };
        let secs = len as f64 / self.bytes_per_second.max(1.0);
        let wait = self.time_to_first_byte + Duration::from_secs_f64(secs.min(1e6));
        tokio::time::sleep(wait).await;
        Ok(result)
    }
);

read_wrapper!(
    FaultStore,
    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let n = self.reads.fetch_add(1, Ordering::Relaxed) + 1;
        let fail = match self.rule {
            FaultRule::EveryNth(k) => k > 0 && n.is_multiple_of(k),
            FaultRule::AfterN(k) => n > k,
        };
        if fail {
            self.failed.fetch_add(1, Ordering::Relaxed);
            return Err(object_store::Error::Generic {
                store: "fault",
                source: format!("injected failure of read {n}").into(),
            });
        }
        self.inner.get_opts(location, options).await
    }
);
