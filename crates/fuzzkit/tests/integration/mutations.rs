//! Seeded mutations (bit flips, truncations, zeroed runs, extreme offsets
//! and lengths, random bytes; half in footers, dictionary pages, page
//! headers and record-batch headers) of every preset's Parquet and IPC
//! files, through every entry point that reads them: each gives an error
//! or a result that keeps its promise, never a panic, a hang or a
//! leftover output.
//!
//! `STRATA_MUTATIONS` sets the mutations per file (default 200; the
//! committed longer run in `fuzz/results.md` used 10,000). A case that
//! breaks a promise is saved under `target/mutation-failures/` for
//! replay.

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
    for m in 0..n {
        progress.store(m as u64, Ordering::Relaxed);
        let bad = mutate_in(&mut rng, valid, regions);
        match harness.file(&fixture, format, &bad) {
            Ok(outcomes) => {
                for o in outcomes {
                    if let Err(msg) = &o.result
                        && let Some(at) = msg.find("the decoder failed")
                    {
                        *panics.entry(msg[at..].to_string()).or_default() += 1;
                        save(preset, format, &format!("caught-{m}"), &bad);
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
