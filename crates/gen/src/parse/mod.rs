//! TOML text to a checked [`Spec`](crate::Spec) or
//! [`Dataset`](crate::Dataset), with the line and field of every error.
//!
//! serde reads the text into the document types
//! ([`crate::document`]); the modules here are the one semantic pass over
//! them: names, types, values against field types, generators, draws,
//! references and cycles. Each module uses only those listed before it:
//! `types` (Arrow type names, decimal text), `reader` (the document read,
//! the order and place of each table's keys, errors, typed reads of
//! values), `values`, `generators`, `parquet` (Parquet settings, handed
//! down to leaves), `siblings` (draw names, and
//! expressions over a table's own fields), `fields`, `changes` (a
//! table's primary key and history, against its fields), `qualified` (names
//! of other rows), `rows` (fixed rows, calendars), `references` (between
//! tables), `spec` (one table) and `dataset` (`[[tables]]`).

mod changes;
mod dataset;
mod fields;
mod generators;
mod layout;
mod parquet;
mod qualified;
mod reader;
mod references;
mod rows;
mod siblings;
mod spec;
mod types;
mod values;

pub(crate) use dataset::parse_dataset;
pub(crate) use spec::parse;

#[cfg(test)]
mod tests {
    use crate::model::Spec;
    use crate::model::query::kind_type;

    /// The Arrow type the parser gives a field (for references to it) is
    /// the one the engine builds, for every field of every preset.
    #[test]
    fn kind_types_are_the_engines() {
        use crate::BatchGenerator;
        for (name, _) in crate::PRESETS {
            let spec = Spec::preset(name).unwrap();
            let schema = spec.generator(1).unwrap().schema();
            for (f, arrow) in spec.fields.iter().zip(schema.fields()) {
                assert_eq!(&kind_type(&f.kind), arrow.data_type(), "{name}.{}", f.name);
            }
        }
    }
}
