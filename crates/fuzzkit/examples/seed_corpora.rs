//! Writes the seed corpora of the fuzz targets in `fuzz/` (one folder per
//! target) from strata's own output: every preset's Parquet and IPC
//! files, the presets' spec files, stored rows of each row layout, a
//! compaction manifest and filter expressions.
//!
//! ```text
//! cargo run -p strata-fuzzkit --example seed_corpora -- fuzz/corpus
//! ```

use std::{path::Path, sync::Arc};

use arrow_array::{ArrayRef, Int32Array, Int64Array, StringArray};
use strata_fuzzkit::{Fixtures, SetupError};

fn put(dir: &Path, target: &str, name: &str, bytes: &[u8]) -> Result<(), SetupError> {
    let d = dir.join(target);
    std::fs::create_dir_all(&d)?;
    std::fs::write(d.join(name), bytes)?;
    Ok(())
}

fn main() -> Result<(), SetupError> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: seed_corpora DIR (e.g. fuzz/corpus)")?;
    let dir = Path::new(&dir);
    let fixtures = Fixtures::all(100, 42)?;
    for f in &fixtures.0 {
        put(dir, "parquet", &format!("{}.parquet", f.preset), &f.parquet)?;
        put(dir, "ipc", &format!("{}.arrow", f.preset), &f.ipc)?;
    }
    for (name, text) in strata_gen::PRESETS
        .iter()
        .chain(strata_gen::DATASET_PRESETS)
    {
        put(dir, "spec", &format!("{name}.toml"), text.as_bytes())?;
    }
    // Rows: the layout byte, the row width, then rows of real data.
    let ints: ArrayRef = Arc::new(Int64Array::from(vec![
        Some(-3),
        None,
        Some(7),
        Some(1 << 40),
    ]));
    let strs: ArrayRef = Arc::new(StringArray::from(vec![
        Some("a"),
        None,
        Some(""),
        Some("xyz"),
    ]));
    let small: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(-1), None, Some(0)]));
    for (pick, cols, types) in [
        (0u8, vec![ints], vec![arrow_schema::DataType::Int64]),
        (
            1,
            vec![strs, small],
            vec![arrow_schema::DataType::Utf8, arrow_schema::DataType::Int32],
        ),
    ] {
        let fields = types.into_iter().map(strata_row::SortField::new).collect();
        let enc = strata_row::RowEncoder::new(fields)?;
        let rows = enc.encode(&cols)?;
        // Every row as wide as the widest: the fuzzer finds the splits.
        let width = rows.iter().map(|r| r.as_bytes().len()).max().unwrap_or(1);
        let mut bytes = vec![pick, width as u8];
        bytes.extend(rows.iter().flat_map(|r| r.as_bytes().to_vec()));
        put(dir, "rows", &format!("layout-{pick}.bin"), &bytes)?;
    }
    // A manifest: `compact init` over two copies of the events file.
    let events = fixtures.pick(b"user_id");
    let ds_dir = tempfile::tempdir()?;
    std::fs::write(ds_dir.path().join("a.parquet"), &events.parquet)?;
    std::fs::write(ds_dir.path().join("b.parquet"), &events.parquet)?;
    let ds = strata_compact::storage::Dataset::local(ds_dir.path());
    strata_compact::dataset::init(&ds, &[events.key.to_string()], true)?;
    let text = std::fs::read(ds_dir.path().join(strata_compact::storage::MANIFEST))?;
    put(dir, "manifest", "two-files.json", &text)?;
    for (i, f) in [
        "user_id >= 500",
        "amount < 2.5",
        "kind = 'click'",
        "session != 'a''b'",
        "ts >= '2024-01-01'",
        "\"event_id\" <> 3",
    ]
    .iter()
    .enumerate()
    {
        put(dir, "filter", &format!("filter-{i}.txt"), f.as_bytes())?;
    }
    Ok(())
}
