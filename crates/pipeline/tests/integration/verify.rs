//! Generated files read back and checked against their spec: every share
//! within 5 standard errors, the specified shares as the spec implies
//! them, and a wrong spec flagged.

use std::path::Path;

use strata_gen::Spec;
use strata_parquet::Compression;
use strata_parquet::Format;
use strata_pipeline::Error;
use strata_pipeline::generate::{GenerateConfig, generate};
use strata_pipeline::verify::{Report, Verifier, verify_distribution};

fn config(dir: &Path, stem: &str, records: u64, format: Format) -> GenerateConfig {
    GenerateConfig {
        target_records: records,
        record_batch_size: 8192,
        num_writers: 2,
        threads: 2,
        row_group_rows: 65_536,
        format,
        compression: Compression::None,
        output_dir: dir.to_path_buf(),
        output_filename: stem.into(),
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

/// Generates `records` rows of `spec` into `dir` and returns the files.
fn write(spec: &Spec, dir: &Path, records: u64, format: Format) -> Vec<String> {
    let cfg = config(dir, &spec.name, records, format);
    let summary = generate(&spec.generator(cfg.seed).unwrap(), &cfg, &|_| {}).unwrap();
    summary
        .files
        .iter()
        .map(|f| f.path.to_str().unwrap().to_string())
        .collect()
}

fn assert_passed(report: &Report) {
    assert!(
        report.passed(),
        "suspicious checks: {:?}\n{report}",
        report.suspicious()
    );
}

/// The check `field`/`measure`, with its specified share.
fn specified(report: &Report, field: &str, measure: &str) -> f64 {
    report
        .find(field, measure)
        .unwrap_or_else(|| panic!("no check {field} {measure}\n{report}"))
        .specified
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
}

#[test]
fn contacts_files_realise_the_spec() {
    let spec = Spec::preset("contacts").unwrap();
    for format in [Format::Parquet, Format::Ipc] {
        let dir = tempfile::tempdir().unwrap();
        let files = write(&spec, dir.path(), 200_000, format);
        assert_eq!(files.len(), 2);
        let report = verify_distribution(&spec, &files).unwrap();
        println!("{format:?}\n{report}");
        assert_passed(&report);
        assert_eq!((report.rows, report.files), (200_000, 2));

        close(specified(&report, "name", "null"), 0.2);
        assert_eq!(report.find("name", "null").unwrap().count, 200_000);
        close(specified(&report, "phones", "null"), 0.4);
        // Lengths among the non-empty lists: weights 135, 30, 5, 5, 5.
        close(specified(&report, "phones", "length 1"), 135.0 / 180.0);
        close(specified(&report, "phones", "length 5"), 5.0 / 180.0);
        assert!(report.find("phones", "length 0").is_none());
        close(specified(&report, "phones.item", "null"), 0.0);
        // 6% null types with 1/6 null numbers, else 0.04255...: 5%.
        close(specified(&report, "phones.item.number", "null"), 0.05);
        close(specified(&report, "phones.item.phone_type", "null"), 0.06);
        close(
            specified(&report, "phones.item.phone_type", "value \"Mobile\""),
            0.55,
        );
        close(
            specified(&report, "phones.item.phone_type", "value \"Home\""),
            0.10,
        );
        // Elements are counted only inside valid lists.
        let number = report.find("phones.item.number", "null").unwrap();
        let types = report.find("phones.item.phone_type", "null").unwrap();
        assert_eq!(number.count, types.count);
        assert!(number.count > 150_000, "{}", number.count);
    }
}

/// `lineitem`: weighted decimals (quantities, in units of 0.01), integers
/// and strings pass, shown as their spec writes them.
#[test]
fn lineitem_files_realise_the_spec() {
    let spec = Spec::preset("lineitem").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = write(&spec, dir.path(), 40_000, Format::Parquet);
    let report = verify_distribution(&spec, &files).unwrap();
    assert_passed(&report);
    close(specified(&report, "l_quantity", "value 1.00"), 0.02);
    close(specified(&report, "l_quantity", "value 50.00"), 0.02);
    close(specified(&report, "l_linenumber", "value 1"), 0.25);
    close(specified(&report, "l_returnflag", "value \"N\""), 0.5);
    close(specified(&report, "l_shipmode", "value \"FOB\""), 1.0 / 7.0);
}

#[test]
fn events_files_realise_the_spec() {
    let spec = Spec::preset("events").unwrap();
    for format in [Format::Parquet, Format::Ipc] {
        let dir = tempfile::tempdir().unwrap();
        let files = write(&spec, dir.path(), 50_000, format);
        let report = verify_distribution(&spec, &files).unwrap();
        println!("{format:?}\n{report}");
        assert_passed(&report);

        // Only purchases (6%) and refunds (1%) have amounts.
        close(specified(&report, "amount", "null"), 0.93);
        // Only carts, purchases and refunds (15%) have items.
        close(specified(&report, "items", "null"), 0.85);
        close(specified(&report, "kind", "value \"view\""), 0.60);
        close(specified(&report, "device", "null"), 0.02);
        close(specified(&report, "device.os_version", "null"), 0.05);
        close(specified(&report, "device.screen.width", "value 360"), 0.30);
        let zipf = |s: f64, n: u32, k: u32| {
            let norm: f64 = (1..=n).map(|j| f64::from(j).powf(-s)).sum();
            f64::from(k).powf(-s) / norm
        };
        let os = specified(&report, "device.os", "value \"android\"");
        assert!((os - zipf(1.3, 6, 1)).abs() < 1e-12, "{os}");
        // Tag counts: zipf ranks from 0.
        let tags0 = specified(&report, "tags", "length 0");
        assert!((tags0 - zipf(1.5, 6, 1)).abs() < 1e-12, "{tags0}");
        let promo = specified(&report, "tags.item", "value \"promo\"");
        assert!((promo - zipf(1.2, 10, 4)).abs() < 1e-12, "{promo}");
        close(specified(&report, "items", "length 8"), 0.05);
        // Attribute maps: 0 to 3 distinct keys of 4, each key a quarter.
        close(
            specified(&report, "items.item.attributes", "length 0"),
            0.25,
        );
        close(
            specified(&report, "items.item.attributes.key", "value \"size\""),
            0.25,
        );
        close(
            specified(&report, "items.item.attributes.value", "null"),
            0.1,
        );
        // Non-categorical fields get the null check only.
        assert!(report.find("user_id", "null").is_some());
        assert_eq!(
            report
                .checks
                .iter()
                .filter(|c| c.field == "user_id")
                .count(),
            1
        );
    }
}

#[test]
fn a_wrong_null_rate_is_flagged() {
    let text = Spec::preset_text("contacts").unwrap();
    let edited = text.replacen("null_rate = 0.2\n", "null_rate = 0.3\n", 1);
    assert_ne!(text, edited);
    let wrong = Spec::parse(&edited, "edited.toml").unwrap();
    let right = Spec::preset("contacts").unwrap();
    for format in [Format::Parquet, Format::Ipc] {
        let dir = tempfile::tempdir().unwrap();
        let files = write(&right, dir.path(), 200_000, format);
        let report = verify_distribution(&wrong, &files).unwrap();
        let name = report.find("name", "null").unwrap();
        assert_eq!(name.specified, 0.3);
        assert!(name.suspicious(), "{name:?}");
        assert!(name.z < -50.0, "{name:?}");
        // Only that check.
        assert_eq!(report.suspicious().len(), 1, "{report}");
        let table = report.to_string();
        let line = table.lines().find(|l| l.starts_with("name ")).unwrap();
        assert!(line.ends_with("SUSPICIOUS"), "{line}");
        assert!(
            table.ends_with("1 suspicious (|z| > 5), 200000 rows in 2 files\n"),
            "{table}"
        );
    }
}

/// A spec with every kind of check: booleans, integers, floats, dates,
/// a case that changes a generator, a case on a list's nullness, normal
/// and long-tailed lengths, and skewed map keys.
const MIXED: &str = r#"
name = "mixed"

[[fields]]
name = "flag"
type = "boolean"
probability = 0.3
null_rate = 0.1

[[fields]]
name = "tier"
type = "int16"
weighted = { values = [1, 2, 3], weights = [5, 3, 2] }

[[fields]]
name = "score"
type = "float32"
null_rate = 0.5
weighted = { values = [0.5, 1.5], weights = [1, 1] }

[[fields.when]]
field = "tier"
is = 3
null_rate = 0.0
weighted = { values = [0.5, 1.5, 2.5], weights = [1, 1, 8] }

[[fields]]
name = "day"
type = "date32"
zipf = { s = 1.0, values = [2024-01-01, 2024-01-02, 2024-01-03] }

[[fields]]
name = "scores"
type = "list"
null_rate = 0.2
empty_as_null = true
length = { normal = { mean = 2.0, std = 2.0 } }

[fields.item]
type = "float64"
uniform = { min = 0.0, max = 1.0 }

[[fields]]
name = "note"
type = "utf8"
words = { min = 1, max = 3 }
null_rate = 0.0

[[fields.when]]
field = "scores"
is_null = true
null_rate = 0.5

[[fields]]
name = "hits"
type = "list"
length = { zipf = { s = 1.1, n = 40, start = 0 } }

[fields.item]
type = "int32"
constant = 7

[[fields]]
name = "tags"
type = "map"
length = { weighted = { values = [1, 2, 3], weights = [1, 1, 1] } }

[fields.key]
type = "utf8"
weighted = { values = ["a", "b", "c", "d"], weights = [10, 5, 2, 1] }

[fields.value]
type = "boolean"
probability = 0.9
"#;

#[test]
fn every_kind_of_check_passes_in_memory_and_in_files() {
    let spec = Spec::parse(MIXED, "mixed.toml").unwrap();
    // In memory, batch by batch.
    let generator = spec.generator(5).unwrap();
    let mut verifier = Verifier::new(&spec);
    let mut scratch = Default::default();
    for first in (0..200_000u64).step_by(20_000) {
        use strata_gen::BatchGenerator;
        let batch = generator.generate(first, 20_000, &mut scratch).unwrap();
        verifier.add_batch(&batch).unwrap();
    }
    let report = verifier.report();
    println!("{report}");
    assert_passed(&report);
    assert_eq!(report.rows, 200_000);

    // tier 3 (20%) never has a null score; the others half the time.
    close(specified(&report, "score", "null"), 0.4);
    // Among non-null scores: 0.8·(1/2, 1/2, 0) + 0.2·(0.1, 0.1, 0.8) / 1.
    let valid = 0.8 * 0.5 + 0.2;
    close(specified(&report, "score", "value 2.5"), 0.2 * 0.8 / valid);
    close(specified(&report, "flag", "value true"), 0.3);
    let first_day = specified(&report, "day", "value 2024-01-01");
    assert!((first_day - 6.0 / 11.0).abs() < 1e-12, "{first_day}");
    // The note reads whether the list is null in the data: drawn null
    // (20%) or drawn empty under `empty_as_null`.
    let scores_null = specified(&report, "scores", "null");
    assert!(scores_null > 0.2);
    close(specified(&report, "note", "null"), 0.5 * scores_null);
    assert!(report.find("scores", "mean length").is_some());
    assert!(report.find("scores", "length 2").is_none());
    // Zipf lengths over 40 values: the ten likeliest, and the mean.
    assert_eq!(
        report
            .checks
            .iter()
            .filter(|c| c.field == "hits" && c.measure.starts_with("length "))
            .count(),
        10
    );
    assert!(report.find("hits", "mean length").is_some());
    close(specified(&report, "hits.item", "value 7"), 1.0);
    // Keys are distinct in a map: the heavy key appears in most maps but
    // its share of keys is below its weight.
    let a = specified(&report, "tags.key", "value \"a\"");
    assert!(a < 10.0 / 18.0 - 0.05 && a > 0.25, "{a}");

    // The same through files of both formats.
    for format in [Format::Parquet, Format::Ipc] {
        let dir = tempfile::tempdir().unwrap();
        let files = write(&spec, dir.path(), 100_000, format);
        let report = verify_distribution(&spec, &files).unwrap();
        println!("{format:?}\n{report}");
        assert_passed(&report);
    }
}

#[test]
fn data_of_another_spec_is_an_error() {
    let contacts = Spec::preset("contacts").unwrap();
    let events = Spec::preset("events").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = write(&contacts, dir.path(), 1_000, Format::Parquet);
    let err = verify_distribution(&events, &files).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Scan(strata_scan::Error::UnknownColumn { ref name, .. }) if name == "event_id"
        ),
        "{err}"
    );

    // Same column names, other shapes.
    let text = r#"
name = "contacts"

[[fields]]
name = "name"
type = "utf8"
null_rate = 0.2
template = "{first_name} {last_name}"

[[fields]]
name = "phones"
type = "utf8"
template = "+91-99-{seq:08}"
"#;
    let flat = Spec::parse(text, "flat.toml").unwrap();
    let err = verify_distribution(&flat, &files).unwrap_err();
    let Error::Read { source, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        matches!(source.as_ref(), Error::SpecMismatch { field, .. } if field == "phones"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("field `phones` does not match the spec"),
        "{err}"
    );

    let missing = dir.path().join("nothing.parquet");
    let err = verify_distribution(&contacts, &[missing.to_str().unwrap()]).unwrap_err();
    assert!(
        matches!(err, Error::Store(strata_store::Error::NotFound { .. })),
        "{err}"
    );
    let none: [&str; 0] = [];
    assert!(matches!(
        verify_distribution(&contacts, &none),
        Err(Error::InvalidConfig(_))
    ));
}

/// Timing of a large verification: `cargo test --release -p strata-pipeline
/// --test integration verify:: -- --ignored --nocapture`.
#[test]
#[ignore = "slow in debug builds; a timing to run in release"]
fn ten_million_contacts() {
    let spec = Spec::preset("contacts").unwrap();
    for format in [Format::Parquet, Format::Ipc] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = GenerateConfig {
            num_writers: 8,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            row_group_rows: 1 << 20,
            ..config(dir.path(), "contacts", 10_000_000, format)
        };
        let summary = generate(&spec.generator(cfg.seed).unwrap(), &cfg, &|_| {}).unwrap();
        let files: Vec<String> = summary
            .files
            .iter()
            .map(|f| f.path.to_str().unwrap().to_string())
            .collect();
        let start = std::time::Instant::now();
        let report = verify_distribution(&spec, &files).unwrap();
        let elapsed = start.elapsed().as_secs_f64();
        println!(
            "{format:?}: generated in {:.2} s, verified in {elapsed:.2} s on {} threads\n{report}",
            summary.elapsed_s, cfg.threads
        );
        assert_passed(&report);
    }
}

/// Files in an object store, read back through `s3://` URLs (against the
/// server `scripts/test` starts; says so and checks nothing without
/// `STRATA_S3_ENDPOINT`).
#[test]
fn files_in_an_object_store_are_verified() {
    if std::env::var_os("STRATA_S3_ENDPOINT").is_none() {
        eprintln!("s3 verify: skipped, STRATA_S3_ENDPOINT is not set (scripts/test sets it)");
        return;
    }
    let bucket = std::env::var("STRATA_S3_BUCKET").unwrap_or_else(|_| "strata-test".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let url = format!("s3://{bucket}/verify-{}-{nanos}", std::process::id());
    let spec = Spec::preset("events").unwrap();
    for format in [Format::Parquet, Format::Ipc] {
        let mut cfg = config(Path::new(&url), "events", 30_000, format);
        cfg.output_dir = url.clone().into();
        let summary = generate(&spec.generator(cfg.seed).unwrap(), &cfg, &|_| {}).unwrap();
        let files: Vec<String> = summary
            .files
            .iter()
            .map(|f| f.path.to_str().unwrap().to_string())
            .collect();
        assert!(files.iter().all(|f| f.starts_with("s3://")), "{files:?}");
        let report = verify_distribution(&spec, &files).unwrap();
        assert_passed(&report);
        assert_eq!((report.rows, report.files), (30_000, 2));
        close(specified(&report, "amount", "null"), 0.93);
    }
}

/// Fields computed from others: an expression over a nullable field, and
/// aggregates over child tables with parents of no children.
#[test]
fn computed_fields_are_listed_as_not_checked_not_flagged() {
    use strata_gen::BatchGenerator;
    let text = r#"
name = "c"

[[tables]]
name = "p"
rows = 20000

[[tables.fields]]
name = "a"
type = "int64"
uniform = { min = 1, max = 100 }
null_rate = 0.5

[[tables.fields]]
name = "b"
type = "int64"
expr = "a + 1"

[[tables.fields]]
name = "total"
type = "int64"
aggregate = { table = "k", max = "v" }

[[tables.fields]]
name = "n"
type = "int64"
aggregate = { table = "k", count = "*" }

[[tables]]
name = "k"
children_of = "p"
count = { uniform = { min = 0, max = 1 } }

[[tables.fields]]
name = "v"
type = "int64"
uniform = { min = 1, max = 9 }
"#;
    let d = strata_gen::Dataset::parse(text, "c.toml").unwrap();
    let g = d.generator(0, 7, 1.0).unwrap();
    let mut v = Verifier::new(&d.tables[0].spec);
    let mut s = Default::default();
    for first in (0..20_000).step_by(5000) {
        v.add_batch(&g.generate(first, 5000, &mut s).unwrap())
            .unwrap();
    }
    let report = v.report();
    assert_passed(&report);
    // The plain field and the count are checked; the expression and the
    // max are listed with their realised shares (about a half each).
    assert!(report.find("a", "null").is_some());
    assert_eq!(specified(&report, "n", "null"), 0.0);
    for (field, why) in [
        ("b", "an expression, null where its inputs are"),
        ("total", "an aggregate, null for rows without children"),
    ] {
        assert!(report.find(field, "null").is_none(), "{report}");
        let u = report
            .unchecked
            .iter()
            .find(|u| u.field == field)
            .unwrap_or_else(|| panic!("{field} not listed:\n{report}"));
        assert_eq!((u.measure.as_str(), u.reason.as_str()), ("null", why));
        assert_eq!(u.count, 20_000);
        assert!((u.realised - 0.5).abs() < 0.03, "{field}: {}", u.realised);
    }
    let text = report.to_string();
    assert!(
        text.contains("b      null              -    0.4972")
            && text.contains("not checked: an expression, null where its inputs are\n"),
        "{text}"
    );
    // Every line, the last included, ends with a newline.
    assert!(
        text.ends_with("2 checks, 0 suspicious (|z| > 5), 2 not checked, 20000 rows\n"),
        "{text:?}"
    );
}
