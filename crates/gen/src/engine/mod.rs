//! The spec engine: a [`Spec`](crate::Spec) compiled to column generators.
//!
//! A batch is generated column by column, field by field, like a hand
//! written generator would: for each field, one pass decides validity, one
//! pass draws values into the vector that becomes the Arrow buffer. Every
//! element has an id, its global row for top-level fields and
//! `parent_id * max_length + position` inside lists and maps, and every
//! draw comes from the field's own streams keyed by that id, so an
//! element's content depends only on `(spec, seed, id)`.
//!
//! Vectors come back through
//! [`BatchGenerator::recycle`](crate::BatchGenerator::recycle) into a pool
//! and are reused, so a steady stream of batches barely allocates.
//!
//! Each module uses only those listed before it: `run` (numbers a spec
//! computes once per run, set before a table compiles), `draw` (stream ids,
//! bounded draws), `strata` (the strata of a stratified table's rows),
//! `calendar`, `scratch` (pooled vectors, validity bitmaps), `text`
//! (template steps and the string writer), `sample` (samplers),
//! `aggregate`, `sequences` (sequence limits), `lists`
//! (lengths and offsets), `arrays` (Arrow arrays of a node's values),
//! `node` (the compiled tree and its generation, references evaluated at
//! the rows drawn), `generator` ([`SpecGenerator`] as a
//! [`BatchGenerator`](crate::BatchGenerator)) and `compile` (a spec or a
//! dataset's table to the tree). The constants below are shared by them.

mod aggregate;
mod arrays;
mod calendar;
mod compile;
mod draw;
mod generator;
mod lists;
mod node;
mod run;
mod sample;
mod scratch;
mod sequences;
mod strata;
mod text;

pub use generator::SpecGenerator;
pub use scratch::SpecScratch;

/// Fields whose estimated distinct values pass this are written without a
/// Parquet dictionary (it would overflow its page and be thrown away).
const DICTIONARY_LIMIT: u64 = 100_000;

/// Largest batch, so that offsets of modest strings stay in `i32`.
const MAX_BATCH_ROWS: usize = 1 << 24;

/// Most list or map elements one batch may hold at one level: past this a
/// batch is refused (use smaller batches) before its ids are allocated.
const MAX_BATCH_ELEMENTS: u64 = 1 << 26;

/// The code of a null element (categories are `0..255`).
const NULL_CODE: u8 = 255;
