//! Joining Parquet files of one schema into one file without decoding:
//! every row group of every part, in order, its column chunks' bytes
//! copied as they are and their metadata (statistics, page indexes)
//! moved to the new offsets, and their Bloom filters kept. A writer that
//! encodes key ranges on several
//! threads into parts of its own, and then joins them, gives one file at
//! the cost of one sequential copy.

use std::{fs::File, io::Write, sync::Arc};

use parquet::{
    arrow::arrow_reader::ArrowReaderOptions,
    column::writer::ColumnCloseResult,
    file::{
        metadata::PageIndexPolicy,
        properties::{EnabledStatistics, WriterProperties},
        writer::SerializedFileWriter,
    },
};

use crate::{Error, read};

/// Writes the row groups of `parts` (Parquet files written with one
/// schema, its Arrow schema and key-value metadata taken from the first)
/// to `out`, in order, and returns it after the footer.
///
/// # Errors
///
/// [`Error::InvalidConfig`] for no parts or parts of different schemas;
/// [`Error::Parquet`] and IO errors from reading the parts or writing.
pub fn concat_files<W: Write + Send>(parts: &[std::path::PathBuf], out: W) -> Result<W, Error> {
    let Some(first) = parts.first() else {
        return Err(Error::InvalidConfig("no Parquet files to join".into()));
    };
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    type Reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder<File>;
    let open = |p: &std::path::Path| -> Result<(File, Reader), Error> {
        let file =
            File::open(p).map_err(|e| Error::InvalidConfig(format!("{}: {e}", p.display())))?;
        let reader = read::open(
            file.try_clone()
                .map_err(|e| Error::InvalidConfig(format!("{}: {e}", p.display())))?,
            options.clone(),
        )
        .map_err(|e| Error::InvalidConfig(format!("{}: {e}", p.display())))?;
        Ok((file, reader))
    };
    let head = open(first)?.1.metadata().clone();
    let schema = head.file_metadata().schema_descr_ptr();
    // The parts' own settings decide what their chunks hold; these only
    // say what the joined footer records beside them.
    let props = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_key_value_metadata(head.file_metadata().key_value_metadata().cloned())
        .build();
    let mut writer = SerializedFileWriter::new(out, schema.root_schema_ptr(), Arc::new(props))?;
    for part in parts {
        let (file, reader) = open(part)?;
        let md = reader.metadata().clone();
        if md.file_metadata().schema_descr().root_schema() != schema.root_schema() {
            return Err(Error::InvalidConfig(format!(
                "{} has a different schema from {}",
                part.display(),
                first.display()
            )));
        }
        for (g, rg) in md.row_groups().iter().enumerate() {
            let index = md.page_index_for_row_group(g);
            let mut out_rg = writer.next_row_group()?;
            for (c, col) in rg.columns().iter().enumerate() {
                let bloom_filter = reader.get_row_group_column_bloom_filter(g, c)?;
                let close = ColumnCloseResult {
                    bytes_written: col.compressed_size().max(0) as u64,
                    rows_written: rg.num_rows().max(0) as u64,
                    metadata: col.clone(),
                    bloom_filter,
                    column_index: index.column_index(c).cloned(),
                    offset_index: index.offset_index(c).cloned(),
                };
                out_rg.append_column(&file, close)?;
            }
            out_rg.close()?;
        }
    }
    Ok(writer.into_inner()?)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{
        ArrayRef, Int64Array, ListArray, RecordBatch, StringArray, types::Int32Type,
    };
    use parquet::{
        arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder},
        file::metadata::PageIndexPolicy,
        file::properties::WriterProperties,
    };
    use strata_testkit::readback::rows_as_text;

    use super::concat_files;
    use crate::writer::ParquetWriter;

    /// `n` rows from `from`: an id, a string with nulls, a list of ints.
    fn batch(from: i64, n: i64) -> RecordBatch {
        let ids = Int64Array::from_iter_values(from..from + n);
        let s =
            StringArray::from_iter((from..from + n).map(|i| (i % 5 != 0).then(|| format!("v{i}"))));
        let l = ListArray::from_iter_primitive::<Int32Type, _, _>((from..from + n).map(|i| {
            (i % 7 != 0).then(|| {
                (0..(i % 4) as i32)
                    .map(|k| Some(k + i as i32))
                    .collect::<Vec<_>>()
            })
        }));
        RecordBatch::try_from_iter([
            ("id", Arc::new(ids) as ArrayRef),
            ("s", Arc::new(s) as ArrayRef),
            ("l", Arc::new(l) as ArrayRef),
        ])
        .unwrap()
    }

    /// Parts written with row groups of different sizes, through the
    /// parallel and the gathering paths, join into one file with the
    /// parts' rows in order, every row group, the Arrow schema, page
    /// indexes that still point at the pages, and Bloom filters.
    #[test]
    fn joined_parts_read_back_as_their_concatenation() {
        let dir = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        let mut want = Vec::new();
        let mut groups = 0;
        for (p, (rows, group)) in [(10_000i64, 3_000usize), (5, 2), (9_000, 9_000)]
            .iter()
            .enumerate()
        {
            let b = batch(p as i64 * 100_000, *rows);
            let path = dir.path().join(format!("p{p}.parquet"));
            let props = WriterProperties::builder()
                .set_max_row_group_row_count(Some(*group))
                .set_bloom_filter_enabled(true)
                .build();
            let mut w =
                ParquetWriter::try_new(std::fs::File::create(&path).unwrap(), b.schema(), props)
                    .unwrap();
            w.write(&b.slice(0, b.num_rows() / 2)).unwrap();
            let rest: Vec<(usize, usize)> =
                (b.num_rows() / 2..b.num_rows()).map(|r| (0, r)).collect();
            w.write_gather_auto(std::slice::from_ref(&b), &rest)
                .unwrap();
            w.finish().unwrap();
            groups += (*rows as usize).div_ceil(*group);
            want.push(b);
            paths.push(path);
        }
        let out = dir.path().join("joined.parquet");
        concat_files(&paths, std::fs::File::create(&out).unwrap()).unwrap();
        let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
        let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(
            std::fs::File::open(&out).unwrap(),
            options,
        )
        .unwrap();
        assert_eq!(builder.metadata().num_row_groups(), groups);
        assert_eq!(builder.schema().fields(), want[0].schema().fields());
        let index = builder.metadata().page_index_for_row_group(groups - 1);
        assert!(index.offset_index(0).is_some());
        // The parts' Bloom filters come along: the last row group's finds
        // the last part's last id.
        let bloom = builder
            .get_row_group_column_bloom_filter(groups - 1, 0)
            .unwrap()
            .expect("a Bloom filter");
        assert!(bloom.check(&(200_000i64 + 8_999)));
        // A read that skips by the offset index finds the right rows.
        let selection = parquet::arrow::arrow_reader::RowSelection::from(vec![
            parquet::arrow::arrow_reader::RowSelector::skip(10_004),
            parquet::arrow::arrow_reader::RowSelector::select(3),
        ]);
        let got: Vec<RecordBatch> = builder
            .with_row_selection(selection)
            .build()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let ids: Vec<i64> = got
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect();
        assert_eq!(ids, [100_004, 200_000, 200_001]);
        let all: Vec<RecordBatch> =
            ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&out).unwrap())
                .unwrap()
                .build()
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        assert_eq!(rows_as_text(&all).unwrap(), rows_as_text(&want).unwrap());

        // Parts of different schemas are refused.
        let other = dir.path().join("other.parquet");
        let b = batch(0, 3).project(&[0, 1]).unwrap();
        let mut w = ParquetWriter::try_new(
            std::fs::File::create(&other).unwrap(),
            b.schema(),
            WriterProperties::default(),
        )
        .unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        let e = concat_files(&[paths[0].clone(), other], Vec::new()).unwrap_err();
        assert!(e.to_string().contains("different schema"), "{e}");
        assert!(concat_files(&[], Vec::new()).is_err());
    }
}
