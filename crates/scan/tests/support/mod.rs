//! Test data for the scan tests: seeded random schemas and batches, IPC
//! files written several ways, and sources over them.

#![allow(dead_code)]

use std::{path::Path, sync::Arc};

use arrow::util::data_gen::create_random_array;
use arrow_array::{
    ArrayRef, DictionaryArray, Int32Array, RecordBatch, StringArray, types::Int32Type,
};
use arrow_ipc::{
    CompressionType,
    writer::{FileWriter, IpcWriteOptions},
};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use object_store::{local::LocalFileSystem, path::Path as ObjectPath};
use strata_gen::rng::RowRng;
use strata_parquet::ipc::IpcFileWriter;
use strata_store::source::{FetchOptions, IoStats, Source};

/// A current-thread runtime with timers.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn pick(rng: &mut RowRng, n: usize) -> usize {
    rng.next_below(n as u64) as usize
}

/// The value types random schemas draw from (dictionaries are added
/// separately, since a file keeps one dictionary per column).
pub fn leaf_type(rng: &mut RowRng, depth: u32) -> DataType {
    let leaves = [
        DataType::Int64,
        DataType::Int32,
        DataType::Int8,
        DataType::UInt16,
        DataType::Float64,
        DataType::Float16,
        DataType::Boolean,
        DataType::Utf8,
        DataType::LargeUtf8,
        DataType::Binary,
        DataType::Utf8View,
        DataType::BinaryView,
        DataType::FixedSizeBinary(5),
        DataType::Decimal128(20, 3),
        DataType::Date32,
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        DataType::Null,
    ];
    if depth >= 2 || rng.next_below(3) > 0 {
        return leaves[pick(rng, leaves.len())].clone();
    }
    let child = |rng: &mut RowRng| Arc::new(Field::new("item", leaf_type(rng, depth + 1), true));
    match rng.next_below(4) {
        0 => DataType::List(child(rng)),
        1 => DataType::LargeList(child(rng)),
        2 => DataType::Struct(Fields::from(vec![
            Field::new("a", leaf_type(rng, depth + 1), true),
            Field::new("b", leaf_type(rng, depth + 1), true),
        ])),
        _ => DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(Fields::from(vec![
                    Field::new("key", DataType::Utf8, false),
                    Field::new("value", leaf_type(rng, depth + 1), true),
                ])),
                false,
            )),
            false,
        ),
    }
}

/// A random schema of `n` columns; about one in six is a dictionary of
/// strings.
pub fn random_schema(rng: &mut RowRng, n: usize) -> SchemaRef {
    let fields: Vec<Field> = (0..n)
        .map(|i| {
            let name = format!("c{i}");
            if rng.next_below(6) == 0 {
                Field::new(
                    name,
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                    true,
                )
            } else {
                Field::new(name, leaf_type(rng, 0), true)
            }
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// The dictionary values every batch of a column shares.
pub fn dictionary_values() -> ArrayRef {
    Arc::new(StringArray::from_iter_values(
        (0..37).map(|i| format!("value-{i}-{}", "x".repeat(i % 7))),
    ))
}

/// A random batch of `rows` rows; `nulls` is the null density.
pub fn random_batch(rng: &mut RowRng, schema: &SchemaRef, rows: usize, nulls: f32) -> RecordBatch {
    let cols: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Dictionary(_, _) => {
                let keys: Int32Array = (0..rows)
                    .map(|_| {
                        (rng.next_below(100) as f32 >= nulls * 100.0)
                            .then(|| rng.next_below(37) as i32)
                    })
                    .collect();
                Arc::new(DictionaryArray::<Int32Type>::try_new(keys, dictionary_values()).unwrap())
                    as ArrayRef
            }
            DataType::Null => create_random_array(f, rows, 1.0, 0.5).unwrap(),
            _ => {
                // Vary the data between calls: the generator's seed is fixed.
                let extra = pick(rng, 7);
                let a = create_random_array(f, rows + extra, nulls, 0.5).unwrap();
                a.slice(extra, rows)
            }
        })
        .collect();
    RecordBatch::try_new(schema.clone(), cols).unwrap()
}

/// How a test file is written.
#[derive(Debug, Clone, Copy)]
pub struct Writing {
    /// Buffer compression.
    pub compression: Option<CompressionType>,
    /// Through strata's writer (row counts in the footer) or arrow-rs's.
    pub strata: bool,
}

/// Writes `batches` as an IPC file at `path`.
pub fn write_ipc(path: &Path, schema: &SchemaRef, batches: &[RecordBatch], how: Writing) {
    let opts = IpcWriteOptions::default()
        .try_with_compression(how.compression)
        .unwrap();
    let file = std::fs::File::create(path).unwrap();
    if how.strata {
        let mut w = IpcFileWriter::try_new(file, schema, opts).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    } else {
        let mut w = FileWriter::try_new_with_options(file, schema, opts).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    }
}

/// Reads a whole IPC file with arrow-rs.
pub fn read_ipc_full(path: &Path) -> Vec<RecordBatch> {
    let r =
        arrow_ipc::reader::FileReader::try_new(std::fs::File::open(path).unwrap(), None).unwrap();
    r.map(|b| b.unwrap()).collect()
}

/// A source over a local file, with a range log.
pub fn local_source(rt: &tokio::runtime::Runtime, path: &Path, opts: FetchOptions) -> Source {
    let store = Arc::new(LocalFileSystem::new());
    let p = ObjectPath::from_filesystem_path(path).unwrap();
    rt.block_on(Source::open(store, p, path.display().to_string(), opts))
        .unwrap()
        .with_stats(IoStats::with_log())
}
