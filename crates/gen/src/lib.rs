//! Deterministic, nested synthetic data as Arrow record batches, from a
//! declarative spec.
//!
//! A [`spec::Spec`] (TOML; see [`spec`]) describes a schema of any depth
//! (structs, lists, maps) and how each field is drawn: sequences, uniform,
//! normal, Zipf, weighted categories, string templates, word lists, null
//! rates, list lengths, and cases that depend on a sibling's value. The
//! presets `contacts`, `wide-u64`, `events` and `lineitem` are embedded specs
//! ([`spec::PRESETS`]). A spec compiles to a [`spec::SpecGenerator`], the
//! [`BatchGenerator`] that the writer pipeline in `strata-pipeline` drives from
//! many threads. A [`spec::Dataset`] holds several such tables, whose
//! fields may reference rows of the others (foreign keys and copied
//! attributes, resolved by recomputing the referenced row, never by
//! reading another table's output).
//!
//! # Data flow
//!
//! spec text -> [`spec::Spec::parse`] (checked, errors name field and line)
//! -> [`spec::SpecGenerator`] (samplers and streams per field) ->
//! `(seed, field, element id)` -> [`rng::RowRng`] -> per-column vectors
//! (offsets, values, validity) -> Arrow buffers without a copy ->
//! [`arrow_array::RecordBatch`] -> consumer -> [`BatchGenerator::recycle`] hands the
//! vectors back for the next batch.
//!
//! # The guarantee: a row depends on its index, nothing else
//!
//! Randomness is counter-based ([`rng`]): each field path has its own
//! streams derived from the seed, and each element id (the global row
//! index at the top level) seeds its own SplitMix64 generator within them.
//! A row's content is therefore a pure function of `(spec, seed, row
//! index)`. Batch size, thread count, writer count and the order in which
//! batches are produced change where rows land, never what they contain,
//! and any row range can be produced on its own (the basis of exact
//! partitions). Adding or removing a field leaves the others' data as it
//! was. A reference draws its parent row from its own stream and evaluates
//! the parent's field (and the siblings its cases read) at that row, so
//! keys resolve in every part, whatever was generated before.
//!
//! # Example
//!
//! ```
//! use strata_gen::{BatchGenerator, spec::Spec};
//!
//! let generator = Spec::preset("contacts").unwrap().generator(42).unwrap();
//! let mut scratch = Default::default();
//! let batch = generator.generate(1_000, 4, &mut scratch).unwrap();
//! assert_eq!(batch.num_rows(), 4);
//! assert_eq!(batch.schema().field(1).name(), "phones");
//!
//! // The same rows, generated as part of a bigger batch, are identical.
//! let bigger = generator.generate(998, 8, &mut Default::default()).unwrap();
//! assert_eq!(bigger.slice(2, 4), batch);
//! generator.recycle(batch, &mut scratch);
//! ```

mod batch;
pub mod dist;
mod error;
pub mod names;
pub mod rng;
pub mod spec;

pub use batch::BatchGenerator;
pub use error::{Error, FieldError};

/// The `contacts` preset for `seed` (a name, an optional list of phone
/// entries; see `crates/gen/specs/contacts.toml`).
pub fn contacts(seed: u64) -> spec::SpecGenerator {
    preset("contacts", seed)
}

/// Preset `name` for `seed`.
///
/// # Panics
/// When `name` is not one of [`spec::PRESETS`]; the presets themselves are
/// checked by this crate's tests. Use [`spec::Spec::preset`] for names
/// from users.
pub fn preset(name: &str, seed: u64) -> spec::SpecGenerator {
    spec::Spec::preset(name)
        .and_then(|s| {
            s.generator(seed).map_err(|e| spec::SpecError {
                origin: name.into(),
                line: 0,
                column: None,
                field: None,
                message: e.to_string(),
            })
        })
        .unwrap_or_else(|e| panic!("built-in preset: {e}"))
}
