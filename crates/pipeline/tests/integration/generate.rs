//! End-to-end tests of the generate pipeline: files written, read back and
//! checked against the preset's specification and against each other.

use std::{collections::HashSet, path::Path};

use arrow_array::{
    Array, DictionaryArray, RecordBatch, StringArray, cast::AsArray, types::UInt8Type,
};
use arrow_schema::DataType;
use strata_gen::BatchGenerator;
use strata_parquet::Compression;
use strata_parquet::Format;
use strata_pipeline::Error;
use strata_pipeline::generate::{GenerateConfig, Part, Summary, generate};
use strata_testkit::readback::{multiset_hash, read_batches, rows_as_text, sequence_hash};

fn config(dir: &Path, records: u64) -> GenerateConfig {
    GenerateConfig {
        target_records: records,
        record_batch_size: 4096,
        num_writers: 2,
        threads: 2,
        row_group_rows: 65_536,
        format: Format::Parquet,
        compression: Compression::None,
        output_dir: dir.to_path_buf(),
        output_filename: "contacts".into(),
        overwrite: false,
        seed: 42,
        encoder: Default::default(),
        page_checksums: true,
        part: Default::default(),
        layout: None,
        field_ids: None,
        row_offset: 0,
    }
}

fn run(cfg: &GenerateConfig) -> (Summary, Vec<RecordBatch>) {
    run_preset("contacts", cfg)
}

fn run_preset(preset: &str, cfg: &GenerateConfig) -> (Summary, Vec<RecordBatch>) {
    let summary = generate(&strata_gen::preset(preset, cfg.seed), cfg, &|_| {}).unwrap();
    let mut batches = Vec::new();
    for f in &summary.files {
        batches.extend(read_batches(&f.path).unwrap());
    }
    (summary, batches)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn schema_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let (_, batches) = run(&config(dir.path(), 1000));
    let schema = batches[0].schema();
    assert_eq!(schema.as_ref(), strata_gen::contacts(42).schema().as_ref());
    let name = schema.field(0);
    assert_eq!(
        (name.name().as_str(), name.data_type(), name.is_nullable()),
        ("name", &DataType::Utf8, true)
    );
    let phones = schema.field(1);
    assert_eq!(phones.name(), "phones");
    assert!(phones.is_nullable());
    let DataType::List(item) = phones.data_type() else {
        panic!("phones is not a list")
    };
    assert_eq!(item.name(), "item");
    assert!(item.is_nullable());
    let DataType::Struct(fields) = item.data_type() else {
        panic!("item is not a struct")
    };
    assert_eq!(fields.len(), 2);
    assert_eq!(fields[0].name(), "number");
    assert_eq!(fields[0].data_type(), &DataType::Utf8);
    assert_eq!(fields[1].name(), "phone_type");
    assert_eq!(
        fields[1].data_type(),
        &DataType::Dictionary(Box::new(DataType::UInt8), Box::new(DataType::Utf8))
    );
    assert!(fields[0].is_nullable() && fields[1].is_nullable());
}

/// Realised shares over 200,000 rows read back from Parquet, each within
/// five standard deviations of the specified probability.
#[test]
fn realised_shares_match_the_specification() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 200_000u64;
    let (summary, batches) = run(&config(dir.path(), rows));
    assert_eq!(summary.records, rows);

    let mut name_nulls = 0u64;
    let mut count_buckets = [0u64; 6];
    let mut entries = 0u64;
    let mut templates = [0u64; 4];
    let mut types = [0u64; 3];
    let mut numbers = HashSet::new();
    let mut first_names = HashSet::new();
    for b in &batches {
        let name = b.column(0).as_string::<i32>();
        name_nulls += name.null_count() as u64;
        for n in name.iter().flatten() {
            let (first, last) = n.split_once(' ').expect("name is 'First Last'");
            assert!(!last.contains(' '));
            first_names.insert(first.to_string());
        }
        let phones = b.column(1).as_list::<i32>();
        for r in 0..phones.len() {
            if phones.is_null(r) {
                count_buckets[0] += 1;
                continue;
            }
            let len = phones.value_length(r) as usize;
            assert!((1..=5).contains(&len), "list of {len}");
            count_buckets[len] += 1;
        }
        let entry = phones.values().as_struct();
        assert_eq!(entry.null_count(), 0, "phone entries are never null");
        let number: &StringArray = entry.column(0).as_string();
        let kind: &DictionaryArray<UInt8Type> = entry.column(1).as_dictionary();
        let kind_values: &StringArray = kind.values().as_string();
        // Only the entries that the (possibly sliced) list array refers to.
        let offsets = phones.value_offsets();
        for i in offsets[0] as usize..offsets[offsets.len() - 1] as usize {
            entries += 1;
            let t = match (number.is_valid(i), kind.is_valid(i)) {
                (true, true) => 0,
                (true, false) => 1,
                (false, true) => 2,
                (false, false) => 3,
            };
            templates[t] += 1;
            if number.is_valid(i) {
                let n = number.value(i);
                assert!(n.starts_with("+91-99-") && n.len() >= 15, "{n}");
                assert!(n[7..].bytes().all(|c| c.is_ascii_digit()), "{n}");
                assert!(numbers.insert(n.to_string()), "duplicate number {n}");
            }
            if kind.is_valid(i) {
                let k = kind.keys().value(i) as usize;
                match kind_values.value(k) {
                    "Mobile" => types[0] += 1,
                    "Work" => types[1] += 1,
                    "Home" => types[2] += 1,
                    other => panic!("unexpected phone_type {other}"),
                }
            }
        }
    }
    let check = |what: &str, got: u64, of: u64, p: f64| {
        let share = got as f64 / of as f64;
        let sigma = (p * (1.0 - p) / of as f64).sqrt();
        assert!(
            (share - p).abs() <= 5.0 * sigma,
            "{what}: {share:.5} of {of}, expected {p} (5 sigma = {:.5})",
            5.0 * sigma
        );
    };
    let n = rows;
    check("null names", name_nulls, n, 0.20);
    check("null phone lists", count_buckets[0], n, 0.40);
    check("one phone", count_buckets[1], n, 0.45);
    check("two phones", count_buckets[2], n, 0.10);
    for &c in &count_buckets[3..] {
        check("3, 4 or 5 phones", c, n, 0.05 / 3.0);
    }
    check("number and type", templates[0], entries, 0.90);
    check("number only", templates[1], entries, 0.05);
    check("type only", templates[2], entries, 0.04);
    check("neither", templates[3], entries, 0.01);
    let typed = types.iter().sum::<u64>();
    check("Mobile", types[0], typed, 0.55);
    check("Work", types[1], typed, 0.35);
    check("Home", types[2], typed, 0.10);
    // The summary's counts agree with what was read back.
    assert_eq!(summary.columns[0].nulls, name_nulls);
    assert_eq!(summary.columns[1].nulls, count_buckets[0]);
    assert_eq!(summary.columns[1].list_values, Some(entries));
    assert_eq!(numbers.len() as u64, templates[0] + templates[1]);
    // Uniform first names over 3,000: nearly all appear in 160k names.
    assert!(
        first_names.len() > 2_900,
        "{} first names",
        first_names.len()
    );
}

fn hashes(cfg: &GenerateConfig) -> (u64, u64) {
    let (_, batches) = run(cfg);
    let mut rows = rows_as_text(&batches).unwrap();
    let seq = sequence_hash(&rows);
    (multiset_hash(&mut rows), seq)
}

#[test]
fn rows_do_not_depend_on_writers_batches_or_threads() {
    let records = 30_011;
    let mut seen = Vec::new();
    for (writers, batch, threads, rg) in [
        (1, 1000, 1, 65_536),
        (3, 4096, 2, 65_536),
        (3, 1000, 3, 5_000),
        (7, 333, 2, 1_024),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(dir.path(), records);
        cfg.num_writers = writers;
        cfg.record_batch_size = batch;
        cfg.threads = threads;
        cfg.row_group_rows = rg;
        seen.push(hashes(&cfg));
    }
    // Same multiset and, since files hold contiguous ranges, the same
    // sequence when the files are read in order.
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:x?}");

    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), records);
    cfg.seed = 43;
    assert_ne!(hashes(&cfg).0, seen[0].0, "another seed gives other rows");
}

/// Parts in order hold exactly the whole run's rows in order, for several
/// part counts; a part's files do not depend on the thread, writer or
/// batch counts; parts share a directory without touching each other.
#[test]
fn parts_together_are_the_whole_run() {
    let records = 20_011;
    let whole = {
        let dir = tempfile::tempdir().unwrap();
        let (_, batches) = run(&config(dir.path(), records));
        rows_as_text(&batches).unwrap()
    };
    for count in [2u64, 3, 7] {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = Vec::new();
        for index in 1..=count {
            let mut cfg = config(dir.path(), records);
            cfg.part = Part { index, count };
            let (summary, batches) = run(&cfg);
            let want = cfg.rows();
            assert_eq!(summary.records, want.end - want.start);
            assert!(
                summary.files.iter().all(|f| f
                    .path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("contacts_part{index}of{count}_"))),
                "{:?}",
                summary.files
            );
            rows.extend(rows_as_text(&batches).unwrap());
        }
        assert_eq!(rows.len(), whole.len(), "{count} parts");
        assert_eq!(sequence_hash(&rows), sequence_hash(&whole), "{count} parts");
        // Every part's files are there, side by side.
        assert_eq!(listing(dir.path()).len(), 2 * count as usize);
    }
    // Part 2 of 3, whatever the threads, writers and batches: same rows.
    let mut seen = Vec::new();
    for (threads, writers, batch) in [(1, 1, 4096), (3, 4, 1000), (2, 2, 333)] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(dir.path(), records);
        cfg.part = Part { index: 2, count: 3 };
        cfg.threads = threads;
        cfg.num_writers = writers;
        cfg.record_batch_size = batch;
        seen.push(hashes(&cfg).1);
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:x?}");
    // Bad parts are refused before anything is written.
    let dir = tempfile::tempdir().unwrap();
    for (index, count) in [(0, 3), (4, 3), (1, 0), (1, records + 1)] {
        let mut cfg = config(dir.path(), records);
        cfg.part = Part { index, count };
        let e = generate(&strata_gen::contacts(42), &cfg, &|_| {}).unwrap_err();
        assert!(e.to_string().contains("--part"), "{index}/{count}: {e}");
    }
    let mut cfg = config(dir.path(), 10);
    cfg.part = Part { index: 1, count: 5 };
    cfg.num_writers = 3;
    let e = generate(&strata_gen::contacts(42), &cfg, &|_| {}).unwrap_err();
    assert!(e.to_string().contains("--num-writers"), "{e}");
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn every_preset_splits_into_exact_parts() {
    // The nested presets (structs of structs, maps, timestamps, `when`
    // cases) take parquet's Arrow writer; parts must still be exact.
    for preset in ["events", "wide-u64"] {
        let records = 9_001;
        let whole = {
            let dir = tempfile::tempdir().unwrap();
            let mut cfg = config(dir.path(), records);
            cfg.output_filename = preset.into();
            let (_, batches) = run_preset(preset, &cfg);
            rows_as_text(&batches).unwrap()
        };
        for count in [2u64, 5] {
            let dir = tempfile::tempdir().unwrap();
            let mut rows = Vec::new();
            for index in 1..=count {
                let mut cfg = config(dir.path(), records);
                cfg.output_filename = preset.into();
                cfg.part = Part { index, count };
                // Threads and writers differ from part to part.
                cfg.threads = 1 + index as usize % 3;
                cfg.num_writers = 1 + index as usize % 2;
                rows.extend(rows_as_text(&run_preset(preset, &cfg).1).unwrap());
            }
            assert_eq!(
                sequence_hash(&rows),
                sequence_hash(&whole),
                "{preset}: {count} parts"
            );
            let mut sorted = whole.clone();
            assert_eq!(
                multiset_hash(&mut rows),
                multiset_hash(&mut sorted),
                "{preset}"
            );
        }
    }
}

#[test]
fn parquet_and_ipc_hold_the_same_rows_under_every_codec() {
    let mut want = None;
    for (format, compression) in [
        (Format::Parquet, Compression::None),
        (Format::Parquet, Compression::Snappy),
        (Format::Parquet, Compression::Lz4),
        (Format::Parquet, Compression::Zstd(3)),
        (Format::Ipc, Compression::None),
        (Format::Ipc, Compression::Lz4),
        (Format::Ipc, Compression::Zstd(1)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(dir.path(), 5_000);
        cfg.format = format;
        cfg.compression = compression;
        cfg.row_group_rows = 1_500;
        let (summary, batches) = run(&cfg);
        assert_eq!(summary.files.len(), 2);
        assert!(summary.files[0].path.extension().unwrap() == format.extension());
        let h = sequence_hash(&rows_as_text(&batches).unwrap());
        assert_eq!(*want.get_or_insert(h), h, "{format} {compression}");
    }
}

#[test]
fn files_hold_contiguous_row_ranges_and_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), 10_000);
    cfg.num_writers = 3;
    cfg.row_group_rows = 1_000;
    let (summary, _) = run(&cfg);
    let rows: Vec<u64> = summary.files.iter().map(|f| f.rows).collect();
    assert_eq!(rows, vec![3333, 3333, 3334]);
    assert_eq!(summary.files[0].groups, 4);
    // File 1 starts at global row 3333: compare with the generator.
    let got = read_batches(&summary.files[1].path).unwrap();
    let want = strata_gen::contacts(42)
        .generate(3333, 3333, &mut Default::default())
        .unwrap();
    assert_eq!(rows_as_text(&got).unwrap(), rows_as_text(&[want]).unwrap());
    let meta = parquet::file::reader::FileReader::metadata(
        &parquet::file::serialized_reader::SerializedFileReader::new(
            std::fs::File::open(&summary.files[0].path).unwrap(),
        )
        .unwrap(),
    )
    .clone();
    assert_eq!(meta.num_row_groups(), 4);
    // Page statistics are on: every column chunk has min/max and indexes.
    for rg in meta.row_groups() {
        for c in rg.columns() {
            assert!(c.statistics().is_some(), "{}", c.column_path());
            assert!(c.column_index_offset().is_some(), "{}", c.column_path());
            assert!(c.offset_index_offset().is_some(), "{}", c.column_path());
        }
    }
    assert_eq!(listing(dir.path()).len(), 3, "no temporaries left");
}

#[test]
fn existing_outputs_are_refused_then_replaced_with_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), 3_000);
    cfg.num_writers = 3;
    run(&cfg);
    let before = std::fs::read(dir.path().join("contacts_0.parquet")).unwrap();

    cfg.num_writers = 2;
    cfg.seed = 7;
    let err = generate(&strata_gen::contacts(7), &cfg, &|_| {}).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Store(strata_store::Error::OutputExists { count: 3, .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("--overwrite"));
    assert_eq!(
        std::fs::read(dir.path().join("contacts_0.parquet")).unwrap(),
        before
    );

    cfg.overwrite = true;
    run(&cfg);
    // The third file of the earlier run is gone: the directory holds one
    // consistent dataset.
    assert_eq!(
        listing(dir.path()),
        vec!["contacts_0.parquet", "contacts_1.parquet"]
    );
    assert_ne!(
        std::fs::read(dir.path().join("contacts_0.parquet")).unwrap(),
        before
    );
}

#[test]
fn bad_settings_are_rejected_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    type Edit = Box<dyn Fn(&mut GenerateConfig)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("--target-records", Box::new(|c| c.target_records = 0)),
        ("--num-writers", Box::new(|c| c.num_writers = 0)),
        ("--num-writers", Box::new(|c| c.num_writers = 20_000)),
        ("--record-batch-size", Box::new(|c| c.record_batch_size = 0)),
        ("--threads", Box::new(|c| c.threads = 0)),
        ("--row-group-rows", Box::new(|c| c.row_group_rows = 0)),
        (
            "--output-filename",
            Box::new(|c| c.output_filename = "a/b".into()),
        ),
        (
            "snappy",
            Box::new(|c| {
                c.format = Format::Ipc;
                c.compression = Compression::Snappy;
            }),
        ),
    ];
    for (flag, edit) in cases {
        let mut cfg = config(&out, 10_000);
        edit(&mut cfg);
        let err = generate(&strata_gen::contacts(1), &cfg, &|_| {}).unwrap_err();
        assert!(err.to_string().contains(flag), "{flag}: {err}");
        assert!(!out.exists(), "{flag}: output directory created");
    }
}

#[test]
fn unwritable_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let cfg = config(&file.join("sub"), 1_000);
    let err = generate(&strata_gen::contacts(1), &cfg, &|_| {}).unwrap_err();
    assert!(
        matches!(err, Error::Store(strata_store::Error::Io { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("plain-file"), "{err}");
    assert_eq!(listing(dir.path()), vec!["plain-file"]);
}

/// strata's direct encoder (used for uncompressed `contacts`) and
/// parquet's Arrow writer give files with the same rows, the same
/// statistics per column chunk, and page indexes that parquet can read.
#[test]
fn direct_encoder_matches_the_arrow_writer() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::file::serialized_reader::ReadOptionsBuilder;
    use strata_pipeline::generate::ParquetEncoder;

    for (rows, batch, rg, compression) in [
        (70_001u64, 4096usize, 65_536usize, Compression::None),
        (5_000, 333, 2_048, Compression::None),
        (1, 1, 1, Compression::None),
        (30_000, 4096, 10_000, Compression::Snappy),
        (30_000, 1000, 30_000, Compression::Lz4),
        (30_000, 8192, 7_000, Compression::Zstd(3)),
    ] {
        let mut texts = Vec::new();
        let mut stats = Vec::new();
        for encoder in [ParquetEncoder::Auto, ParquetEncoder::Arrow] {
            let dir = tempfile::tempdir().unwrap();
            let mut cfg = config(dir.path(), rows);
            cfg.num_writers = 1;
            cfg.record_batch_size = batch;
            cfg.row_group_rows = rg;
            cfg.encoder = encoder;
            cfg.compression = compression;
            let (summary, batches) = run(&cfg);
            texts.push(rows_as_text(&batches).unwrap());
            let options = ReadOptionsBuilder::new().with_page_index().build();
            let reader = SerializedFileReader::new_with_options(
                std::fs::File::open(&summary.files[0].path).unwrap(),
                options,
            )
            .unwrap();
            let meta = reader.metadata();
            let index = meta.page_index().expect("page index");
            let mut s = Vec::new();
            for (g, group) in meta.row_groups().iter().enumerate() {
                for (c, chunk) in group.columns().iter().enumerate() {
                    let st = chunk.statistics().expect("statistics");
                    assert_eq!(chunk.compression_codec(), compression_codec(compression));
                    s.push((
                        g,
                        c,
                        chunk.num_values(),
                        st.min_bytes_opt().map(<[u8]>::to_vec),
                        st.max_bytes_opt().map(<[u8]>::to_vec),
                        st.null_count_opt(),
                    ));
                    // Page row counts add up to the row group's rows.
                    assert!(index.column_index(g, c).is_some(), "column index");
                    let locations = &index
                        .offset_index(g, c)
                        .expect("offset index")
                        .page_locations;
                    assert_eq!(locations[0].first_row_index, 0);
                    assert!(
                        locations
                            .windows(2)
                            .all(|w| w[0].first_row_index < w[1].first_row_index)
                    );
                }
            }
            stats.push(s);
        }
        assert_eq!(texts[0], texts[1], "rows differ for {rows} rows");
        assert_eq!(stats[0], stats[1], "statistics differ for {rows} rows");
    }
}

#[test]
fn sequences_and_floats_take_their_encodings_in_both_encoders() {
    use parquet::basic::Encoding;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use strata_pipeline::generate::ParquetEncoder;

    let rows = 50_000u64;
    let codecs = [Compression::None, Compression::Zstd(1)];
    for (encoder, codec) in [ParquetEncoder::Auto, ParquetEncoder::Arrow]
        .into_iter()
        .flat_map(|e| codecs.map(|c| (e, c)))
    {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(dir.path(), rows);
        cfg.num_writers = 1;
        cfg.row_group_rows = 20_000;
        cfg.output_filename = "events".into();
        cfg.encoder = encoder;
        cfg.compression = codec;
        let (summary, batches) = run_preset("events", &cfg);
        let file = std::fs::File::open(&summary.files[0].path).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        for group in reader.metadata().row_groups() {
            for chunk in group.columns() {
                let path = chunk.column_path().string();
                let has = |e| chunk.encodings().any(|x| x == e);
                let what = format!("{encoder:?} {codec:?} {path}");
                // `event_id` is the preset's one sequence.
                let delta = has(Encoding::DELTA_BINARY_PACKED);
                assert_eq!(delta, path == "event_id", "{what}");
                // Its floats of many values, with a codec.
                let split = has(Encoding::BYTE_STREAM_SPLIT);
                let floats = ["amount", "items.list.item.price"];
                let want = codec != Compression::None && floats.contains(&path.as_str());
                assert_eq!(split, want, "{what}");
                // Its strings of many values, with or without a codec.
                let lengths = has(Encoding::DELTA_LENGTH_BYTE_ARRAY);
                let strings = ["session", "items.list.item.attributes.entries.value"];
                assert_eq!(lengths, strings.contains(&path.as_str()), "{what}");
                if delta || split || lengths {
                    assert!(chunk.dictionary_page_offset().is_none(), "{what}");
                }
            }
        }
        // The files (read back by `run_preset`) hold the generated rows.
        let generated = strata_gen::preset("events", cfg.seed)
            .generate(0, rows as usize, &mut Default::default())
            .unwrap();
        assert_eq!(
            rows_as_text(&batches).unwrap(),
            rows_as_text(&[generated]).unwrap(),
            "{encoder:?} {codec:?}"
        );
        let ids: Vec<i64> = batches
            .iter()
            .flat_map(|b| {
                let c = b.column_by_name("event_id").unwrap();
                c.as_primitive::<arrow_array::types::Int64Type>()
                    .values()
                    .to_vec()
            })
            .collect();
        assert_eq!(ids, (1..=rows as i64).collect::<Vec<_>>(), "{encoder:?}");
    }
}

fn compression_codec(c: Compression) -> parquet::basic::CompressionCodec {
    use parquet::basic::CompressionCodec as C;
    match c {
        Compression::None => C::UNCOMPRESSED,
        Compression::Snappy => C::SNAPPY,
        Compression::Lz4 => C::LZ4_RAW,
        Compression::Zstd(_) => C::ZSTD,
    }
}

/// Reading back a truncated file, or one that is not Parquet or IPC at
/// all, is a clear error.
#[test]
fn readback_of_truncated_files_is_an_error() {
    for format in [Format::Parquet, Format::Ipc] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(dir.path(), 2_000);
        cfg.num_writers = 1;
        cfg.format = format;
        let (summary, _) = run(&cfg);
        let path = &summary.files[0].path;
        let bytes = std::fs::read(path).unwrap();
        for keep in [0, 3, 8, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(path, &bytes[..keep]).unwrap();
            let err = read_batches(path).expect_err("truncated file read");
            assert!(!err.to_string().is_empty());
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.parquet");
    let err = read_batches(&missing).unwrap_err();
    assert!(err.to_string().contains("missing.parquet"), "{err}");
}

/// `--output-dir s3://bucket/prefix`: the same rows as a local run, objects
/// only once complete, existing ones refused without overwrite (against the
/// server `scripts/test` starts; says so and checks nothing without
/// `STRATA_S3_ENDPOINT`).
#[test]
fn generate_writes_to_an_object_store_prefix() {
    use object_store::ObjectStoreExt;
    if std::env::var_os("STRATA_S3_ENDPOINT").is_none() {
        eprintln!("s3 output: skipped, STRATA_S3_ENDPOINT is not set (scripts/test sets it)");
        return;
    }
    let bucket = std::env::var("STRATA_S3_BUCKET").unwrap_or_else(|_| "strata-test".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let url = format!("s3://{bucket}/generate-{}-{nanos}", std::process::id());
    let local = tempfile::tempdir().unwrap();
    let records = 40_000;
    let mut cfg = config(local.path(), records);
    let (_, want) = run(&cfg);
    cfg.output_dir = url.clone().into();
    cfg.compression = Compression::Zstd(1);
    let summary = generate(&strata_gen::contacts(cfg.seed), &cfg, &|_| {}).unwrap();
    assert_eq!(summary.files.len(), 2);
    let loc = strata_store::location::parse_location(&url, &Default::default()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut got = Vec::new();
    for f in &summary.files {
        let name = f.path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = rt
            .block_on(async {
                loc.store
                    .get(&loc.path.clone().join(name.as_str()))
                    .await
                    .unwrap()
                    .bytes()
                    .await
            })
            .unwrap();
        assert_eq!(bytes.len() as u64, f.bytes, "{name}");
        got.extend(
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
                .unwrap()
                .build()
                .unwrap()
                .map(|b| b.unwrap()),
        );
    }
    assert_eq!(
        sequence_hash(&rows_as_text(&got).unwrap()),
        sequence_hash(&rows_as_text(&want).unwrap())
    );
    // Again: refused, then replaced with overwrite.
    let e = generate(&strata_gen::contacts(cfg.seed), &cfg, &|_| {}).unwrap_err();
    assert!(
        matches!(e, Error::Store(strata_store::Error::OutputExists { .. })),
        "{e}"
    );
    cfg.overwrite = true;
    cfg.num_writers = 1;
    generate(&strata_gen::contacts(cfg.seed), &cfg, &|_| {}).unwrap();
    let names: Vec<String> = rt
        .block_on(loc.store.list_with_delimiter(Some(&loc.path)))
        .unwrap()
        .objects
        .into_iter()
        .filter_map(|m| m.location.filename().map(str::to_string))
        .collect();
    assert_eq!(
        names,
        vec!["contacts_0.parquet"],
        "the stale file is removed"
    );
    // A bucket that does not exist: an error, and nothing written.
    cfg.output_dir = "s3://strata-no-such-bucket/x".into();
    let e = generate(&strata_gen::contacts(cfg.seed), &cfg, &|_| {}).unwrap_err();
    assert!(e.to_string().contains("strata-no-such-bucket"), "{e}");
}

/// The `lineitem` preset goes through the direct encoder (`--encoder
/// auto`) with Snappy and zstd: its files name strata as their writer,
/// hold TPC-H's 16 columns with the types of `tpchgen-cli`'s files (its
/// strings are Utf8View there, the same Parquet column), and read back as
/// the same rows, with the same chunk statistics, as parquet's Arrow
/// writer's files.
#[test]
fn lineitem_takes_the_direct_encoder() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use strata_pipeline::generate::ParquetEncoder;

    let money = DataType::Decimal128(15, 2);
    let want: Vec<(&str, DataType)> = vec![
        ("l_orderkey", DataType::Int64),
        ("l_partkey", DataType::Int64),
        ("l_suppkey", DataType::Int64),
        ("l_linenumber", DataType::Int32),
        ("l_quantity", money.clone()),
        ("l_extendedprice", money.clone()),
        ("l_discount", money.clone()),
        ("l_tax", money),
        ("l_returnflag", DataType::Utf8),
        ("l_linestatus", DataType::Utf8),
        ("l_shipdate", DataType::Date32),
        ("l_commitdate", DataType::Date32),
        ("l_receiptdate", DataType::Date32),
        ("l_shipinstruct", DataType::Utf8),
        ("l_shipmode", DataType::Utf8),
        ("l_comment", DataType::Utf8),
    ];
    for compression in [Compression::Snappy, Compression::Zstd(1)] {
        let mut texts = Vec::new();
        let mut stats = Vec::new();
        for encoder in [ParquetEncoder::Auto, ParquetEncoder::Arrow] {
            let dir = tempfile::tempdir().unwrap();
            let mut cfg = config(dir.path(), 30_003);
            cfg.output_filename = "lineitem".into();
            cfg.row_group_rows = 10_000;
            cfg.compression = compression;
            cfg.encoder = encoder;
            let (summary, batches) = run_preset("lineitem", &cfg);
            let schema = batches[0].schema();
            let got: Vec<(&str, DataType)> = schema
                .fields()
                .iter()
                .map(|f| {
                    assert!(!f.is_nullable(), "{}", f.name());
                    (f.name().as_str(), f.data_type().clone())
                })
                .collect();
            assert_eq!(got, want);
            texts.push(rows_as_text(&batches).unwrap());
            let mut s = Vec::new();
            for f in &summary.files {
                let reader =
                    SerializedFileReader::new(std::fs::File::open(&f.path).unwrap()).unwrap();
                let meta = reader.metadata();
                let by = meta.file_metadata().created_by().unwrap_or_default();
                assert_eq!(
                    by.starts_with("strata version "),
                    encoder == ParquetEncoder::Auto,
                    "{compression:?} {encoder:?}: {by}"
                );
                for group in meta.row_groups() {
                    for chunk in group.columns() {
                        let st = chunk.statistics().expect("statistics");
                        s.push((
                            chunk.column_path().string(),
                            st.min_bytes_opt().map(<[u8]>::to_vec),
                            st.max_bytes_opt().map(<[u8]>::to_vec),
                        ));
                    }
                }
            }
            stats.push(s);
        }
        assert_eq!(texts[0], texts[1], "{compression:?}");
        assert_eq!(stats[0], stats[1], "{compression:?}");
    }
}

/// `parquet = { data_page_version = 2 }` on a spec makes every data page of
/// its files a `DATA_PAGE_V2`, through the direct encoder, and the rows
/// read back are those generated.
#[test]
fn a_spec_asks_for_data_pages_v2() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let text = "name = \"v2\"\nparquet = { data_page_version = 2, compression = \"snappy\" }\n\
        [[fields]]\nname = \"id\"\ntype = \"int64\"\nsequence = { start = 1 }\n\
        [[fields]]\nname = \"w\"\ntype = \"utf8\"\nnull_rate = 0.3\nwords = { min = 1, max = 2 }\n";
    let spec = strata_gen::Spec::parse(text, "v2.toml").unwrap();
    let g = spec.generator(7).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), 30_000);
    cfg.output_filename = "v2".into();
    cfg.num_writers = 1;
    let s = generate(&g, &cfg, &|_| {}).unwrap();
    let file = std::fs::File::open(&s.files[0].path).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let (mut v1, mut v2) = (0, 0);
    for r in 0..reader.num_row_groups() {
        let rg = reader.get_row_group(r).unwrap();
        for c in 0..rg.num_columns() {
            for page in rg.get_column_page_reader(c).unwrap() {
                match page.unwrap() {
                    parquet::column::page::Page::DataPage { .. } => v1 += 1,
                    parquet::column::page::Page::DataPageV2 { .. } => v2 += 1,
                    _ => {}
                }
            }
        }
    }
    assert_eq!(v1, 0);
    assert!(v2 >= 2, "{v2} pages");
    let want = g.generate(0, 30_000, &mut Default::default()).unwrap();
    let got = read_batches(&s.files[0].path).unwrap();
    assert_eq!(rows_as_text(&got).unwrap(), rows_as_text(&[want]).unwrap());
}
