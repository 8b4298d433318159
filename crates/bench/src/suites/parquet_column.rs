//! Seed 002's Int64 column matrix: parquet-rs at the column level and at
//! the Arrow level, side by side with Arrow C++ through pyarrow when it is
//! installed.
//!
//! As Arrow C++'s `column_io_benchmark`: one INT64 column, REQUIRED,
//! OPTIONAL (no nulls) or REPEATED (one-element lists; at the column level
//! a top-level `repeated int64`, at the Arrow level `List<Int64>`), PLAIN
//! encoding, no dictionary, statistics on, data page v1, 20,000 rows per
//! page, codec none, snappy, lz4_raw or zstd level 1.
//!
//! - **Writes**: 1,048,576 values uniform in 0..=1,000,000 (SplitMix64,
//!   seed 1337), one whole column chunk (and the file footer) per
//!   iteration.
//! - **Reads**: (values, batch) of (1024, 16), (1024, 1024) and
//!   (65536, 1024), every value read in batches of that size. The values
//!   are the constant 128 for uncompressed reads, as in C++, and random for
//!   codecs: constant pages make codecs degenerate (ZSTD compresses a page
//!   of 128s 100x better after the level bytes of a REPEATED page).
//! - **Bytes** as the C++ benchmark counts them: 8 per value, plus 2 for
//!   definition levels unless REQUIRED, plus 2 for repetition levels when
//!   REPEATED; rates are MiB/s of wall time here (C++ divides by CPU
//!   time; both times are in the report).
//!
//! Small cases repeat their work inside one timed iteration until it
//! takes about 20 ms, so that every sample is far above the clock's
//! resolution; samples are reported per repetition.

use std::hint::black_box;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, ListArray, RecordBatch};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::data_type::Int64Type;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use super::common::{expect_count, peer_body, peer_timing, python_peer, repeated};
use crate::{Case, Config, Error, Size, Unit, case_err};

const PEER: &str = include_str!("../../python/parquet_column_peer.py");
const PEER_SUBJECT: &str = "pyarrow (Arrow C++)";

/// Each timed iteration repeats small work until it takes about this long.
const MIN_ITERATION_S: f64 = 0.02;

/// The three repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repetition {
    /// No levels.
    Required,
    /// Definition levels (all 1).
    Optional,
    /// Definition and repetition levels (one-element lists).
    Repeated,
}

impl Repetition {
    const ALL: [Repetition; 3] = [
        Repetition::Required,
        Repetition::Optional,
        Repetition::Repeated,
    ];

    fn name(self) -> &'static str {
        match self {
            Repetition::Required => "REQUIRED",
            Repetition::Optional => "OPTIONAL",
            Repetition::Repeated => "REPEATED",
        }
    }

    /// Bytes per value as the C++ benchmark counts them.
    pub fn bytes_per_value(self) -> u64 {
        match self {
            Repetition::Required => 8,
            Repetition::Optional => 10,
            Repetition::Repeated => 12,
        }
    }

    fn message(self) -> String {
        let r = match self {
            Repetition::Required => "required",
            Repetition::Optional => "optional",
            Repetition::Repeated => "repeated",
        };
        format!("message schema {{ {r} int64 v; }}")
    }

    fn levels(self) -> (bool, bool) {
        (self != Repetition::Required, self == Repetition::Repeated)
    }
}

/// The codecs, with their report names.
pub fn codecs() -> [(&'static str, Compression); 4] {
    [
        ("none", Compression::UNCOMPRESSED),
        ("snappy", Compression::SNAPPY),
        ("lz4_raw", Compression::LZ4_RAW),
        ("zstd(1)", Compression::ZSTD(ZstdLevel::default())),
    ]
}

/// The writer settings of the matrix.
pub fn properties(codec: Compression) -> Arc<WriterProperties> {
    Arc::new(
        WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_compression(codec)
            .set_encoding(Encoding::PLAIN)
            .set_dictionary_enabled(false)
            .set_data_page_row_count_limit(20_000)
            .build(),
    )
}

/// `n` values uniform in 0..=1,000,000 from SplitMix64 seeded with 1337.
pub fn random_values(n: usize) -> Vec<i64> {
    let mut r = strata_gen::rng::RowRng::seeded(1337);
    (0..n)
        .map(|_| ((r.next_u64() >> 11) % 1_000_001) as i64)
        .collect()
}

/// Writes `values` through the column API into an in-memory file.
pub fn write_column(
    values: &[i64],
    rep: Repetition,
    props: &Arc<WriterProperties>,
) -> Result<Vec<u8>, Error> {
    let schema = Arc::new(parse_message_type(&rep.message()).map_err(case_err)?);
    let mut w = SerializedFileWriter::new(Vec::new(), schema, props.clone()).map_err(case_err)?;
    let mut rg = w.next_row_group().map_err(case_err)?;
    let mut col = rg
        .next_column()
        .map_err(case_err)?
        .ok_or_else(|| Error::Case("no column to write".into()))?;
    let (def, rep_levels) = rep.levels();
    let ones = def.then(|| vec![1i16; values.len()]);
    let zeros = rep_levels.then(|| vec![0i16; values.len()]);
    col.typed::<Int64Type>()
        .write_batch(values, ones.as_deref(), zeros.as_deref())
        .map_err(case_err)?;
    col.close().map_err(case_err)?;
    rg.close().map_err(case_err)?;
    w.into_inner().map_err(case_err)
}

fn arrow_batch(values: &[i64], rep: Repetition) -> Result<RecordBatch, Error> {
    let ints = Arc::new(Int64Array::from(values.to_vec())) as ArrayRef;
    let (field, array) = match rep {
        Repetition::Required => (Field::new("v", DataType::Int64, false), ints),
        Repetition::Optional => (Field::new("v", DataType::Int64, true), ints),
        Repetition::Repeated => {
            let item = Arc::new(Field::new("item", DataType::Int64, false));
            let offsets = OffsetBuffer::new(ScalarBuffer::from(
                (0..=values.len() as i32).collect::<Vec<i32>>(),
            ));
            let list = ListArray::try_new(item.clone(), offsets, ints, None).map_err(case_err)?;
            (
                Field::new("v", DataType::List(item), false),
                Arc::new(list) as ArrayRef,
            )
        }
    };
    RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![array]).map_err(case_err)
}

/// Writes `batch` with parquet's `ArrowWriter` into memory.
fn write_arrow(batch: &RecordBatch, props: &Arc<WriterProperties>) -> Result<Vec<u8>, Error> {
    let mut w = ArrowWriter::try_new(Vec::new(), batch.schema(), Some((**props).clone()))
        .map_err(case_err)?;
    w.write(batch).map_err(case_err)?;
    w.into_inner().map_err(case_err)
}

/// Reads every value of the file's one column in batches of `batch` with
/// the column API; returns the values read.
fn read_column(
    reader: &SerializedFileReader<Bytes>,
    rep: Repetition,
    batch: usize,
) -> Result<usize, Error> {
    let rg = reader.get_row_group(0).map_err(case_err)?;
    let col = rg.get_column_reader(0).map_err(case_err)?;
    let mut r = parquet::column::reader::get_typed_column_reader::<Int64Type>(col);
    let (def, rep_levels) = rep.levels();
    let mut values: Vec<i64> = Vec::with_capacity(batch);
    let mut d: Vec<i16> = Vec::with_capacity(batch);
    let mut rl: Vec<i16> = Vec::with_capacity(batch);
    let mut total = 0;
    loop {
        values.clear();
        d.clear();
        rl.clear();
        let (records, n, _) = r
            .read_records(
                batch,
                def.then_some(&mut d),
                rep_levels.then_some(&mut rl),
                &mut values,
            )
            .map_err(case_err)?;
        if records == 0 {
            break;
        }
        black_box(&values);
        total += n;
    }
    Ok(total)
}

/// Reads the file with parquet's Arrow reader in batches of `batch`.
fn read_arrow(data: &Bytes, meta: &ArrowReaderMetadata, batch: usize) -> Result<usize, Error> {
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(data.clone(), meta.clone())
        .with_batch_size(batch)
        .build()
        .map_err(case_err)?;
    let mut rows = 0;
    for b in reader {
        rows += black_box(b.map_err(case_err)?).num_rows();
    }
    Ok(rows)
}

/// A case that repeats `f` to at least [`MIN_ITERATION_S`] per iteration.
fn case(
    cfg: &Config,
    name: &str,
    subject: &str,
    bytes: u64,
    f: impl FnMut() -> Result<(), Error> + 'static,
) -> Result<Case, Error> {
    repeated(
        cfg,
        name,
        subject,
        Unit::Bytes,
        bytes as f64,
        MIN_ITERATION_S,
        f,
    )
}

/// The pyarrow case of `name`; its samples come from the peer's reply.
fn peer_case(name: String, bytes: u64) -> Case {
    Case {
        name,
        subject: PEER_SUBJECT.into(),
        unit: Unit::Bytes,
        work: bytes as f64,
        repeats: 1,
        body: crate::Body::Unavailable("the peer did not run".into()),
    }
}

/// The read shapes: (values, batch).
pub fn read_shapes(size: Size) -> Vec<(usize, usize)> {
    match size {
        Size::Tiny => vec![(1024, 16), (1024, 1024), (4096, 1024)],
        Size::Full => vec![(1024, 16), (1024, 1024), (65536, 1024)],
    }
}

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let n_write = match cfg.size {
        Size::Tiny => 16_384,
        Size::Full => 1_048_576,
    };
    let dir = tempfile::tempdir().map_err(case_err)?;
    let write_values = Arc::new(random_values(n_write));
    let values_file = dir.path().join("write-values.i64");
    let raw: Vec<u8> = write_values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&values_file, raw).map_err(case_err)?;

    let mut out = vec![];
    let mut peer_writes = vec![];
    for rep in Repetition::ALL {
        for (cname, codec) in codecs() {
            let name = format!("write {n_write}/{}/{cname}", rep.name());
            let bytes = n_write as u64 * rep.bytes_per_value();
            let props = properties(codec);
            let (v, p) = (write_values.clone(), props.clone());
            out.push(case(cfg, &name, "parquet-rs column", bytes, move || {
                black_box(write_column(&v, rep, &p)?);
                Ok(())
            })?);
            let batch = arrow_batch(&write_values, rep)?;
            out.push(case(cfg, &name, "parquet-rs arrow", bytes, move || {
                black_box(write_arrow(&batch, &props)?);
                Ok(())
            })?);
            peer_writes.push(serde_json::json!({
                "name": name, "repetition": rep.name(), "codec": cname, "bytes": bytes,
            }));
            out.push(peer_case(name, bytes));
        }
    }

    let mut peer_reads = vec![];
    for (n, batch) in read_shapes(cfg.size) {
        for rep in Repetition::ALL {
            for (cname, codec) in codecs() {
                let values = if cname == "none" {
                    vec![128i64; n]
                } else {
                    random_values(n)
                };
                let file = Bytes::from(write_column(&values, rep, &properties(codec))?);
                let path = dir
                    .path()
                    .join(format!("read-{n}-{}-{cname}.parquet", rep.name()));
                std::fs::write(&path, &file).map_err(case_err)?;
                let name = format!("read {n}/{batch}/{}/{cname}", rep.name());
                let bytes = n as u64 * rep.bytes_per_value();
                let reader = Arc::new(SerializedFileReader::new(file.clone()).map_err(case_err)?);
                out.push(case(cfg, &name, "parquet-rs column", bytes, move || {
                    expect_count(read_column(&reader, rep, batch)?, n)
                })?);
                let meta =
                    ArrowReaderMetadata::load(&file, Default::default()).map_err(case_err)?;
                out.push(case(cfg, &name, "parquet-rs arrow", bytes, move || {
                    expect_count(read_arrow(&file, &meta, batch)?, n)
                })?);
                peer_reads.push(serde_json::json!({
                    "name": name, "path": path.display().to_string(), "batch": batch,
                    "values": n, "bytes": bytes,
                }));
                out.push(peer_case(name, bytes));
            }
        }
    }

    // The peer measures everything in one process, per repetition as
    // this side reports.
    let mut request = peer_timing(cfg);
    request["values_file"] = values_file.display().to_string().into();
    request["n_write"] = n_write.into();
    request["writes"] = peer_writes.into();
    request["reads"] = peer_reads.into();
    request["min_iteration_s"] = MIN_ITERATION_S.into();
    let names: Vec<String> = out
        .iter()
        .filter(|c| c.subject == PEER_SUBJECT)
        .map(|c| c.name.clone())
        .collect();
    let reply = python_peer(cfg, PEER, &request, PEER_SUBJECT, &names);
    for c in out.iter_mut().filter(|c| c.subject == PEER_SUBJECT) {
        c.body = peer_body(&reply, &c.name);
    }
    drop(dir);
    Ok(out)
}
