//! Deterministic, nested synthetic data as Arrow record batches, from a
//! declarative spec.
//!
//! A [`Spec`] (TOML, or the same document as JSON; see [Spec
//! format](#spec-format)) describes a schema of any depth (structs, lists,
//! maps) and how each field is drawn: sequences, uniform, normal,
//! lognormal, empirical quantiles, Zipf,
//! weighted categories, string templates, word lists, random characters,
//! windows of a pseudo-text, SQL expressions, null rates, list lengths,
//! and cases that depend on a sibling's value. The
//! presets `contacts`, `wide-u64`, `events` and `lineitem` are embedded specs
//! ([`PRESETS`]). A spec compiles to a [`SpecGenerator`], the
//! [`BatchGenerator`] that the writer pipeline in `strata-pipeline` drives from
//! many threads. A [`Dataset`] holds several such tables, whose
//! fields may reference rows of the others (foreign keys and copied
//! attributes, resolved by recomputing the referenced row, never by
//! reading another table's output).
//!
//! # Data flow
//!
//! spec text -> serde into the [`document`] types -> [`Spec::parse`]'s
//! checks (errors name field and line)
//! -> [`SpecGenerator`] (samplers and streams per field) ->
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
//! use strata_gen::{BatchGenerator, Spec};
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
//!
//! # Spec format
//!
//! A spec is a TOML description of a nested schema and of how every
//! field is generated.
//!
//! A spec names the dataset and lists its fields. Each field has an Arrow
//! `type`, a generator (how its values are drawn, or an `expr` that
//! computes them from sibling fields), an optional `null_rate` and
//! optional `when` cases that make it depend on a sibling field's
//! value. Structs, lists and maps nest fields inside fields. The keys a
//! spec file may hold are the serde types of [`document`]: their doc
//! comments document the format field by field, and the JSON Schema of
//! the document ([`json_schema`], committed as `spec.schema.json`) is
//! derived from them; a spec reads through them, TOML or JSON. Then
//! [`Spec::parse`] checks everything that schema cannot
//! (types of values, distribution parameters, sibling references) and
//! names the field and line of each mistake.
//!
//! ```
//! use strata_gen::Spec;
//!
//! let spec = Spec::parse(r#"
//! name = "orders"
//!
//! [[fields]]
//! name = "id"
//! type = "int64"
//! sequence = { start = 1 }
//!
//! [[fields]]
//! name = "status"
//! type = "dictionary"
//! weighted = { values = ["open", "paid", "void"], weights = [20, 75, 5] }
//! "#, "orders.toml").unwrap();
//! assert_eq!(spec.fields.len(), 2);
//!
//! let err = Spec::parse(r#"
//! name = "bad"
//! [[fields]]
//! name = "user"
//! type = "int64"
//! zipf = { s = -1, n = 100 }
//! "#, "bad.toml").unwrap_err();
//! assert_eq!(err.to_string(),
//!     "bad.toml:6: field `user`: zipf exponent s must be a positive number, not -1");
//! ```

mod batch;
mod dates;
pub mod dist;
mod engine;
mod entry;
mod error;
pub mod expected;
mod expr;
mod facts;
mod model;
pub mod names;
mod parse;
pub mod rng;
mod template;

pub use batch::BatchGenerator;
pub use engine::{SpecGenerator, SpecScratch};
pub use entry::{MAX_SPEC_BYTES, read_text};
pub use error::{Error, FieldError};
pub use expr::{BoundTest, Clause, CmpOp, Comparison, Predicate, PredicateError, SqlLiteral, Test};
pub use model::document::{self, json_schema};
pub use model::share_text;
pub use model::{
    AggOp, Aggregate, Calendar, CalendarPart, Changes, ChildrenOf, Condition, CountCase,
    DATASET_PRESETS, Dataset, Expression, Field, Generator, Kind, Layout, OnDelete, PRESETS,
    ParquetCodec, ParquetColumn, ParquetEncoding, ParquetStatistics, Pick, QualifiedField,
    Reference, RowGroupSize, Rows, RunValue, Spec, SpecError, Table, Value, When, WordList,
    parse_byte_size,
};
pub use template::{Placeholder, Template};

/// The `contacts` preset for `seed` (a name, an optional list of phone
/// entries; see `crates/gen/specs/contacts.toml`).
pub fn contacts(seed: u64) -> SpecGenerator {
    preset("contacts", seed)
}

/// Preset `name` for `seed`.
///
/// # Panics
/// When `name` is not one of [`PRESETS`]; the presets themselves are
/// checked by this crate's tests. Use [`Spec::preset`] for names
/// from users.
pub fn preset(name: &str, seed: u64) -> SpecGenerator {
    Spec::preset(name)
        .and_then(|s| {
            s.generator(seed).map_err(|e| SpecError {
                origin: name.into(),
                line: 0,
                column: None,
                field: None,
                message: e.to_string(),
            })
        })
        .unwrap_or_else(|e| panic!("built-in preset: {e}"))
}
