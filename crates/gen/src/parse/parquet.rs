//! `parquet = { ... }`: a table's or a field's Parquet settings, read and
//! checked, then handed down to every leaf (a field's own over its
//! parent's, over the table's), each leaf's encoding checked against its
//! type.

use arrow_schema::DataType;

use super::reader::P;
use crate::model::document::{self as doc, Tab};
use crate::model::{
    Field, Kind, ParquetCodec, ParquetColumn, ParquetEncoding, ParquetStatistics, SpecError,
};

/// The keys of `parquet = { ... }`.
const KEYS: [&str; 8] = [
    "compression",
    "level",
    "encoding",
    "dictionary",
    "statistics",
    "bloom_filter",
    "page_index",
    "data_page_version",
];

impl P<'_> {
    /// The settings written at `t` (none when absent).
    pub(super) fn parquet_column(
        &self,
        t: Option<&Tab<doc::ParquetColumn>>,
        f: Option<&str>,
    ) -> Result<ParquetColumn, SpecError> {
        let Some(t) = t else {
            return Ok(ParquetColumn::default());
        };
        let pt = self.params(&t.at, f, "`parquet`", &KEYS)?;
        let choice = |v: &Option<doc::Loose<String>>, key: &str, options: &[&str]| {
            v.as_ref()
                .map(|v| {
                    let s = self.string(v, f, key)?;
                    options.iter().position(|o| *o == s).ok_or_else(|| {
                        self.err(
                            v.span(),
                            f,
                            format!(
                                "`parquet.{key}` = {s:?}: expected one of {}",
                                options.join(", ")
                            ),
                        )
                    })
                })
                .transpose()
        };
        let level = pt
            .level
            .as_ref()
            .map(|l| {
                let n = self.integer(l, f, "level")?;
                if !(1..=22).contains(&n) {
                    return Err(self.err(
                        l.span(),
                        f,
                        format!("`parquet.level` = {n}: zstd's levels are 1 to 22"),
                    ));
                }
                Ok(n as i32)
            })
            .transpose()?;
        let compression = match (
            choice(
                &pt.compression,
                "compression",
                &["none", "snappy", "lz4", "zstd"],
            )?,
            level,
        ) {
            (Some(3), level) => Some(ParquetCodec::Zstd(level.unwrap_or(1))),
            (_, Some(_)) => {
                let at = pt.level.as_ref().map_or(t.span(), |l| l.span());
                return Err(self.err(
                    at,
                    f,
                    "`parquet.level` is zstd's; give `compression = \"zstd\"` with it",
                ));
            }
            (Some(0), None) => Some(ParquetCodec::None),
            (Some(1), None) => Some(ParquetCodec::Snappy),
            (Some(_), None) => Some(ParquetCodec::Lz4),
            (None, None) => None,
        };
        let encoding = choice(
            &pt.encoding,
            "encoding",
            &[
                "plain",
                "delta_binary_packed",
                "byte_stream_split",
                "delta_length_byte_array",
                "delta_byte_array",
            ],
        )?
        .map(|i| {
            [
                ParquetEncoding::Plain,
                ParquetEncoding::DeltaBinaryPacked,
                ParquetEncoding::ByteStreamSplit,
                ParquetEncoding::DeltaLengthByteArray,
                ParquetEncoding::DeltaByteArray,
            ][i]
        });
        let dictionary = pt
            .dictionary
            .as_ref()
            .map(|d| self.boolean(d, f, "dictionary"))
            .transpose()?;
        let mut statistics =
            choice(&pt.statistics, "statistics", &["none", "chunk", "page"])?.map(|i| {
                [
                    ParquetStatistics::None,
                    ParquetStatistics::Chunk,
                    ParquetStatistics::Page,
                ][i]
            });
        if let Some(p) = &pt.page_index {
            match (self.boolean(p, f, "page_index")?, statistics) {
                (true, Some(ParquetStatistics::None | ParquetStatistics::Chunk)) => {
                    return Err(self.err(
                        p.span(),
                        f,
                        "`parquet.page_index = true` needs page statistics; drop `statistics` or make it \"page\"",
                    ));
                }
                (true, _) => statistics = Some(ParquetStatistics::Page),
                (false, Some(ParquetStatistics::None)) => {}
                (false, _) => statistics = Some(ParquetStatistics::Chunk),
            }
        }
        let bloom_filter = match &pt.bloom_filter {
            None => None,
            Some(b) => {
                let bt = self.params(&b.at, f, "`parquet.bloom_filter`", &["ndv", "fpp"])?;
                let ndv = match &bt.ndv {
                    Some(n) => {
                        let n = self.integer(n, f, "ndv")?;
                        if !(1..=i128::from(u32::MAX)).contains(&n) {
                            return Err(self.err(
                                b.span(),
                                f,
                                format!("`parquet.bloom_filter.ndv` = {n}: a count of distinct values from 1 to {}", u32::MAX),
                            ));
                        }
                        n as u64
                    }
                    None => 1_000_000,
                };
                let fpp = match &bt.fpp {
                    Some(x) => {
                        let x = self.number(x, f, "fpp")?;
                        if !(x > 0.0 && x < 1.0) {
                            return Err(self.err(
                                b.span(),
                                f,
                                format!(
                                    "`parquet.bloom_filter.fpp` = {x}: a rate above 0 and below 1"
                                ),
                            ));
                        }
                        x
                    }
                    None => 0.05,
                };
                Some((ndv, fpp))
            }
        };
        let data_page_v2 = match &pt.data_page_version {
            None => None,
            Some(v) => {
                if f.is_some() {
                    return Err(self.err(
                        v.span(),
                        f,
                        "`parquet.data_page_version` is a whole file's: set it on the spec, the dataset or the table",
                    ));
                }
                match self.integer(v, f, "data_page_version")? {
                    1 => Some(false),
                    2 => Some(true),
                    n => {
                        return Err(self.err(
                            v.span(),
                            f,
                            format!("`parquet.data_page_version` = {n}: expected 1 or 2"),
                        ));
                    }
                }
            }
        };
        Ok(ParquetColumn {
            compression,
            encoding,
            dictionary,
            statistics,
            bloom_filter,
            data_page_v2,
        })
    }

    /// A table's settings `outer` handed down to `fields` and their
    /// children (each field's own over its parent's), and each leaf's
    /// encoding checked against its type.
    pub(super) fn hand_down_parquet(
        &self,
        outer: &ParquetColumn,
        fields: &mut [Field],
    ) -> Result<(), SpecError> {
        hand_down(self, outer, fields)
    }
}

fn hand_down(p: &P<'_>, outer: &ParquetColumn, fields: &mut [Field]) -> Result<(), SpecError> {
    for f in fields {
        f.parquet = f.parquet.over(outer);
        let own = f.parquet.clone();
        match &mut f.kind {
            Kind::Scalar { data_type, .. } => check_encoding(p, f.line, &f.path, &own, data_type)?,
            Kind::Struct(children) => hand_down(p, &own, children)?,
            Kind::List { item, .. } => hand_down(p, &own, std::slice::from_mut(item))?,
            Kind::Map { key, value, .. } => {
                hand_down(p, &own, std::slice::from_mut(key))?;
                hand_down(p, &own, std::slice::from_mut(value))?;
            }
        }
    }
    Ok(())
}

/// Refuses an encoding the leaf's type cannot take.
fn check_encoding(
    p: &P<'_>,
    line: usize,
    path: &str,
    settings: &ParquetColumn,
    t: &DataType,
) -> Result<(), SpecError> {
    let Some(e) = settings.encoding else {
        return Ok(());
    };
    let ok = match e {
        ParquetEncoding::Plain => true,
        ParquetEncoding::ByteStreamSplit if matches!(t, DataType::Float32 | DataType::Float64) => {
            true
        }
        // Integer-like leaves, stored as `INT32` or `INT64`.
        ParquetEncoding::DeltaBinaryPacked | ParquetEncoding::ByteStreamSplit => {
            t.is_integer()
                || matches!(
                    t,
                    DataType::Date32
                        | DataType::Timestamp(..)
                        | DataType::Time32(_)
                        | DataType::Time64(_)
                        | DataType::Duration(_)
                )
                || matches!(t, DataType::Decimal128(p, _) if *p <= 18)
        }
        ParquetEncoding::DeltaLengthByteArray | ParquetEncoding::DeltaByteArray => matches!(
            t,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
        ),
    };
    if ok {
        return Ok(());
    }
    let (name, takes) = match e {
        ParquetEncoding::Plain => ("plain", ""),
        ParquetEncoding::DeltaBinaryPacked => (
            "delta_binary_packed",
            "integers, dates, times, timestamps and decimals of up to 18 digits",
        ),
        ParquetEncoding::ByteStreamSplit => (
            "byte_stream_split",
            "floats, integers, dates, times, timestamps and decimals of up to 18 digits",
        ),
        ParquetEncoding::DeltaLengthByteArray => (
            "delta_length_byte_array",
            "strings and binary (not dictionaries)",
        ),
        ParquetEncoding::DeltaByteArray => {
            ("delta_byte_array", "strings and binary (not dictionaries)")
        }
    };
    Err(p.err_at(
        line,
        Some(path),
        format!("`parquet.encoding` = \"{name}\" takes {takes}, not {t}"),
    ))
}
