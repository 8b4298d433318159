//! Seeded mutations (bit flips, truncations, zeroed runs, extreme offsets
//! and lengths, random bytes; half in footers, dictionary pages, page
//! headers and record-batch headers) of every preset's Parquet and IPC
//! files, through every entry point that reads them: each gives an error
//! or a result that keeps its promise, never a panic, a hang or a
//! leftover output.
//!
//! `STRATA_MUTATIONS` sets the mutations per file (default 200; the
//! committed longer run in `fuzz/results.md` used 10,000). `strata infer`
//! profiles the file four times (two inferences, then both sides of a
//! comparison) and fits every column, which takes longer than all the
//! other entry points together (up to five times as long on the IPC
//! files), so it runs on every `STRATA_INFER_EVERY`-th mutation (default
//! 8, which adds about a seventh to these tests' time; 1 runs it on all).
//! A case that breaks a promise is saved under `target/mutation-failures/`
//! for replay.

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use strata_fuzzkit::{Entry, Fixture, Harness};
use strata_gen::rng::RowRng;
use strata_parquet::Format;
use strata_testkit::mutate::mutate_in;

fn mutations() -> usize {
    std::env::var("STRATA_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

fn infer_every() -> usize {
    std::env::var("STRATA_INFER_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
        .max(1)
}

/// The entry points mutation `m` runs through.
fn entries(m: usize) -> Vec<Entry> {
    Entry::ALL
        .into_iter()
        .filter(|&e| e != Entry::Infer || m.is_multiple_of(infer_every()))
        .collect()
}

/// The text of the error `strata infer` returns when the spec it wrote
/// does not parse (its own bug, caught before the spec is returned).
const UNPARSED_SPEC: &str = "the inferred spec does not parse";

/// Aborts the process when `progress` stops moving for a minute: a hang.
fn watchdog(progress: Arc<AtomicU64>, what: String) {
    std::thread::spawn(move || {
        let mut last = u64::MAX;
        loop {
            std::thread::sleep(Duration::from_secs(60));
            let now = progress.load(Ordering::Relaxed);
            if now == u64::MAX {
                return;
            }
            if now == last {
                eprintln!("{what}: mutation {now} has not finished in 60 s");
                std::process::abort();
            }
            last = now;
        }
    });
}

/// Keeps an input for replay under `target/mutation-failures/`.
fn save(preset: &str, format: Format, tag: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mutation-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{preset}-{tag}.{}", format.extension()));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn run(preset: &str, format: Format, seed: u64) {
    let _counter = crate::guard_counter();
    let n = mutations();
    let fixture = Fixture::new(preset, 400, seed).unwrap();
    let harness = Harness::new().unwrap();
    let (valid, regions) = fixture.file(format);
    for o in harness.file(&fixture, format, valid).unwrap() {
        assert!(o.result.is_ok(), "the intact {format:?} file: {o:?}");
    }
    let progress = Arc::new(AtomicU64::new(0));
    watchdog(Arc::clone(&progress), format!("{preset} {format:?}"));
    let caught = strata_parquet::guard::caught();
    let mut rng = RowRng::seeded(seed);
    // Per entry point: (errors, results).
    let mut seen: BTreeMap<Entry, (usize, usize)> = BTreeMap::new();
    let mut broken = Vec::new();
    // Decoder panics the guard turned into errors, by message.
    let mut panics: BTreeMap<String, usize> = BTreeMap::new();
    // Specs `strata infer` wrote and refused, by mutation.
    let mut unparsed = Vec::new();
    for m in 0..n {
        progress.store(m as u64, Ordering::Relaxed);
        let bad = mutate_in(&mut rng, valid, regions);
        match harness.entries(&entries(m), &fixture, format, &bad) {
            Ok(outcomes) => {
                for o in outcomes {
                    if let Err(msg) = &o.result
                        && let Some(at) = msg.find("the decoder failed")
                    {
                        *panics.entry(msg[at..].to_string()).or_default() += 1;
                        save(preset, format, &format!("caught-{m}"), &bad);
                    }
                    if let Err(msg) = &o.result
                        && msg.contains(UNPARSED_SPEC)
                    {
                        unparsed.push(m);
                    }
                    let e = seen.entry(o.entry).or_default();
                    if o.result.is_err() {
                        e.0 += 1;
                    } else {
                        e.1 += 1;
                    }
                }
            }
            Err(v) => {
                let path = save(preset, format, &m.to_string(), &bad);
                broken.push(format!("mutation {m} ({}): {v}", path.display()));
            }
        }
    }
    progress.store(u64::MAX, Ordering::Relaxed);
    eprintln!(
        "{preset} {format:?}: {n} mutations, (errors, results) per entry point {seen:?}, {} decoder panics caught",
        strata_parquet::guard::caught() - caught
    );
    for (msg, count) in &panics {
        eprintln!("  {count} x {msg}");
    }
    if !unparsed.is_empty() {
        eprintln!("  infer wrote a spec that does not parse for mutations {unparsed:?}");
    }
    assert!(
        broken.is_empty(),
        "{preset} {format:?}:\n{}",
        broken.join("\n")
    );
    // The mutations reach the decoders: most inputs fail somewhere.
    let errors: usize = seen.values().map(|(e, _)| e).sum();
    assert!(errors >= n / 2, "only {errors} errors in {n} mutations");
}

#[test]
fn contacts_parquet() {
    run("contacts", Format::Parquet, 101);
}

#[test]
fn contacts_ipc() {
    run("contacts", Format::Ipc, 102);
}

#[test]
fn wide_u64_parquet() {
    run("wide-u64", Format::Parquet, 103);
}

#[test]
fn wide_u64_ipc() {
    run("wide-u64", Format::Ipc, 104);
}

#[test]
fn events_parquet() {
    run("events", Format::Parquet, 105);
}

#[test]
fn events_ipc() {
    run("events", Format::Ipc, 106);
}

/// `strata infer` on every preset's intact files and on a quarter of their
/// mutations (as the tests above make them; `STRATA_MUTATIONS` raises the
/// count): an error saying that the spec it wrote does not parse is a bug
/// in infer, caught by infer's own check before the spec is returned.
/// Once found this way: dictionary columns modelled as strings, a u64
/// range widened past its maximum, timestamps before year 0 written as
/// TOML datetimes, empty column names, a time zone that is not one, map
/// keys from a generator that repeats values.
#[test]
fn infer_writes_specs_that_parse() {
    let harness = Harness::new().unwrap();
    let mut unparsed = Vec::new();
    for (preset, format, seed) in [
        ("contacts", Format::Parquet, 101),
        ("contacts", Format::Ipc, 102),
        ("wide-u64", Format::Parquet, 103),
        ("wide-u64", Format::Ipc, 104),
        ("events", Format::Parquet, 105),
        ("events", Format::Ipc, 106),
    ] {
        let fixture = Fixture::new(preset, 400, seed).unwrap();
        let (valid, regions) = fixture.file(format);
        let mut rng = RowRng::seeded(seed);
        let inputs = std::iter::once(("intact".to_string(), valid.to_vec()))
            .chain((0..mutations()).map(|m| (m.to_string(), mutate_in(&mut rng, valid, regions))))
            .enumerate()
            .filter(|(i, _)| i % 4 == 0)
            .map(|(_, x)| x);
        for (tag, bytes) in inputs {
            if let Err(msg) = harness.one(Entry::Infer, &fixture, format, &bytes).unwrap()
                && let Some(at) = msg.find(UNPARSED_SPEC)
            {
                let first = msg[at..].lines().next().unwrap_or_default();
                unparsed.push(format!("{preset} {format:?} {tag}: {first}"));
            }
        }
    }
    assert!(unparsed.is_empty(), "{}", unparsed.join("\n"));
}
