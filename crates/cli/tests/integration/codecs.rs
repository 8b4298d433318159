//! Parquet files of every codec other writers use read through `strata
//! scan` (gzip and brotli included).

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use parquet::{
    arrow::ArrowWriter,
    basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel},
    file::properties::WriterProperties,
};

use crate::common::{stderr, strata};

#[test]
fn every_parquet_codec_is_read() {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..3000));
    let names: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..3000).map(|i| format!("name-{}", i % 17)),
    ));
    let batch = RecordBatch::try_from_iter([("id", ids), ("name", names)]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for codec in [
        Compression::GZIP(GzipLevel::default()),
        Compression::BROTLI(BrotliLevel::default()),
        Compression::ZSTD(ZstdLevel::default()),
        Compression::LZ4_RAW,
        Compression::SNAPPY,
        Compression::UNCOMPRESSED,
    ] {
        let path = dir.path().join(format!("{codec:?}.parquet"));
        let props = WriterProperties::builder().set_compression(codec).build();
        let mut w = ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            batch.schema(),
            Some(props),
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let o = strata(
            &["scan", path.to_str().unwrap(), "--columns", "name,id"],
            dir.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{codec:?}: {}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3001, "{codec:?}");
        assert_eq!(lines[0], "name\tid");
        assert_eq!(lines[2999 + 1], "name-7\t2999", "{codec:?}");
    }
}
