//! Output files in an object store that appear only when complete.
//!
//! An [`Upload`] is a multipart upload written through `std::io::Write`:
//! bytes are buffered into parts of [`PART_BYTES`] and each full part is
//! sent while the writer goes on (at most [`PARTS_IN_FLIGHT`] at once, so
//! memory stays bounded). [`Upload::seal`] sends the rest and waits for
//! every part; nothing is visible in the store until [`Upload::commit`]
//! completes the upload. Sealing every file before completing any keeps
//! the window in which some files of a run are visible and others failed
//! down to the completion requests. Dropping an upload that was not
//! committed aborts it, so a failed run leaves no object that looks
//! finished.

use std::{collections::VecDeque, io::Write, sync::Arc};

use bytes::Bytes;
use object_store::{
    MultipartUpload, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    path::Path as ObjectPath,
};

use crate::{
    Error,
    location::{StoreConfig, parse_dir},
    wait::block_on,
};

/// Bytes per uploaded part (S3 takes parts of 5 MiB and up but the last).
pub const PART_BYTES: usize = 8 << 20;
/// Parts sent at once per upload.
pub const PARTS_IN_FLIGHT: usize = 4;

/// A prefix in an object store that files are written under.
#[derive(Debug)]
pub struct ObjectDir {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    display: String,
    rt: Arc<tokio::runtime::Runtime>,
}

impl ObjectDir {
    /// `url` (such as `s3://bucket/prefix`, parsed by
    /// [`parse_dir`]), with S3 settings from
    /// the standard `AWS_*` variables and `cfg`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for a location that cannot be parsed or a
    /// runtime that cannot start.
    pub fn open(url: &str, cfg: &StoreConfig) -> Result<ObjectDir, Error> {
        let loc = parse_dir(url, cfg)?;
        Self::new(loc.store, loc.path, url)
    }

    /// The prefix `prefix` of `store`, named `display` in messages.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] when the IO runtime cannot start.
    pub fn new(
        store: Arc<dyn ObjectStore>,
        prefix: ObjectPath,
        display: &str,
    ) -> Result<ObjectDir, Error> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Error::InvalidConfig(format!("cannot start the IO runtime: {e}")))?;
        Ok(ObjectDir {
            store,
            prefix,
            display: display.trim_end_matches('/').to_string(),
            rt: Arc::new(rt),
        })
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The runtime its requests run on (to block on from plain threads).
    pub fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.rt
    }

    /// The path of object `name` under the prefix (`/` in `name`
    /// separates its parts: `data/part-0.parquet`).
    pub fn path(&self, name: &str) -> ObjectPath {
        name.split('/')
            .filter(|p| !p.is_empty())
            .fold(self.prefix.clone(), |path, part| path.join(part))
    }

    /// The prefix as given, for messages.
    pub fn prefix_display(&self) -> &str {
        &self.display
    }

    /// `name`'s location, for messages.
    pub fn display(&self, name: &str) -> String {
        format!("{}/{name}", self.display)
    }

    fn error(&self, name: &str, source: object_store::Error) -> Error {
        Error::ObjectStore {
            location: self.display(name),
            source,
        }
    }

    /// The names and sizes of the objects directly under the prefix.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when listing fails.
    pub fn list(&self) -> Result<Vec<(String, u64)>, Error> {
        self.list_under("")
    }

    /// The names and sizes of the objects directly under `sub` (a
    /// `/`-separated path below the prefix; empty for the prefix itself).
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when listing fails.
    pub fn list_under(&self, sub: &str) -> Result<Vec<(String, u64)>, Error> {
        let at = self.path(sub);
        let shown = if sub.is_empty() {
            self.display.clone()
        } else {
            self.display(sub)
        };
        let listed = block_on(
            &self.rt,
            || format!("the listing of {shown}/"),
            self.store.list_with_delimiter(Some(&at)),
        )
        .map_err(|e| self.error(sub, e))?;
        Ok(listed
            .objects
            .into_iter()
            .filter_map(|m| Some((m.location.filename()?.to_string(), m.size)))
            .collect())
    }

    /// Every object under `sub` (a `/`-separated path below the prefix;
    /// empty for the whole prefix), at any depth: its name relative to
    /// the prefix, its size and its last modification (milliseconds since
    /// the epoch).
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when listing fails.
    pub fn list_all(&self, sub: &str) -> Result<Vec<(String, u64, i64)>, Error> {
        use futures::TryStreamExt as _;
        let at = self.path(sub);
        let prefix: Vec<String> = self
            .prefix
            .parts()
            .map(|p| p.as_ref().to_string())
            .collect();
        let metas: Vec<object_store::ObjectMeta> = block_on(
            &self.rt,
            || format!("the listing of {}/", self.display(sub)),
            self.store.list(Some(&at)).try_collect(),
        )
        .map_err(|e| self.error(sub, e))?;
        Ok(metas
            .into_iter()
            .filter_map(|m| {
                let parts: Vec<String> =
                    m.location.parts().map(|p| p.as_ref().to_string()).collect();
                let rel = parts.strip_prefix(prefix.as_slice())?.join("/");
                Some((rel, m.size, m.last_modified.timestamp_millis()))
            })
            .collect())
    }

    /// Object `name`'s bytes; `None` when there is no such object.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when the request fails.
    pub fn get(&self, name: &str) -> Result<Option<Bytes>, Error> {
        let path = self.path(name);
        let read = async {
            match self.store.get(&path).await {
                Ok(r) => r.bytes().await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        };
        block_on(
            &self.rt,
            || format!("the read of {}", self.display(name)),
            read,
        )
        .map_err(|e| self.error(name, e))
    }

    /// Bytes `range` of object `name`.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when the request fails (a missing object
    /// too).
    pub fn get_range(&self, name: &str, range: std::ops::Range<u64>) -> Result<Bytes, Error> {
        let path = self.path(name);
        block_on(
            &self.rt,
            || format!("the read of {}", self.display(name)),
            self.store.get_range(&path, range),
        )
        .map_err(|e| self.error(name, e))
    }

    /// Object `name`'s size and last modification (milliseconds since the
    /// epoch); `None` when there is no such object.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when the request fails.
    pub fn head(&self, name: &str) -> Result<Option<(u64, i64)>, Error> {
        let path = self.path(name);
        match block_on(
            &self.rt,
            || format!("the head request of {}", self.display(name)),
            self.store.head(&path),
        ) {
            Ok(m) => Ok(Some((m.size, m.last_modified.timestamp_millis()))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(name, e)),
        }
    }

    /// Writes object `name` in one request. With `create_only`, only if
    /// no object of that name exists (S3's `If-None-Match: *`): of two
    /// writers racing for one name, exactly one gets it.
    ///
    /// # Errors
    ///
    /// [`Error::OutputExists`] when `create_only` and the object exists
    /// (it is left as it was); [`Error::ObjectStore`] when the request
    /// fails.
    pub fn put(&self, name: &str, bytes: Vec<u8>, create_only: bool) -> Result<(), Error> {
        let path = self.path(name);
        let opts = PutOptions {
            mode: if create_only {
                PutMode::Create
            } else {
                PutMode::Overwrite
            },
            ..PutOptions::default()
        };
        match block_on(
            &self.rt,
            || format!("the write of {}", self.display(name)),
            self.store.put_opts(&path, PutPayload::from(bytes), opts),
        ) {
            Ok(_) => Ok(()),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) if create_only => Err(Error::OutputExists {
                path: self.display(name).into(),
                count: 1,
            }),
            Err(e) => Err(self.error(name, e)),
        }
    }

    /// Removes object `name` (a missing one is not an error).
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when the request fails.
    pub fn remove(&self, name: &str) -> Result<(), Error> {
        let path = self.path(name);
        match block_on(
            &self.rt,
            || format!("the removal of {}", self.display(name)),
            self.store.delete(&path),
        ) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error(name, e)),
        }
    }

    /// Starts the upload of object `name`.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when the upload cannot be started.
    pub fn create(&self, name: &str) -> Result<Upload, Error> {
        let path = self.path(name);
        let upload = block_on(
            &self.rt,
            || format!("the start of the upload of {}", self.display(name)),
            self.store.put_multipart(&path),
        )
        .map_err(|e| self.error(name, e))?;
        Ok(Upload {
            upload: Some(upload),
            buf: Vec::with_capacity(PART_BYTES),
            inflight: VecDeque::new(),
            parts: 0,
            rt: Arc::clone(&self.rt),
            location: self.display(name),
            bytes: 0,
        })
    }
}

/// One object being uploaded.
pub struct Upload {
    upload: Option<Box<dyn MultipartUpload>>,
    buf: Vec<u8>,
    inflight: VecDeque<tokio::task::JoinHandle<object_store::Result<()>>>,
    parts: usize,
    rt: Arc<tokio::runtime::Runtime>,
    location: String,
    bytes: u64,
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Upload({}, {} bytes)", self.location, self.bytes)
    }
}

impl Upload {
    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The object's location, for messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    fn error(&self, source: object_store::Error) -> Error {
        Error::ObjectStore {
            location: self.location.clone(),
            source,
        }
    }

    /// Waits for the oldest part in flight.
    fn wait_one(&mut self) -> Result<(), Error> {
        if let Some(h) = self.inflight.pop_front() {
            let part = self.parts - self.inflight.len();
            let done = block_on(
                &self.rt,
                || format!("part {part} of the upload of {}", self.location),
                h,
            )
            .map_err(|e| self.error(object_store::Error::JoinError { source: e }))?;
            done.map_err(|e| self.error(e))?;
        }
        Ok(())
    }

    /// Sends `data` as the next part, once fewer than
    /// [`PARTS_IN_FLIGHT`] are in flight.
    fn send(&mut self, data: Vec<u8>) -> Result<(), Error> {
        while self.inflight.len() >= PARTS_IN_FLIGHT {
            self.wait_one()?;
        }
        let Some(upload) = self.upload.as_mut() else {
            return Err(Error::InvalidConfig(format!(
                "{} is already complete",
                self.location
            )));
        };
        let part = upload.put_part(PutPayload::from(data));
        self.inflight.push_back(self.rt.spawn(part));
        self.parts += 1;
        Ok(())
    }

    /// Sends the buffered bytes as the last part and waits for every part:
    /// all that is left is to complete the upload.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when a part fails.
    pub fn seal(&mut self) -> Result<(), Error> {
        if !self.buf.is_empty() || self.parts == 0 {
            let last = std::mem::take(&mut self.buf);
            self.send(last)?;
        }
        while !self.inflight.is_empty() {
            self.wait_one()?;
        }
        Ok(())
    }

    /// Seals the upload (if not yet) and completes it: the object appears
    /// whole.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectStore`] when a part or the completion fails (the upload is
    /// then aborted).
    pub fn commit(mut self) -> Result<String, Error> {
        self.seal()?;
        let Some(mut upload) = self.upload.take() else {
            return Err(Error::InvalidConfig(format!(
                "{} is already complete",
                self.location
            )));
        };
        let location = self.location.clone();
        match block_on(
            &self.rt,
            || format!("the completion of the upload of {location}"),
            upload.complete(),
        ) {
            Ok(_) => Ok(self.location.clone()),
            Err(e) => {
                let _ = block_on(
                    &self.rt,
                    || format!("the abort of the upload of {location}"),
                    upload.abort(),
                );
                Err(self.error(e))
            }
        }
    }
}

impl Write for Upload {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(buf);
        self.bytes += buf.len() as u64;
        while self.buf.len() >= PART_BYTES {
            let rest = self.buf.split_off(PART_BYTES);
            let part = std::mem::replace(&mut self.buf, rest);
            self.send(part).map_err(std::io::Error::other)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        if let Some(mut upload) = self.upload.take() {
            for h in self.inflight.drain(..) {
                h.abort();
            }
            let location = &self.location;
            let _ = block_on(
                &self.rt,
                || format!("the abort of the upload of {location}"),
                upload.abort(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use object_store::memory::InMemory;

    use super::*;

    #[test]
    fn an_upload_appears_only_when_committed_and_whole() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let dir = ObjectDir::new(Arc::clone(&store), ObjectPath::from("p"), "mem://p/").unwrap();
        assert_eq!(dir.display("a"), "mem://p/a");
        // More than two parts, written in odd pieces.
        let data: Vec<u8> = (0..(2 * PART_BYTES + 12_345))
            .map(|i| (i % 251) as u8)
            .collect();
        let mut up = dir.create("a").unwrap();
        for piece in data.chunks(1_000_003) {
            up.write_all(piece).unwrap();
        }
        assert_eq!(up.bytes(), data.len() as u64);
        assert!(
            dir.list().unwrap().is_empty(),
            "nothing visible before the commit"
        );
        up.commit().unwrap();
        assert_eq!(
            dir.list().unwrap(),
            vec![("a".to_string(), data.len() as u64)]
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let got = rt
            .block_on(async { store.get(&ObjectPath::from("p/a")).await?.bytes().await })
            .unwrap();
        assert_eq!(&got[..], &data[..]);
        // Dropped uncommitted: aborted, nothing appears.
        let mut up = dir.create("b").unwrap();
        up.write_all(&data[..PART_BYTES + 1]).unwrap();
        drop(up);
        assert_eq!(dir.list().unwrap().len(), 1);
        dir.remove("a").unwrap();
        dir.remove("a").unwrap();
        assert!(dir.list().unwrap().is_empty());
    }
}
