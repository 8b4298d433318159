//! `strata generate` end to end: every preset into Arrow IPC and into
//! Parquet (uncompressed and zstd level 1) in a temporary directory, every
//! core, the CLI's defaults otherwise. Side by side in the same run:
//! parquet's own `ArrowWriter` encoding the same batches (`--encoder
//! arrow`), and DuckDB generating a `contacts`-shaped table with the same
//! distributions through SQL (`COPY (SELECT ... FROM range(N)) TO ...`).
//! `benches/generate_vs_reference.py` runs the reference program.

use std::path::PathBuf;
use std::sync::Arc;

use strata_parquet::Compression;
use strata_parquet::Format;
use strata_pipeline::generate::{GenerateConfig, ParquetEncoder, Part, generate};

use super::common::{peer_body, peer_timing, python_peer};
use crate::{Case, Config, Error, Size, Unit, case_err};

const PEER: &str = include_str!("../../python/generate_peer.py");

/// The cases.
pub fn cases(cfg: &Config) -> Result<Vec<Case>, Error> {
    let rows: u64 = match cfg.size {
        Size::Tiny => 20_000,
        Size::Full => 2_000_000,
    };
    let dir = Arc::new(tempfile::tempdir().map_err(case_err)?);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = vec![];
    for preset in ["contacts", "wide-u64", "events"] {
        let generator = Arc::new(strata_gen::preset(preset, 42));
        let runs = [
            (
                "ipc",
                Format::Ipc,
                Compression::None,
                ParquetEncoder::Auto,
                "strata",
            ),
            (
                "parquet none",
                Format::Parquet,
                Compression::None,
                ParquetEncoder::Auto,
                "strata",
            ),
            (
                "parquet none",
                Format::Parquet,
                Compression::None,
                ParquetEncoder::Arrow,
                "parquet ArrowWriter",
            ),
            (
                "parquet zstd",
                Format::Parquet,
                Compression::Zstd(1),
                ParquetEncoder::Auto,
                "strata",
            ),
            (
                "parquet zstd",
                Format::Parquet,
                Compression::Zstd(1),
                ParquetEncoder::Arrow,
                "parquet ArrowWriter",
            ),
        ];
        for (label, format, compression, encoder, subject) in runs {
            let name = format!("generate {preset} {rows} rows/{label}");
            let gen_cfg = GenerateConfig {
                target_records: rows,
                record_batch_size: 8192,
                num_writers: 4,
                threads,
                row_group_rows: 1 << 20,
                format,
                compression,
                output_dir: PathBuf::from(dir.path()).join(format!("{preset}-{label}-{subject}")),
                output_filename: preset.into(),
                overwrite: true,
                seed: 42,
                encoder,
                part: Part::default(),
            };
            let (generator, dir) = (generator.clone(), dir.clone());
            out.push(Case::new(
                &name,
                subject,
                Unit::Rows,
                rows as f64,
                move || {
                    let _keep = &dir;
                    generate(&*generator, &gen_cfg, &|_| {}).map_err(case_err)?;
                    Ok(())
                },
            ));
        }
    }
    for (label, codec) in [("parquet none", "uncompressed"), ("parquet zstd", "zstd")] {
        let name = format!("generate contacts {rows} rows/{label}");
        let mut request = peer_timing(cfg);
        request["name"] = name.clone().into();
        request["dir"] = dir.path().display().to_string().into();
        request["rows"] = rows.into();
        request["codec"] = codec.into();
        request["threads"] = threads.into();
        request["first_names"] = names(strata_gen::names::first_names()).into();
        request["last_names"] = names(strata_gen::names::last_names()).into();
        let reply = python_peer(cfg, PEER, &request, "duckdb", std::slice::from_ref(&name));
        out.push(Case {
            name: name.clone(),
            subject: "duckdb".into(),
            unit: Unit::Rows,
            work: rows as f64,
            repeats: 1,
            body: peer_body(&reply, &name),
        });
    }
    Ok(out)
}

/// A name table's entries as strings.
fn names(table: &strata_gen::names::NameTable) -> Vec<String> {
    (0..table.len())
        .map(|i| String::from_utf8_lossy(table.get(i)).into_owned())
        .collect()
}
