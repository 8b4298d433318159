//! Tables that change: the history a spec's `changes = { ... }` writes
//! over a table with a `primary_key`.
//!
//! This crate owns which rows each version inserts, updates and deletes
//! ([`history::History`]: a pure function of the seed, the row and the
//! version, with hot keys by Zipf), every row's image at any version, and
//! the change stream of a version ([`stream::Images`]: Arrow batches of
//! `op`, `version`, `ts_ms`, the key, `before` and `after`, Debezium's
//! envelope).
//!
//! # Data flow
//!
//! `Changes` of a spec + the rows at version 0 -> [`history::History`]
//! (the ids each version inserts, and each row's fate) -> for a range of
//! ids, the rows at a version or the changes of a version ->
//! [`stream::Images`] (the table's generator for version 0's draws, a
//! salted one per update version) -> Arrow batches.
//!
//! # Guarantees
//!
//! * **Deterministic, any split.** A row's history depends only on the
//!   seed, its id and the version; any range of ids is computed alone, so
//!   parts, threads and batch sizes give the same rows.
//! * **Consistent images.** An update draws again only the fields it
//!   names (and recomputes the fields computed from them); the key and
//!   every other field keep their values, so applying the stream of
//!   versions `1..=v` to version 0 gives the rows at version `v`.
//! * **Rates as written.** Over the rows alive before a version, the
//!   shares deleted and updated are the spec's rates (each row a coin
//!   flip): deletes alike for every row, updates weighted by the rows'
//!   Zipf heat, capped so that a row is never more than certain to
//!   change, and scaled so that the capped chances keep the rate.
//!
//! # Example
//!
//! ```
//! use strata_changes::{history::History, stream::Images};
//! use strata_gen::{Spec, SpecGenerator};
//!
//! let spec = Spec::parse(
//!     r#"
//! name = "t"
//! primary_key = "id"
//! changes = { versions = 3, update = 0.5, delete = 0.1, insert = 0.2 }
//! fields = [{ name = "id", type = "int64", sequence = { start = 1 } },
//!           { name = "v", type = "int32", uniform = { min = 0, max = 1000 } }]
//! "#,
//!     "t.toml",
//! )
//! .unwrap();
//! let changes = spec.changes.clone().unwrap();
//! let history = History::new(&changes, 100, 42);
//! let fields = changes.update_fields.clone();
//! let images = Images::new(
//!     Box::new(move |v| match v {
//!         None => SpecGenerator::new(&spec, 42),
//!         Some(v) => SpecGenerator::salted(&spec, 42, &fields, v),
//!     }),
//!     "id",
//! )
//! .unwrap();
//! let v1 = images.changes(&history, 1, 0..history.ids_at(1)).unwrap();
//! assert_eq!(v1.num_columns(), 6);
//! // 20 rows inserted at version 1: ids 100 to 119.
//! assert_eq!(history.ids_at(1), 120);
//! let rows = images.at_version(&history, 1, 0..120).unwrap();
//! assert!(rows.num_rows() > 100);
//! ```

pub mod child;
mod error;
pub mod history;
pub mod stream;

pub use error::Error;
