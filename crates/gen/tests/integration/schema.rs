//! The JSON Schema of spec files is derived from the document types: the
//! committed `spec.schema.json` is their output, and every preset and
//! example spec reads as a document.
//!
//! After changing the document types, write the file again with
//! `STRATA_WRITE_SCHEMA=1 cargo test -p strata-gen --test integration schema`
//! (or `strata spec schema > crates/gen/spec.schema.json`).

use std::path::Path;

use serde::Deserialize;
use strata_gen::{DATASET_PRESETS, PRESETS, document::Document, json_schema};

#[test]
fn committed_schema_is_the_derived_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec.schema.json");
    let derived = json_schema();
    if std::env::var_os("STRATA_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, &derived).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == derived,
        "{} is not the derived schema; write it again with \
         STRATA_WRITE_SCHEMA=1 cargo test -p strata-gen --test integration schema",
        path.display()
    );
}

#[test]
fn schema_names_every_generator_key_of_a_field() {
    let schema: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
    let props = &schema["$defs"]["field"]["properties"];
    for key in strata_gen::document::GENERATOR_KEYS {
        assert!(props.get(*key).is_some(), "the schema lacks `{key}`");
    }
    // Two generator keys in one field are refused by the schema too.
    let pairs = schema["$defs"]["field"]["not"]["anyOf"].as_array().unwrap();
    let n = strata_gen::document::GENERATOR_KEYS.len();
    assert_eq!(pairs.len(), n * (n - 1) / 2);
}

#[test]
fn presets_and_examples_read_as_documents() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs");
    let mut texts: Vec<(String, String)> = PRESETS
        .iter()
        .chain(DATASET_PRESETS)
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect();
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            texts.push((path.display().to_string(), text));
        }
    }
    assert!(texts.len() >= PRESETS.len() + DATASET_PRESETS.len() + 2);
    for (name, text) in texts {
        let doc: Document =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{name} is not a spec document: {e}"));
        assert!(doc.name.is_some(), "{name}");
        assert!(doc.fields.is_some() != doc.tables.is_some(), "{name}");
    }
}

#[test]
fn documents_pass_unknown_keys_over_and_specs_refuse_them_at_their_position() {
    let text = "name = \"x\"\n[[fields]]\nname = \"a\"\ntype = \"int64\"\nconstnat = 1\n";
    let doc: Document = toml::from_str(text).unwrap();
    let Some(fields) = &doc.fields else {
        panic!("no fields")
    };
    let strata_gen::document::ItemsShape::Array(items) = &fields.at.value else {
        panic!("fields is not an array")
    };
    let strata_gen::document::Shape::Table(field) = &items[0].value else {
        panic!("a field is not a table")
    };
    assert!(field.constant.is_none());
    let err = strata_gen::Spec::parse(text, "x.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("x.toml:5: field `a`: unknown key `constnat` in a field"),
        "{err}"
    );
}

#[test]
fn document_spellings_of_calendar_parts_and_word_lists_are_the_model_s() {
    use serde::de::{IntoDeserializer, value::Error};
    use strata_gen::{CalendarPart, WordList};
    for (name, part) in CalendarPart::ALL {
        let read = CalendarPart::deserialize(IntoDeserializer::<Error>::into_deserializer(name));
        assert_eq!(read.ok(), Some(part), "{name}");
    }
    for list in [WordList::Words, WordList::FirstNames, WordList::LastNames] {
        let name = list.as_str();
        let read = WordList::deserialize(IntoDeserializer::<Error>::into_deserializer(name));
        assert_eq!(read.ok(), Some(list), "{name}");
    }
}
