//! How the spec document's serde types are read: every value keeps its
//! place in the text, and a value of the wrong kind is kept as it was
//! written instead of failing the whole document.
//!
//! The document types ([`super::document`]) say what each key holds for
//! the JSON Schema; they read it through the wrappers here, so that the
//! checks after reading can say, in the spec's terms and at the key's
//! line, what is wrong (`` `null_rate` must be a number, not a string ``)
//! where serde alone would stop at its first surprise:
//!
//! - [`At`]: a value and the byte range it was written at;
//! - [`Raw`]: any TOML value (numbers as wide as a spec writes them,
//!   dates, arrays; a table only as a kind, since every table of a spec
//!   has a typed home);
//! - [`Loose`]: a value the schema types as `S`, read as a [`Raw`];
//! - [`Shape`] and [`Tab`]: a table read as its type `T`, or any other
//!   value kept raw (`length = 3` beside `length = { uniform = ... }`);
//! - [`Items`]: an array of tables, or one table where one is allowed.
//!
//! Data flow: TOML text -> `toml`'s deserializer -> document types built
//! of these wrappers -> `parse`'s checks (names, types, references).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use toml_datetime::de::VisitMap;

/// A value and the byte range of the text it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct At<T> {
    /// Where the value is written (a table of `[[fields]]` style: its
    /// header).
    pub span: Range<usize>,
    /// The value.
    pub value: T,
}

impl<T> At<T> {
    /// Where the value is written.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for At<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = toml::Spanned::<T>::deserialize(d)?;
        Ok(At {
            span: s.span(),
            value: s.into_inner(),
        })
    }
}

/// Any TOML value, as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// `true` or `false`.
    Bool(bool),
    /// An integer (TOML's, up to `u64::MAX` as `toml` reads them).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A TOML date, time or date-time.
    Datetime(toml::value::Datetime),
    /// An array, each item at its place.
    Array(Vec<At<Raw>>),
    /// A table (read elsewhere as its type; here only its kind).
    Table,
}

impl Raw {
    /// The kind of value, for messages: "a string", "an array".
    pub fn kind(&self) -> &'static str {
        match self {
            Raw::Str(_) => "a string",
            Raw::Int(_) => "an integer",
            Raw::Float(_) => "a float",
            Raw::Bool(_) => "a boolean",
            Raw::Datetime(_) => "a date-time",
            Raw::Array(_) => "an array",
            Raw::Table => "a table",
        }
    }
}

/// A visitor's methods for TOML's scalars: each kept as a [`Raw`], in
/// `$wrap`.
macro_rules! scalars_kept_as {
    ($wrap:path) => {
        fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
            Ok($wrap(Raw::Bool(v)))
        }

        fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
            Ok($wrap(Raw::Int(v.into())))
        }

        fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
            Ok($wrap(Raw::Int(v.into())))
        }

        fn visit_i128<E>(self, v: i128) -> Result<Self::Value, E> {
            Ok($wrap(Raw::Int(v)))
        }

        fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
            Ok($wrap(Raw::Float(v)))
        }

        fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
            Ok($wrap(Raw::Str(v.to_string())))
        }
    };
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TOML value")
    }

    scalars_kept_as!(std::convert::identity);

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<At<Raw>>()? {
            items.push(item);
        }
        Ok(Raw::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        match VisitMap::next_key_seed(&mut map)? {
            Some(VisitMap::Datetime(d)) => Ok(Raw::Datetime(d)),
            Some(VisitMap::Key(_)) => {
                map.next_value::<IgnoredAny>()?;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Raw::Table)
            }
            None => Ok(Raw::Table),
        }
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

/// A TOML table read as `T`, or the date-time that TOML hands over as a
/// table of one private key.
fn table_or_datetime<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    mut map: A,
) -> Result<Result<T, toml::value::Datetime>, A::Error> {
    let first = match VisitMap::next_key_seed(&mut map)? {
        Some(VisitMap::Datetime(d)) => return Ok(Err(d)),
        Some(VisitMap::Key(k)) => Some(k),
        None => None,
    };
    T::deserialize(MapAccessDeserializer::new(Prepend { first, map })).map(Ok)
}

/// A map whose first key was already read: that key, then the rest.
struct Prepend<'de, A> {
    first: Option<Cow<'de, str>>,
    map: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Prepend<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.first.take() {
            Some(k) => seed
                .deserialize(de::value::CowStrDeserializer::new(k))
                .map(Some),
            None => self.map.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A value the schema types as `S`, read as whatever was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Loose<S> {
    /// The value as written, at its place.
    pub at: At<Raw>,
    schema: PhantomData<S>,
}

impl<S> Loose<S> {
    /// The value as written.
    pub fn raw(&self) -> &Raw {
        &self.at.value
    }

    /// Where it is written.
    pub fn span(&self) -> Range<usize> {
        self.at.span.clone()
    }
}

impl<S> std::ops::Deref for Loose<S> {
    type Target = At<Raw>;

    fn deref(&self) -> &At<Raw> {
        &self.at
    }
}

impl<'de, S> Deserialize<'de> for Loose<S> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Loose {
            at: At::deserialize(d)?,
            schema: PhantomData,
        })
    }
}

/// A table read as `T`, or any other value as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape<T> {
    /// A table.
    Table(T),
    /// Not a table: kept for the checks to read or refuse.
    Value(Raw),
}

struct ShapeVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ShapeVisitor<T> {
    type Value = Shape<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TOML value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Shape<T>, A::Error> {
        Ok(match table_or_datetime::<T, A>(map)? {
            Ok(t) => Shape::Table(t),
            Err(d) => Shape::Value(Raw::Datetime(d)),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Shape<T>, A::Error> {
        RawVisitor.visit_seq(seq).map(Shape::Value)
    }

    scalars_kept_as!(Shape::Value);
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Shape<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor(PhantomData))
    }
}

/// A table read as `T` (or another value kept raw), at its place; the
/// schema types it as `S` (`T` itself, or the alternatives it is one
/// of).
#[derive(Debug, Clone, PartialEq)]
pub struct Tab<T, S = T> {
    /// The value, at its place.
    pub at: At<Shape<T>>,
    schema: PhantomData<S>,
}

impl<T, S> Tab<T, S> {
    /// Where it is written.
    pub fn span(&self) -> Range<usize> {
        self.at.span.clone()
    }

    /// The table, or the other value written instead.
    pub fn shape(&self) -> &Shape<T> {
        &self.at.value
    }
}

impl<'de, T: Deserialize<'de>, S> Deserialize<'de> for Tab<T, S> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Tab {
            at: At::deserialize(d)?,
            schema: PhantomData,
        })
    }
}

/// An array of tables (`[[fields]]`), each read as `T`, or one table
/// where a single one may stand for the array (`when = { ... }`), or
/// another value kept raw; the schema types it as an array of `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct Items<T> {
    /// The value, at its place.
    pub at: At<ItemsShape<T>>,
}

/// What [`Items`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemsShape<T> {
    /// An array, each item a table or not.
    Array(Vec<At<Shape<T>>>),
    /// One table.
    One(Box<T>),
    /// Neither an array nor a table.
    Value(Raw),
}

impl<T> Items<T> {
    /// Where it is written.
    pub fn span(&self) -> Range<usize> {
        self.at.span.clone()
    }
}

struct ItemsVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ItemsVisitor<T> {
    type Value = ItemsShape<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TOML value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ItemsShape<T>, A::Error> {
        Vec::<At<Shape<T>>>::deserialize(SeqAccessDeserializer::new(seq)).map(ItemsShape::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ItemsShape<T>, A::Error> {
        Ok(match table_or_datetime::<T, A>(map)? {
            Ok(t) => ItemsShape::One(Box::new(t)),
            Err(d) => ItemsShape::Value(Raw::Datetime(d)),
        })
    }

    scalars_kept_as!(ItemsShape::Value);
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Items<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Inner<T>(ItemsShape<T>);
        impl<'de, T: Deserialize<'de>> Deserialize<'de> for Inner<T> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(ItemsVisitor(PhantomData)).map(Inner)
            }
        }
        let at = At::<Inner<T>>::deserialize(d)?;
        Ok(Items {
            at: At {
                span: at.span,
                value: at.value.0,
            },
        })
    }
}

/// The schema of a wrapper: the schema of the type it stands for (its
/// values are read more leniently than the schema says).
macro_rules! schema_of {
    ($($wrapper:ty => $schema:ty, [$($g:tt)*];)*) => {$(
        impl<$($g)*> JsonSchema for $wrapper {
            fn inline_schema() -> bool {
                <$schema>::inline_schema()
            }

            fn schema_name() -> Cow<'static, str> {
                <$schema>::schema_name()
            }

            fn schema_id() -> Cow<'static, str> {
                <$schema>::schema_id()
            }

            fn json_schema(generator: &mut SchemaGenerator) -> Schema {
                <$schema>::json_schema(generator)
            }
        }
    )*};
}

schema_of! {
    At<T> => T, [T: JsonSchema];
    Loose<S> => S, [S: JsonSchema];
    Tab<T, S> => S, [T, S: JsonSchema];
    Items<T> => Vec<T>, [T: JsonSchema];
}
