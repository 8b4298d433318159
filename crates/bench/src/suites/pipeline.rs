//! `strata generate` end to end: every preset into Arrow IPC and into
//! Parquet (uncompressed and zstd level 1) in a temporary directory, every
//! core, the CLI's defaults otherwise. Side by side in the same run:
//! parquet's own `ArrowWriter` encoding the same batches (`--encoder
//! arrow`), and DuckDB generating a `contacts`-shaped table with the same
//! distributions through SQL (`COPY (SELECT ... FROM range(N)) TO ...`),
//! and, given its path (`strata bench pipeline --reference PATH`), the
//! reference program `parquet-nested-parallel` writing the same number of
//! `contacts` rows uncompressed.
//!
//! TPC-H's lineitem at scale factor 1 (6,001,215 rows; 0.005 of that at
//! the tiny size): strata's `lineitem` preset to Parquet with Snappy and
//! with zstd level 1, and beside each `tpchgen-cli` (the Python package,
//! pinned in `tests/interop/requirements.txt`) writing the table at the
//! same scale factor with the same codec and thread count.
//!
//! Joinable tables at scale 1 (0.005 at the tiny size): the `orders`
//! dataset preset's `orders` and `lineitem` tables (1,500,000 orders and
//! their 1 to 7 line items each, keys and dates from their order, the
//! customer keys drawn from a `customers` table that is not written) to
//! Parquet with Snappy and with zstd level 1, beside `tpchgen-cli` writing
//! TPC-H's `orders` and `lineitem` at the same scale factor, codec and
//! thread count; rows are both tables' together. The whole of TPC-H: the
//! `tpch` preset's eight tables beside `tpchgen-cli` writing all eight
//! (rows: every table's together).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use strata_parquet::Compression;
use strata_parquet::Format;
use strata_pipeline::generate::{GenerateConfig, ParquetEncoder, Part, generate};

use super::common::{peer_body, peer_timing, python_peer};
use crate::{Body, Case, Config, Error, Sample, Size, Unit, case_err};

const PEER: &str = include_str!("../../python/generate_peer.py");
const TPCHGEN_PEER: &str = include_str!("../../python/tpchgen_peer.py");
const LAYOUT_PEER: &str = include_str!("../../python/layout_peer.py");
const ICEBERG_PEER: &str = include_str!("../../python/iceberg_peer.py");

/// Rows of TPC-H's lineitem table at scale factor 1.
pub const LINEITEM_SF1_ROWS: u64 = 6_001_215;

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
                page_checksums: true,
                part: Part::default(),
                layout: None,
                field_ids: None,
                row_offset: 0,
            };
            out.push(generate_case(name, subject, &generator, gen_cfg, &dir));
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
    out.extend(lineitem_cases(cfg, &dir, threads)?);
    for pair in &DATASET_PAIRS {
        out.extend(dataset_cases(cfg, &dir, threads, pair)?);
    }
    if let (Some(program), true) = (&cfg.reference, cfg.peers) {
        let name = format!("generate contacts {rows} rows/parquet none");
        let subject = "parquet-nested-parallel";
        if cfg.wants(&name, subject) {
            // Half the cores as writers: the reference takes no more
            // (its producers use the other half).
            let writers = (threads / 2).max(1);
            let body = reference_body(cfg, program, rows, &dir.path().join("reference"), writers)?;
            out.push(Case {
                name,
                subject: subject.into(),
                unit: Unit::Rows,
                work: rows as f64,
                repeats: 1,
                body,
            });
        }
    }
    Ok(out)
}

/// A case's set-up that removes the previous run's `output`, untimed:
/// replacing its files inside the window tears down hundreds of MB of
/// cached pages there.
fn remove_output(output: PathBuf) -> Box<dyn FnMut() -> Result<(), Error> + Send> {
    Box::new(move || match std::fs::remove_dir_all(&output) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(case_err(e)),
        _ => Ok(()),
    })
}

/// A case running `strata generate` with `gen_cfg` (`dir` holds its
/// output and lives as long as the case).
fn generate_case(
    name: String,
    subject: &str,
    generator: &Arc<strata_gen::SpecGenerator>,
    gen_cfg: GenerateConfig,
    dir: &Arc<tempfile::TempDir>,
) -> Case {
    let (generator, keep) = (generator.clone(), dir.clone());
    let output = gen_cfg.output_dir.clone();
    Case {
        name,
        subject: subject.into(),
        unit: Unit::Rows,
        work: gen_cfg.target_records as f64,
        repeats: 1,
        body: Body::Staged {
            setup: remove_output(output),
            run: Box::new(move || {
                let _keep = &keep;
                generate(&*generator, &gen_cfg, &|_| {}).map_err(case_err)?;
                Ok(())
            }),
        },
    }
}

/// strata's `lineitem` preset and `tpchgen-cli` at one scale factor, to
/// Parquet with Snappy and with zstd level 1.
fn lineitem_cases(
    cfg: &Config,
    dir: &Arc<tempfile::TempDir>,
    threads: usize,
) -> Result<Vec<Case>, Error> {
    let scale_factor = match cfg.size {
        Size::Tiny => 0.005,
        Size::Full => 1.0,
    };
    let rows = (LINEITEM_SF1_ROWS as f64 * scale_factor).round() as u64;
    let generator = Arc::new(strata_gen::preset("lineitem", 42));
    let mut out = vec![];
    for (label, compression, codec) in [
        ("parquet snappy", Compression::Snappy, "SNAPPY"),
        ("parquet zstd", Compression::Zstd(1), "ZSTD(1)"),
    ] {
        let name = format!("generate lineitem SF {scale_factor} ({rows} rows)/{label}");
        let gen_cfg = GenerateConfig {
            target_records: rows,
            ..peer_config("lineitem", label, compression, dir, threads)
        };
        out.push(generate_case(
            name.clone(),
            "strata",
            &generator,
            gen_cfg,
            dir,
        ));
        let peer = Tpchgen {
            scale_factor,
            codec,
            threads,
            tables: "lineitem",
        };
        out.push(peer.case(cfg, dir, &name, rows as f64));
    }
    out.extend(layout_cases(cfg, dir, scale_factor, rows)?);
    Ok(out)
}

/// `lineitem` partitioned by month and flag and sorted by (l_shipdate,
/// l_orderkey), zstd, 2 threads: strata laid out, strata's plain run of
/// the same rows, and `tpchgen-cli` then DuckDB's `COPY ... ORDER BY ...
/// PARTITION_BY` (`python/layout_peer.py`).
fn layout_cases(
    cfg: &Config,
    dir: &Arc<tempfile::TempDir>,
    scale_factor: f64,
    rows: u64,
) -> Result<Vec<Case>, Error> {
    let threads = 2;
    let name = format!(
        "generate lineitem SF {scale_factor} ({rows} rows), by month and flag, sorted/parquet zstd"
    );
    let generator = Arc::new(strata_gen::preset("lineitem", 42));
    let mut out = vec![];
    for (subject, laid_out) in [("strata laid out", true), ("strata plain", false)] {
        let mut gen_cfg = GenerateConfig {
            target_records: rows,
            ..peer_config("lineitem", subject, Compression::Zstd(1), dir, threads)
        };
        if laid_out {
            let flags = strata_pipeline::layout::LayoutFlags {
                partition_by: vec!["month(l_shipdate),l_returnflag".into()],
                sort_by: vec!["l_shipdate,l_orderkey".into()],
                ..Default::default()
            };
            gen_cfg.layout = strata_pipeline::layout::Layout::resolve(
                &strata_gen::Layout::default(),
                &flags,
                "lineitem",
                &["lineitem"],
                &strata_gen::BatchGenerator::schema(&*generator),
            )
            .map_err(case_err)?;
        }
        out.push(generate_case(
            name.clone(),
            subject,
            &generator,
            gen_cfg,
            dir,
        ));
    }
    out.push(iceberg_case(name.clone(), dir, rows, threads)?);
    let mut request = peer_timing(cfg);
    request["name"] = name.clone().into();
    request["dir"] = dir.path().display().to_string().into();
    request["scale_factor"] = scale_factor.into();
    request["threads"] = threads.into();
    for (subject, script) in [
        ("tpchgen-cli + pyiceberg", ICEBERG_PEER),
        ("tpchgen-cli + duckdb", LAYOUT_PEER),
    ] {
        let reply = python_peer(cfg, script, &request, subject, std::slice::from_ref(&name));
        out.push(Case {
            name: name.clone(),
            subject: subject.into(),
            unit: Unit::Rows,
            work: rows as f64,
            repeats: 1,
            body: peer_body(&reply, &name),
        });
    }
    Ok(out)
}

/// strata writing the laid-out `lineitem` of [`layout_cases`] as an
/// Iceberg table (`--format iceberg`: the same layout, identity partition
/// columns kept in the files, then the manifest, manifest list and
/// metadata), the whole flow timed.
fn iceberg_case(
    name: String,
    dir: &Arc<tempfile::TempDir>,
    rows: u64,
    threads: usize,
) -> Result<Case, Error> {
    let text = strata_gen::Dataset::preset_text("lineitem")
        .ok_or_else(|| case_err("no lineitem preset"))?;
    let dataset = strata_gen::Dataset::parse(text, "preset lineitem").map_err(case_err)?;
    let base = GenerateConfig {
        target_records: rows,
        seed: 42,
        ..peer_config(
            "lineitem",
            "strata iceberg",
            Compression::Zstd(1),
            dir,
            threads,
        )
    };
    let flags = strata_pipeline::layout::LayoutFlags {
        partition_by: vec!["month(l_shipdate),l_returnflag".into()],
        sort_by: vec!["l_shipdate,l_orderkey".into()],
        ..Default::default()
    };
    let output = base.output_dir.clone();
    let keep = dir.clone();
    Ok(Case {
        name,
        subject: "strata iceberg".into(),
        unit: Unit::Rows,
        work: rows as f64,
        repeats: 1,
        body: Body::Staged {
            setup: remove_output(output),
            run: Box::new(move || {
                let _keep = &keep;
                let mut flow = strata_pipeline::flow::Flow::new(dataset.clone(), &[0], &base, 1.0)
                    .map_err(case_err)?;
                flow.set_layouts(&flags).map_err(case_err)?;
                let tables = flow
                    .as_iceberg(None, &Default::default())
                    .map_err(case_err)?;
                let summaries = flow
                    .run(strata_pipeline::generate::RunOptions::default(), &|_| {})
                    .map_err(case_err)?;
                flow.commit_iceberg(&tables, &summaries).map_err(case_err)?;
                Ok(())
            }),
        },
    })
}

/// `tpchgen-cli` writing TPC-H `tables` at one scale factor, codec and
/// thread count.
struct Tpchgen {
    scale_factor: f64,
    codec: &'static str,
    threads: usize,
    tables: &'static str,
}

impl Tpchgen {
    /// Case `name` of this peer, `work` rows (run by the Python helper
    /// beside the harness's interpreter).
    fn case(&self, cfg: &Config, dir: &Arc<tempfile::TempDir>, name: &str, work: f64) -> Case {
        let mut request = peer_timing(cfg);
        request["name"] = name.into();
        request["dir"] = dir.path().display().to_string().into();
        request["scale_factor"] = self.scale_factor.into();
        request["codec"] = self.codec.into();
        request["threads"] = self.threads.into();
        request["tables"] = self.tables.into();
        let subject = "tpchgen-cli";
        let names = [name.to_string()];
        let reply = python_peer(cfg, TPCHGEN_PEER, &request, subject, &names);
        Case {
            name: name.into(),
            subject: subject.into(),
            unit: Unit::Rows,
            work,
            repeats: 1,
            body: peer_body(&reply, name),
        }
    }
}

/// The settings of a case beside `tpchgen-cli`: the CLI's defaults (seed
/// 42, 4 files, batches of 8192 rows, row groups of 2^20) with `threads`
/// and `compression`, into `dir/STEM-LABEL`, replacing the last run's.
fn peer_config(
    stem: &str,
    label: &str,
    compression: Compression,
    dir: &tempfile::TempDir,
    threads: usize,
) -> GenerateConfig {
    GenerateConfig {
        threads,
        compression,
        output_dir: PathBuf::from(dir.path()).join(format!("{stem}-{label}")),
        overwrite: true,
        ..GenerateConfig::new(stem)
    }
}

/// A dataset preset's `tables` (all of them when empty) against
/// `tpchgen-cli` writing TPC-H's `peer_tables` (`peer_rows` rows at
/// `scale`), at one scale factor, with Snappy and with zstd level 1;
/// `label` names the tables in the case.
struct DatasetPair {
    preset: &'static str,
    tables: &'static [&'static str],
    label: &'static str,
    peer_tables: &'static str,
    peer_rows: fn(f64) -> f64,
}

/// The `orders` dataset's `orders` and `lineitem` tables beside
/// `tpchgen-cli`'s, and the `tpch` preset's eight tables beside all of
/// `tpchgen-cli`'s.
const DATASET_PAIRS: [DatasetPair; 2] = [
    DatasetPair {
        preset: "orders",
        tables: &["orders", "lineitem"],
        label: "orders + lineitem",
        peer_tables: "orders,lineitem",
        peer_rows: |s| (1_500_000.0 * s + LINEITEM_SF1_ROWS as f64 * s).round(),
    },
    DatasetPair {
        preset: "tpch",
        tables: &[],
        label: "tpch (8 tables)",
        peer_tables: "region,nation,supplier,part,partsupp,customer,orders,lineitem",
        peer_rows: |s| {
            30.0 + (10_000.0 * s).round()
                + 5.0 * (200_000.0 * s).round()
                + (150_000.0 * s).round()
                + (1_500_000.0 * s).round()
                + (LINEITEM_SF1_ROWS as f64 * s).round()
        },
    },
];

fn dataset_cases(
    cfg: &Config,
    dir: &Arc<tempfile::TempDir>,
    threads: usize,
    pair: &DatasetPair,
) -> Result<Vec<Case>, Error> {
    let scale = match cfg.size {
        Size::Tiny => 0.005,
        Size::Full => 1.0,
    };
    let dataset = strata_gen::Dataset::preset(pair.preset).map_err(case_err)?;
    let tables: Vec<usize> = if pair.tables.is_empty() {
        (0..dataset.tables.len()).collect()
    } else {
        pair.tables
            .iter()
            .map(|t| {
                dataset
                    .table(t)
                    .ok_or_else(|| Error::Case(format!("no table {t}")))
            })
            .collect::<Result<_, _>>()?
    };
    let mut out = vec![];
    for (label, compression, codec) in [
        ("parquet snappy", Compression::Snappy, "SNAPPY"),
        ("parquet zstd", Compression::Zstd(1), "ZSTD(1)"),
    ] {
        let base = peer_config(pair.preset, label, compression, dir, threads);
        let flow = strata_pipeline::flow::Flow::new(dataset.clone(), &tables, &base, scale)
            .map_err(case_err)?;
        let mut rows = 0;
        for (g, c) in flow.jobs() {
            rows += g.rows_of(0, c.target_records).map_err(case_err)?;
        }
        let name = format!("generate {}, scale {scale}/{label}", pair.label);
        let keep = dir.clone();
        let output = base.output_dir.clone();
        out.push(Case {
            name: name.clone(),
            subject: "strata".into(),
            unit: Unit::Rows,
            work: rows as f64,
            repeats: 1,
            body: Body::Staged {
                setup: remove_output(output),
                run: Box::new(move || {
                    let _keep = &keep;
                    flow.run(Default::default(), &|_| {}).map_err(case_err)?;
                    Ok(())
                }),
            },
        });
        let peer = Tpchgen {
            scale_factor: scale,
            codec,
            threads,
            tables: pair.peer_tables,
        };
        out.push(peer.case(cfg, dir, &name, (pair.peer_rows)(scale)));
    }
    Ok(out)
}

/// Runs the reference program `cfg.warmup` times untimed and `cfg.runs`
/// times timed (wall clock, and the child's CPU time), each run into an
/// emptied `dir`.
fn reference_body(
    cfg: &Config,
    program: &Path,
    rows: u64,
    dir: &Path,
    writers: usize,
) -> Result<Body, Error> {
    let mut samples = Vec::new();
    for run in 0..cfg.warmup + cfg.runs {
        let _ = std::fs::remove_dir_all(dir);
        let cpu0 = strata_pipeline::clock::children_cpu_seconds();
        let t0 = Instant::now();
        let output = Command::new(program)
            .arg("--target-records")
            .arg(rows.to_string())
            .arg("--num-writers")
            .arg(writers.to_string())
            .arg("--output-dir")
            .arg(dir)
            .arg("--output-filename")
            .arg("contacts")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| Error::Case(format!("--reference {}: {e}", program.display())))?;
        let wall = t0.elapsed().as_secs_f64();
        let cpu = strata_pipeline::clock::children_cpu_seconds() - cpu0;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(Error::Case(format!(
                "--reference {} failed ({}): {}",
                program.display(),
                output.status,
                stderr.trim().lines().last().unwrap_or("no message")
            )));
        }
        if run >= cfg.warmup {
            samples.push(Sample { wall, cpu });
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(Body::Measured(samples))
}

/// A name table's entries as strings.
fn names(table: &strata_gen::names::NameTable) -> Vec<String> {
    (0..table.len())
        .map(|i| String::from_utf8_lossy(table.get(i)).into_owned())
        .collect()
}
