//! Where strata's bytes come from and go to: locations, sources, coalesced
//! fetches, multipart uploads and atomic outputs.
//!
//! The principal type is [`source::Source`]: one object (a local file, an
//! in-memory buffer, an S3 key) that readers ask for byte ranges. Every
//! crate that reads a user's file reads it through a `Source`, and every
//! crate that writes one writes it through [`output::PendingFile`] (local)
//! or [`upload::Upload`] (object store).
//!
//! # Data flow
//!
//! Reading: what a user typed -> [`location::parse_location`] (local path,
//! `file://` or `s3://` URL, with [`location::StoreConfig`] overrides) ->
//! [`source::Source`] -> the byte ranges a reader needs ->
//! [`ranges::coalesce`] (merge near ranges within size limits) -> parallel
//! fetches with retries -> one zero-copy slice per requested range, every
//! request counted in [`source::IoStats`].
//!
//! Writing: [`output::PendingFile`] (a hidden temporary renamed onto its
//! target by `commit`) or [`upload::Upload`] (a multipart upload completed
//! by `commit`). Large local outputs fill the temporary through a
//! [`direct::DirectWriter`]: aligned buffers written with `O_DIRECT` on a
//! background thread, past the page cache.
//!
//! # Guarantees
//!
//! * Nothing appears under a final name or key until its writer commits;
//!   dropping an uncommitted output removes the temporary or aborts the
//!   upload.
//! * A fetch returns exactly the requested ranges, whatever the coalescing,
//!   and a range past the end of a source is an error, never a panic.
//! * Transient object-store failures are retried; the rest surface as
//!   [`Error`] naming the location. A request gives up after its retry
//!   budget ([`location::default_retry`]), and one without an answer for
//!   a while is reported as it goes on ([`wait`]).
//!
//! # Example
//!
//! ```
//! use strata_store::ranges::{CoalesceOptions, coalesce};
//!
//! // Two ranges 100 bytes apart become one fetch; the far one stays apart.
//! let opts = CoalesceOptions { hole_size_limit: 1024, range_size_limit: 1 << 20 };
//! let plan = coalesce(&[0..100, 200..300, 1_000_000..1_000_100], opts).unwrap();
//! assert_eq!(plan.fetches, vec![0..300, 1_000_000..1_000_100]);
//! assert_eq!(plan.fetched_bytes(), 400);
//! ```

pub mod direct;
mod error;
pub mod location;
pub mod output;
pub mod ranges;
pub mod source;
pub mod upload;
pub mod wait;

pub use error::{Error, FromStore};
