//! Output files in an object store that appear only when complete.
//!
//! An [`Upload`] is a multipart upload written through `std::io::Write`:
//! bytes are buffered into parts of [`PART_BYTES`] and each full part is
//! sent while the writer goes on (at most [`PARTS_IN_FLIGHT`] at once, so
//! memory stays bounded). Nothing is visible in the store until
//! [`Upload::commit`] completes the upload; dropping an upload that was not
//! committed aborts it, so a failed run leaves no object that looks
//! finished.

use std::{io::Write, sync::Arc};

use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart, path::Path as ObjectPath};

use crate::{
    Error,
    location::{StoreConfig, parse_location},
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
    /// `url` (such as `s3://bucket/prefix`), with S3 settings from the
    /// standard `AWS_*` variables and `cfg`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidConfig`] for a location that cannot be parsed or a
    /// runtime that cannot start.
    pub fn open(url: &str, cfg: &StoreConfig) -> Result<ObjectDir, Error> {
        let trimmed = url.trim_end_matches('/');
        let loc = parse_location(trimmed, cfg)?;
        Self::new(loc.store, loc.path, trimmed)
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

    fn path(&self, name: &str) -> ObjectPath {
        self.prefix.clone().join(name)
    }

    /// `name`'s location, for messages.
    pub fn display(&self, name: &str) -> String {
        format!("{}/{name}", self.display)
    }

    fn error(&self, name: &str, source: object_store::Error) -> Error {
        Error::Store {
            location: self.display(name),
            source,
        }
    }

    /// The names of the objects directly under the prefix.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when listing fails.
    pub fn list(&self) -> Result<Vec<String>, Error> {
        let listed = self
            .rt
            .block_on(self.store.list_with_delimiter(Some(&self.prefix)))
            .map_err(|e| self.error("", e))?;
        Ok(listed
            .objects
            .into_iter()
            .filter_map(|m| m.location.filename().map(str::to_string))
            .collect())
    }

    /// Removes object `name` (a missing one is not an error).
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when the request fails.
    pub fn remove(&self, name: &str) -> Result<(), Error> {
        match self.rt.block_on(self.store.delete(&self.path(name))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error(name, e)),
        }
    }

    /// Starts the upload of object `name`.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when the upload cannot be started.
    pub fn create(&self, name: &str) -> Result<Upload, Error> {
        let upload = self
            .rt
            .block_on(self.store.put_multipart(&self.path(name)))
            .map_err(|e| self.error(name, e))?;
        Ok(Upload {
            writer: Some(WriteMultipart::new_with_chunk_size(upload, PART_BYTES)),
            rt: Arc::clone(&self.rt),
            location: self.display(name),
            bytes: 0,
        })
    }
}

/// One object being uploaded.
pub struct Upload {
    writer: Option<WriteMultipart>,
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

    /// Sends what is buffered and completes the upload: the object appears
    /// whole.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] when a part or the completion fails (the upload is
    /// then aborted).
    pub fn commit(mut self) -> Result<String, Error> {
        let Some(w) = self.writer.take() else {
            return Err(Error::InvalidConfig(format!(
                "{} was already committed",
                self.location
            )));
        };
        self.rt
            .block_on(w.finish())
            .map_err(|source| Error::Store {
                location: self.location.clone(),
                source,
            })?;
        Ok(self.location.clone())
    }
}

impl Write for Upload {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(w) = self.writer.as_mut() else {
            return Err(std::io::Error::other("the upload is finished"));
        };
        // Parts are sent from the runtime; wait while too many are in
        // flight, then buffer (a full part is sent at once).
        self.rt
            .block_on(w.wait_for_capacity(PARTS_IN_FLIGHT))
            .map_err(std::io::Error::other)?;
        let _enter = self.rt.enter();
        w.write(buf);
        self.bytes += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            let _ = self.rt.block_on(w.abort());
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
        assert_eq!(dir.list().unwrap(), vec!["a"]);
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
        assert_eq!(dir.list().unwrap(), vec!["a"]);
        dir.remove("a").unwrap();
        dir.remove("a").unwrap();
        assert!(dir.list().unwrap().is_empty());
    }
}
