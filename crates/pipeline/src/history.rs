//! A table's history written out: for each table of a run whose spec has
//! `changes`, the change stream of every version after version 0 (which
//! the run's files hold), one Hive partition per version:
//! `OUTPUT/NAME_changes/version=K/NAME_changes_0.parquet` (for a part,
//! `NAME_changes_partIofN_0.parquet`), the counts of each version's
//! operations, and the table's slowly changing dimension (type 2,
//! `OUTPUT/NAME_scd2/NAME_scd2_0.parquet`); or, as Iceberg or Delta
//! tables, one snapshot or commit per version.
//!
//! A part writes the changes of its own ids: its slice of version 0's
//! rows and the same slice of each version's inserted rows, so the parts
//! together hold every change once, whatever their count
//! ([`strata_changes::history`]).

use std::{
    collections::BTreeMap,
    io::BufWriter,
    ops::Range,
    path::{Path, PathBuf},
};

use strata_changes::{
    child::ChildImages,
    history::History,
    stream::{Images, OpCounts, op_counts},
};
use strata_parquet::writer::ParquetWriter;
use strata_store::{FromStore as _, output::PendingFile};

use crate::{Error, flow::Flow, generate::Part};

/// The rows of a table with a history.
#[derive(Debug)]
pub enum Rows {
    /// A table with `changes`: its rows by id, at any version.
    Own(Images),
    /// A child table of one: its rows by root row.
    Child(Box<ChildImages>),
}

impl Rows {
    fn stream_schema(&self) -> arrow_schema::SchemaRef {
        match self {
            Rows::Own(i) => i.stream_schema(),
            Rows::Child(c) => c.stream_schema(),
        }
    }

    fn changes(
        &self,
        h: &History,
        v: u64,
        ids: Range<u64>,
    ) -> Result<arrow_array::RecordBatch, Error> {
        Ok(match self {
            Rows::Own(i) => i.changes(h, v, ids)?,
            Rows::Child(c) => c.changes(h, v, ids)?,
        })
    }

    fn scd2_schema(&self) -> arrow_schema::SchemaRef {
        match self {
            Rows::Own(i) => i.scd2_schema(),
            Rows::Child(c) => c.scd2_schema(),
        }
    }

    fn scd2(&self, h: &History, ids: Range<u64>) -> Result<arrow_array::RecordBatch, Error> {
        Ok(match self {
            Rows::Own(i) => i.scd2(h, ids)?,
            Rows::Child(c) => c.scd2(h, ids)?,
        })
    }
}

/// Ids per batch of a stream.
const BATCH_IDS: u64 = 65_536;

/// What a table's history run wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The table.
    pub table: String,
    /// The stream's directory (`version=K` partitions in it).
    pub dir: PathBuf,
    /// The slowly changing dimension's file and rows.
    pub scd2: (PathBuf, u64),
    /// False for a child table (its rows follow its root's; the counts
    /// are zero).
    pub own: bool,
    /// Per version from 1: its file, rows and operation counts (over this
    /// part's ids).
    pub versions: Vec<(PathBuf, u64, OpCounts)>,
    /// Of the updates and deletes, the share on the hottest 1% of the
    /// rows (hot-key skew; 0.01 when every row is alike).
    pub hot_share: f64,
}

/// Part `part` of `range` (`index` from 1 of `count` equal slices).
fn slice(range: Range<u64>, part: Part) -> Range<u64> {
    let n = u128::from(range.end - range.start);
    let c = u128::from(part.count.max(1));
    let at = |k: u64| range.start + (n * u128::from(k) / c) as u64;
    at(part.index.saturating_sub(1))..at(part.index)
}

impl Flow {
    /// The tables of the run with a history: those whose specs have
    /// `changes`, and the child tables of such a table (their rows follow
    /// their root rows'), each with its history (its root's, for a child
    /// table) and its rows.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] with `--row-offset` (a history starts at
    /// row 0); the generator's errors.
    pub fn histories(&self) -> Result<Vec<(usize, History, Rows)>, Error> {
        let mut out = Vec::new();
        for (j, (_, cfg)) in self.jobs().iter().enumerate() {
            let ti = self.tables()[j];
            let dataset = self.dataset();
            let spec = &dataset.tables[ti].spec;
            let root = dataset.root_of(ti);
            let root_spec = &dataset.tables[root].spec;
            let (Some(changes), Some(key)) = (&root_spec.changes, &root_spec.primary_key) else {
                continue;
            };
            if cfg.row_offset != 0 {
                return Err(Error::InvalidConfig(format!(
                    "table `{}` has a history, which starts at row 0: leave out --row-offset",
                    spec.name
                )));
            }
            let (seed, scale) = (cfg.seed, self.scale());
            let mut history = History::new(changes, cfg.target_records, seed);
            if changes.on_delete == strata_gen::OnDelete::KeepParent {
                history.protect(self.with_children(root, history.total(), seed)?);
            }
            let rows = if root == ti {
                let dataset = dataset.clone();
                let fields = changes.update_fields.clone();
                Rows::Own(Images::new(
                    Box::new(move |v| {
                        let salted = v.map(|v| (fields.as_slice(), v));
                        strata_gen::SpecGenerator::for_table_salted(
                            &dataset, ti, seed, scale, salted,
                        )
                    }),
                    key,
                )?)
            } else {
                Rows::Child(Box::new(ChildImages::new(
                    dataset.generator(ti, seed, scale)?,
                    spec.primary_key.as_deref(),
                    changes.on_delete,
                )?))
            };
            out.push((j, history, rows));
        }
        Ok(out)
    }

    /// Which of the `total` rows of root table `root` have children in a
    /// table `children_of` it (`keep_parent` never deletes them).
    fn with_children(&self, root: usize, total: u64, seed: u64) -> Result<Vec<bool>, Error> {
        let dataset = self.dataset();
        let mut has = vec![false; usize::try_from(total).unwrap_or(usize::MAX)];
        for (c, t) in dataset.tables.iter().enumerate() {
            if c == root || dataset.root_of(c) != root {
                continue;
            }
            if t.children_of.as_ref().map(|p| p.parent.as_str())
                != Some(dataset.tables[root].spec.name.as_str())
            {
                continue;
            }
            let g = dataset.generator(c, seed, self.scale())?;
            for (r, h) in has.iter_mut().enumerate() {
                if !*h && g.rows_of(r as u64, 1)? > 0 {
                    *h = true;
                }
            }
        }
        Ok(has)
    }

    /// Writes the change stream of every version of each table with a
    /// history, for part `part` of its ids, next to the table's files
    /// (`OUTPUT/NAME_changes/version=K/`), in `format`; and the table's
    /// SCD2 history (`OUTPUT/NAME_scd2/`, Parquet).
    ///
    /// # Errors
    /// As [`Flow::histories`]; [`strata_store::Error::OutputExists`] for
    /// a stream file that exists without `overwrite`; IO and write
    /// errors.
    pub fn write_streams(&self, part: Part, format: StreamFormat) -> Result<Vec<Written>, Error> {
        let mut out = Vec::new();
        for (j, history, images) in self.histories()? {
            let cfg = &self.jobs()[j].1;
            let name = cfg.output_filename.clone();
            let own = matches!(images, Rows::Own(_));
            let base = if self.is_dataset() {
                cfg.output_dir
                    .parent()
                    .map_or_else(|| cfg.output_dir.clone(), Path::to_path_buf)
            } else {
                cfg.output_dir.clone()
            };
            let dir = base.join(format!("{name}_changes"));
            let stem = if part.count > 1 {
                format!("{name}_changes_part{}of{}_0", part.index, part.count)
            } else {
                format!("{name}_changes_0")
            };
            let compression = cfg.compression;
            let mut versions = Vec::new();
            let (mut hot, mut changed) = (0u64, 0u64);
            for v in 1..=history.versions() {
                let target = dir
                    .join(format!("version={v}"))
                    .join(format!("{stem}.{}", format.extension()));
                let ranges = part_ranges(&history, v, part);
                let batches = ranges
                    .iter()
                    .flat_map(|r| chunks(r.clone()))
                    .map(|ids| images.changes(&history, v, ids));
                let stream = Local {
                    target: &target,
                    overwrite: cfg.overwrite,
                    format,
                    compression,
                    table: &name,
                };
                let rows = stream.write(images.stream_schema(), batches)?;
                let mut counts = OpCounts::default();
                if own {
                    for ids in ranges.into_iter().flat_map(chunks) {
                        counts += op_counts(&history, v, ids);
                    }
                }
                changed += counts.updates + counts.deletes;
                hot += counts.hot;
                versions.push((target, rows, counts));
            }
            // The slowly changing dimension of the same ids.
            let scd_stem = stem.replacen("_changes", "_scd2", 1);
            let target = base
                .join(format!("{name}_scd2"))
                .join(format!("{scd_stem}.parquet"));
            let batches = part_ranges(&history, history.versions(), part)
                .into_iter()
                .flat_map(chunks)
                .map(|ids| images.scd2(&history, ids));
            let scd2 = Local {
                target: &target,
                overwrite: cfg.overwrite,
                format: StreamFormat::Parquet,
                compression,
                table: &name,
            };
            let scd_rows = scd2.write(images.scd2_schema(), batches)?;
            out.push(Written {
                table: name,
                own,
                dir,
                scd2: (target, scd_rows),
                versions,
                hot_share: if changed == 0 {
                    0.0
                } else {
                    hot as f64 / changed as f64
                },
            });
        }
        Ok(out)
    }
}

/// The file format of a change stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamFormat {
    /// Parquet, in the run's codec.
    #[default]
    Parquet,
    /// Arrow IPC files.
    Ipc,
    /// JSON lines, one object per change: `op`, `version`, `ts_ms`, the
    /// key, `before` and `after` (`null` where there is none).
    JsonLines,
    /// JSON lines of Debezium's change event value: `before`, `after`,
    /// `source` (`connector` "strata", `table`, `version`), `op` and
    /// `ts_ms`, as Kafka Connect's JSON converter writes it without
    /// schemas.
    Debezium,
}

impl std::str::FromStr for StreamFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "parquet" => Ok(StreamFormat::Parquet),
            "ipc" => Ok(StreamFormat::Ipc),
            "jsonl" => Ok(StreamFormat::JsonLines),
            "debezium" => Ok(StreamFormat::Debezium),
            _ => Err(Error::InvalidConfig(format!(
                "unknown change stream format '{s}' (parquet, ipc, jsonl or debezium)"
            ))),
        }
    }
}

impl StreamFormat {
    /// The files' extension.
    pub fn extension(self) -> &'static str {
        match self {
            StreamFormat::Parquet => "parquet",
            StreamFormat::Ipc => "arrow",
            StreamFormat::JsonLines | StreamFormat::Debezium => "jsonl",
        }
    }
}

/// A local output of a history: the file `target` (replacing one there
/// only when `overwrite`), in `format` (Parquet in `compression`), of
/// table `table` (named in Debezium's `source`).
struct Local<'a> {
    target: &'a Path,
    overwrite: bool,
    format: StreamFormat,
    compression: strata_parquet::Compression,
    table: &'a str,
}

impl Local<'_> {
    /// Writes `batches` (of `schema`) as the file, its directory made,
    /// visible once complete and synced; returns its rows.
    fn write(
        &self,
        schema: arrow_schema::SchemaRef,
        batches: impl Iterator<Item = Result<arrow_array::RecordBatch, Error>>,
    ) -> Result<u64, Error> {
        use std::io::Write as _;
        let target = self.target;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io("create the directory", parent, e))?;
        }
        let (pending, file) = PendingFile::create(target.to_path_buf(), self.overwrite)?;
        let out = BufWriter::with_capacity(1 << 20, file);
        let arrow = |e: arrow_schema::ArrowError| Error::Write(strata_parquet::Error::Arrow(e));
        let mut rows = 0u64;
        let batches = batches.map(|b| {
            let b = b?;
            rows += b.num_rows() as u64;
            Ok::<_, Error>(b)
        });
        let mut out = match self.format {
            StreamFormat::Parquet => {
                let codec = strata_parquet::encoder::parquet_codec(self.compression)
                    .map_err(Error::Write)?;
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(codec)
                    .build();
                let mut w = ParquetWriter::try_new(out, schema, props).map_err(Error::Write)?;
                for b in batches {
                    let b = b?;
                    if b.num_rows() > 0 {
                        w.write(&b).map_err(Error::Write)?;
                    }
                }
                w.finish().map_err(Error::Write)?
            }
            StreamFormat::Ipc => {
                let mut w = strata_parquet::ipc::IpcFileWriter::try_new(
                    out,
                    &schema,
                    arrow_ipc::writer::IpcWriteOptions::default(),
                )
                .map_err(Error::Write)?;
                for b in batches {
                    w.write(&b?).map_err(Error::Write)?;
                }
                w.finish().map_err(Error::Write)?
            }
            StreamFormat::JsonLines | StreamFormat::Debezium => {
                let mut w = arrow_json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build::<_, arrow_json::writer::LineDelimited>(out);
                for b in batches {
                    let b = b?;
                    let b = if self.format == StreamFormat::Debezium {
                        debezium(&b, self.table).map_err(arrow)?
                    } else {
                        b
                    };
                    w.write(&b).map_err(arrow)?;
                }
                w.finish().map_err(arrow)?;
                w.into_inner()
            }
        };
        out.flush().map_err(|e| Error::io("write", target, e))?;
        let f = out
            .into_inner()
            .map_err(|e| Error::io("write", target, e.into_error()))?;
        f.sync_all().map_err(|e| Error::io("sync", target, e))?;
        pending.commit()?;
        Ok(rows)
    }
}

/// A change stream batch as Debezium change event values: `before`,
/// `after`, `source` (`connector`, `table`, `version`), `op`, `ts_ms`.
fn debezium(
    b: &arrow_array::RecordBatch,
    table: &str,
) -> Result<arrow_array::RecordBatch, arrow_schema::ArrowError> {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, StringArray, StructArray};
    use arrow_schema::{DataType, Field};
    let column = |name: &str| {
        b.column_by_name(name).cloned().ok_or_else(|| {
            arrow_schema::ArrowError::SchemaError(format!("a change stream has no `{name}`"))
        })
    };
    let n = b.num_rows();
    let source = StructArray::try_new(
        vec![
            Field::new("connector", DataType::Utf8, false),
            Field::new("table", DataType::Utf8, false),
            Field::new("version", DataType::UInt64, false),
        ]
        .into(),
        vec![
            Arc::new(StringArray::from(vec!["strata"; n])) as ArrayRef,
            Arc::new(StringArray::from(vec![table; n])),
            column("version")?,
        ],
        None,
    )?;
    arrow_array::RecordBatch::try_from_iter([
        ("before", column("before")?),
        ("after", column("after")?),
        ("source", Arc::new(source) as ArrayRef),
        ("op", column("op")?),
        ("ts_ms", column("ts_ms")?),
    ])
}

/// Part `part`'s ids of version 0 and of each version's inserts up to
/// version `upto`.
fn part_ranges(h: &History, upto: u64, part: Part) -> Vec<Range<u64>> {
    let mut ranges = vec![slice(0..h.ids_at(0), part)];
    for u in 1..=upto {
        ranges.push(slice(h.ids_at(u - 1)..h.ids_at(u), part));
    }
    ranges
}

/// `r` in runs of at most [`BATCH_IDS`] ids.
fn chunks(r: Range<u64>) -> impl Iterator<Item = Range<u64>> {
    (r.start..r.end)
        .step_by(BATCH_IDS as usize)
        .map(move |at| at..(at + BATCH_IDS).min(r.end))
}

/// A data file of a table with a history: the ids of its rows, in the
/// order it holds them (ascending).
struct Tracked {
    /// Its path relative to the table.
    rel: String,
    ids: Vec<u64>,
    /// For a child table's file (its ids are root rows): where each root
    /// row's children start in it, and after the last, their end.
    starts: Vec<u64>,
}

/// Where each row of a history lives: its file, or none (deleted or not
/// born).
const NOWHERE: u32 = u32::MAX;

impl Flow {
    /// Refuses, before anything is written, histories written as Iceberg
    /// or Delta tables in `mode` that their tables cannot take: a table
    /// with a layout (a history is written over files of contiguous rows
    /// yet), and equality deletes for a child table (whose rows change
    /// with its parent's, deleted by position).
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] naming the table.
    pub fn check_table_histories(&self, mode: WriteMode) -> Result<(), Error> {
        let dataset = self.dataset();
        for (j, &ti) in self.tables().iter().enumerate() {
            let root = dataset.root_of(ti);
            let root_spec = &dataset.tables[root].spec;
            if root_spec.changes.is_none() || root_spec.primary_key.is_none() {
                continue;
            }
            let name = &dataset.tables[ti].spec.name;
            if self.jobs()[j].1.layout.is_some() {
                return Err(Error::InvalidConfig(format!(
                    "table `{name}`: a history is written over a table without a layout \
                     (partitions, a sort order, file sizes) yet"
                )));
            }
            if root != ti && mode == WriteMode::EqualityDeletes {
                return Err(Error::InvalidConfig(format!(
                    "table `{name}` changes with its parent's history: its rows are deleted by \
                     position (equality deletes are on a table's own primary key)"
                )));
            }
        }
        Ok(())
    }
}

impl Flow {
    /// [`Flow::histories`] of tables written as Iceberg or Delta tables in
    /// `mode`, each with its table's name.
    ///
    /// # Errors
    /// As [`Flow::histories`] and [`Flow::check_table_histories`].
    fn table_histories(
        &self,
        mode: WriteMode,
    ) -> Result<Vec<(usize, String, History, Rows)>, Error> {
        self.check_table_histories(mode)?;
        Ok(self
            .histories()?
            .into_iter()
            .map(|(j, history, rows)| {
                let name = strata_gen::BatchGenerator::name(&self.jobs()[j].0).to_string();
                (j, name, history, rows)
            })
            .collect())
    }

    /// Commits the history of each Iceberg table whose spec has
    /// `changes`, version 0 just committed from `summaries`: one snapshot
    /// per later version, merge-on-read (the rows a version updates or
    /// deletes deleted by position from the files that hold them, the
    /// updated and inserted rows in a new data file), each committed as
    /// [`strata_table::iceberg::commit_change`] does, with the catalog's
    /// entry moved along. Returns, per such table, its name and the
    /// snapshots.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a table with a layout (a history is
    /// written over the files of contiguous rows yet); the generator's,
    /// writer's and commit's errors.
    pub fn commit_history_iceberg(
        &self,
        tables: &crate::table::IcebergTables,
        summaries: &[crate::generate::Summary],
        mode: WriteMode,
    ) -> Result<Vec<(String, Vec<strata_table::iceberg::Committed>)>, Error> {
        let mut out = Vec::new();
        for (j, name, history, rows) in self.table_histories(mode)? {
            let cfg = &self.jobs()[j].1;
            let dir = &tables.dirs[j];
            let schema = &tables.schemas[j];
            let images = match rows {
                Rows::Own(images) => images,
                Rows::Child(ci) => {
                    let versions =
                        self.iceberg_child_history(j, &history, &ci, tables, &summaries[j])?;
                    out.push((name, versions));
                    continue;
                }
            };
            let (mut home, mut files) = track(&history, cfg, &summaries[j], dir, &name)?;
            let steps = Steps {
                h: &history,
                images: &images,
                dir,
                schema: schema.arrow.clone(),
                compression: cfg.compression,
            };
            let run = strata_table::run_id();
            let mut committed = Vec::new();
            for v in 1..=history.versions() {
                let prefix = format!("data/{}-{run}-v{v}", cfg.output_filename);
                // Iceberg changes in place unless copy-on-write is asked.
                let in_place =
                    (mode != WriteMode::CopyOnWrite).then_some(mode == WriteMode::EqualityDeletes);
                let step = steps.step(in_place, &mut files, &mut home, v, &prefix)?;
                if step.added.is_empty()
                    && step.removed.is_empty()
                    && step.deletes.is_empty()
                    && step.keys.is_empty()
                {
                    continue;
                }
                let equality_deletes = if step.keys.is_empty() {
                    Vec::new()
                } else {
                    vec![images.keys(&step.keys)?]
                };
                let added = step.added;
                let position_deletes = step
                    .deletes
                    .into_iter()
                    .map(|(f, positions)| strata_table::iceberg::PositionDeletes {
                        file: files[f as usize].rel.clone(),
                        positions,
                    })
                    .collect();
                let change = strata_table::iceberg::Change {
                    table: strata_table::iceberg::NewTable {
                        location: dir,
                        schema,
                        arrow: &schema.arrow,
                        partition: &crate::table::partition_fields(cfg),
                        sort: &crate::table::sort_fields(cfg),
                        properties: crate::table::table_properties(cfg, schema),
                        files: &added,
                    },
                    removed: step.removed,
                    position_deletes,
                    equality_deletes,
                    replace: false,
                };
                committed.push(crate::table::commit_change_with_catalog(
                    &change,
                    tables.catalog.as_ref(),
                    &name,
                )?);
            }
            out.push((name, committed));
        }
        Ok(out)
    }
}

impl Flow {
    /// Commits the history of each Delta table whose spec has `changes`,
    /// version 0 just committed from `summaries`: one version per later
    /// version, copy-on-write (each file holding a row the version
    /// updates or deletes removed, and written again with the rows alive
    /// then, as they then are; the inserted rows in a new file), a
    /// `MERGE` on the primary key committed as
    /// [`strata_table::delta::commit_change`] does. Returns, per such
    /// table, its name and the versions.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a table with a layout; the
    /// generator's, writer's and commit's errors (a conflict with another
    /// writer aborts the history, the versions before it committed).
    pub fn commit_history_delta(
        &self,
        tables: &crate::table::DeltaTables,
        summaries: &[crate::generate::Summary],
        committed: &[strata_table::delta::Committed],
        mode: WriteMode,
    ) -> Result<Vec<(String, Vec<strata_table::delta::Committed>)>, Error> {
        let cdf = tables
            .configuration
            .get(strata_table::delta::properties::CHANGE_DATA_FEED)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let mut out = Vec::new();
        for (j, name, history, rows) in self.table_histories(mode)? {
            let cfg = &self.jobs()[j].1;
            let dir = &tables.dirs[j];
            let images = match rows {
                Rows::Own(images) => images,
                Rows::Child(ci) => {
                    let read = committed.get(j).map_or(0, |c| c.version);
                    let versions =
                        self.delta_child_history(j, &history, &ci, dir, &summaries[j], read, cdf)?;
                    out.push((name, versions));
                    continue;
                }
            };
            let key = self.dataset().tables[self.tables()[j]]
                .spec
                .primary_key
                .clone()
                .unwrap_or_default();
            let (mut home, mut files) = track(&history, cfg, &summaries[j], dir, &name)?;
            let steps = Steps {
                h: &history,
                images: &images,
                dir,
                schema: images.schema(),
                compression: cfg.compression,
            };
            let run = strata_table::run_id();
            let mut read_version = committed.get(j).map_or(0, |c| c.version);
            let mut versions = Vec::new();
            for v in 1..=history.versions() {
                let prefix = format!("{}-{run}-v{v}", cfg.output_filename);
                // Delta rewrites files unless deletion vectors are asked.
                let in_place = (mode == WriteMode::DeletionVectors).then_some(false);
                let step = steps.step(in_place, &mut files, &mut home, v, &prefix)?;
                let counts = step.counts;
                let (added, removed) = (step.added, step.removed);
                let deleted_rows: Vec<strata_table::delta::DeletedRows> = step
                    .deletes
                    .into_iter()
                    .map(|(f, rows)| strata_table::delta::DeletedRows {
                        path: files[f as usize].rel.clone(),
                        rows,
                    })
                    .collect();
                let change_files = if cdf {
                    let batches =
                        cdc_batches(&images.changes(&history, v, 0..history.ids_at(v))?)?;
                    if batches.is_empty() {
                        Vec::new()
                    } else {
                        vec![strata_table::delta::cdc::write(
                            dir,
                            &strata_table::delta::cdc::path("", &format!("{prefix}.parquet")),
                            &batches,
                        )?]
                    }
                } else {
                    Vec::new()
                };
                if added.is_empty() && removed.is_empty() && deleted_rows.is_empty() {
                    // Nothing changed at this version: no commit.
                    continue;
                }
                let clause = |n: u64, what: &str| (n > 0).then(|| what.to_string());
                let change = strata_table::delta::Change {
                    location: dir,
                    read_version,
                    operation: strata_table::delta::Operation::Merge {
                        predicate: format!("target.{key} = source.{key}"),
                        matched: [clause(counts[1], "update"), clause(counts[2], "delete")]
                            .into_iter()
                            .flatten()
                            .collect(),
                        not_matched: clause(counts[0], "insert").into_iter().collect(),
                        not_matched_by_source: Vec::new(),
                    },
                    added: &added,
                    removed: &removed,
                    data_change: true,
                    change_files: &change_files,
                    also_read: &[],
                    deleted_rows: &deleted_rows,
                };
                let c = strata_table::delta::commit_change(&change)?;
                read_version = c.version;
                versions.push(c);
            }
            out.push((name, versions));
        }
        Ok(out)
    }
}

impl Flow {
    /// The history of child table `j` (rows `ci`, its root's history
    /// `h`) as Iceberg snapshots: the children of the roots a version
    /// deletes deleted by position (under `cascade`), the children of the
    /// roots it inserts in a new data file.
    fn iceberg_child_history(
        &self,
        j: usize,
        h: &History,
        ci: &ChildImages,
        tables: &crate::table::IcebergTables,
        summary: &crate::generate::Summary,
    ) -> Result<Vec<strata_table::iceberg::Committed>, Error> {
        let (generator, cfg) = &self.jobs()[j];
        let name = strata_gen::BatchGenerator::name(generator).to_string();
        let dir = &tables.dirs[j];
        let schema = &tables.schemas[j];
        let (mut home, mut files) = track(h, cfg, summary, dir, &name)?;
        for f in &mut files {
            f.starts = starts(ci, h, 0, &f.ids)?;
        }
        let run = strata_table::run_id();
        let mut committed = Vec::new();
        for v in 1..=h.versions() {
            let mut deletes: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
            for r in 0..h.ids_at(v - 1) {
                let at = home[r as usize];
                if at == NOWHERE || h.state(r, v) != strata_changes::history::State::Deleted(v) {
                    continue;
                }
                if !matches!(
                    h.state(r, v - 1),
                    strata_changes::history::State::Alive { .. }
                ) {
                    continue;
                }
                home[r as usize] = NOWHERE;
                if self.dataset().tables[self.dataset().root_of(self.tables()[j])]
                    .spec
                    .changes
                    .as_ref()
                    .is_some_and(|c| c.on_delete != strata_gen::OnDelete::Cascade)
                {
                    continue;
                }
                let f = &files[at as usize];
                let k = f.ids.binary_search(&r).map_err(|_| {
                    Error::InvalidConfig(format!(
                        "table `{name}`: root row {r} is not in {}",
                        f.rel
                    ))
                })?;
                deletes
                    .entry(at)
                    .or_default()
                    .extend(f.starts[k]..f.starts[k + 1]);
            }
            let mut added = Vec::new();
            let born: Vec<u64> = (h.ids_at(v - 1)..h.ids_at(v)).collect();
            if !born.is_empty() {
                let batches = child_batches(ci, h, v, &born)?;
                if batches.iter().any(|b| b.num_rows() > 0) {
                    let rel = format!("data/{}-{run}-v{v}_0.parquet", cfg.output_filename);
                    let facts = write_batches(
                        batches.into_iter().map(Ok),
                        dir,
                        &rel,
                        schema.arrow.clone(),
                        cfg.compression,
                    )?;
                    let starts = starts(ci, h, v, &born)?;
                    push_file(&mut files, &mut home, rel.clone(), born, starts);
                    added.push((rel, facts));
                }
            }
            let position_deletes: Vec<_> = deletes
                .into_iter()
                .filter(|(_, p)| !p.is_empty())
                .map(|(f, positions)| strata_table::iceberg::PositionDeletes {
                    file: files[f as usize].rel.clone(),
                    positions,
                })
                .collect();
            if added.is_empty() && position_deletes.is_empty() {
                continue;
            }
            let change = strata_table::iceberg::Change {
                table: strata_table::iceberg::NewTable {
                    location: dir,
                    schema,
                    arrow: &schema.arrow,
                    partition: &crate::table::partition_fields(cfg),
                    sort: &crate::table::sort_fields(cfg),
                    properties: crate::table::table_properties(cfg, schema),
                    files: &added,
                },
                removed: Vec::new(),
                position_deletes,
                equality_deletes: Vec::new(),
                replace: false,
            };
            committed.push(crate::table::commit_change_with_catalog(
                &change,
                tables.catalog.as_ref(),
                &name,
            )?);
        }
        Ok(committed)
    }

    /// The history of child table `j` as Delta versions, copy-on-write:
    /// each file holding children of roots a version deletes (under
    /// `cascade`) written again without them, the children of the roots
    /// it inserts in a new file.
    #[allow(clippy::too_many_arguments)]
    fn delta_child_history(
        &self,
        j: usize,
        h: &History,
        ci: &ChildImages,
        dir: &strata_table::dir::TableDir,
        summary: &crate::generate::Summary,
        mut read_version: u64,
        cdf: bool,
    ) -> Result<Vec<strata_table::delta::Committed>, Error> {
        let (generator, cfg) = &self.jobs()[j];
        let name = strata_gen::BatchGenerator::name(generator).to_string();
        let cascade = self.dataset().tables[self.dataset().root_of(self.tables()[j])]
            .spec
            .changes
            .as_ref()
            .is_some_and(|c| c.on_delete == strata_gen::OnDelete::Cascade);
        let (mut home, mut files) = track(h, cfg, summary, dir, &name)?;
        let run = strata_table::run_id();
        let mut versions = Vec::new();
        for v in 1..=h.versions() {
            let mut affected = std::collections::BTreeSet::new();
            if cascade {
                for r in 0..h.ids_at(v - 1) {
                    let at = home[r as usize];
                    if at != NOWHERE && h.state(r, v) == strata_changes::history::State::Deleted(v)
                    {
                        affected.insert(at);
                    }
                }
            }
            let (mut added, mut removed) = (Vec::new(), Vec::new());
            let mut k = 0;
            for &f in &affected {
                removed.push(files[f as usize].rel.clone());
                let alive: Vec<u64> = files[f as usize]
                    .ids
                    .iter()
                    .copied()
                    .filter(|&r| {
                        let keep =
                            matches!(h.state(r, v), strata_changes::history::State::Alive { .. });
                        if !keep {
                            home[r as usize] = NOWHERE;
                        }
                        keep
                    })
                    .collect();
                let batches = child_batches(ci, h, v, &alive)?;
                if alive.is_empty() || batches.iter().all(|b| b.num_rows() == 0) {
                    continue;
                }
                let rel = format!("{}-{run}-v{v}_{k}.parquet", cfg.output_filename);
                k += 1;
                let facts = write_batches(
                    batches.into_iter().map(Ok),
                    dir,
                    &rel,
                    ci.schema(),
                    cfg.compression,
                )?;
                push_file(&mut files, &mut home, rel.clone(), alive, Vec::new());
                added.push((rel, facts));
            }
            let born: Vec<u64> = (h.ids_at(v - 1)..h.ids_at(v)).collect();
            let batches = child_batches(ci, h, v, &born)?;
            if batches.iter().any(|b| b.num_rows() > 0) {
                let rel = format!("{}-{run}-v{v}_{k}.parquet", cfg.output_filename);
                let facts = write_batches(
                    batches.into_iter().map(Ok),
                    dir,
                    &rel,
                    ci.schema(),
                    cfg.compression,
                )?;
                push_file(&mut files, &mut home, rel.clone(), born, Vec::new());
                added.push((rel, facts));
            }
            if added.is_empty() && removed.is_empty() {
                continue;
            }
            let change_files = if cdf {
                let batches = cdc_batches(&ci.changes(h, v, 0..h.ids_at(v))?)?;
                if batches.is_empty() {
                    Vec::new()
                } else {
                    vec![strata_table::delta::cdc::write(
                        dir,
                        &strata_table::delta::cdc::path(
                            "",
                            &format!("{}-{run}-v{v}.parquet", cfg.output_filename),
                        ),
                        &batches,
                    )?]
                }
            } else {
                Vec::new()
            };
            let change = strata_table::delta::Change {
                location: dir,
                read_version,
                operation: if removed.is_empty() {
                    strata_table::delta::Operation::Write
                } else {
                    strata_table::delta::Operation::Delete {
                        predicate: Some("the parent row was deleted".into()),
                    }
                },
                added: &added,
                removed: &removed,
                data_change: true,
                change_files: &change_files,
                also_read: &[],
                deleted_rows: &[],
            };
            let c = strata_table::delta::commit_change(&change)?;
            read_version = c.version;
            versions.push(c);
        }
        Ok(versions)
    }
}

/// Where the children of each root row of `roots` (ascending, all
/// present at version `v`) start in a file that holds them in order,
/// and after the last, their end.
fn starts(ci: &ChildImages, h: &History, v: u64, roots: &[u64]) -> Result<Vec<u64>, Error> {
    let mut out = Vec::with_capacity(roots.len() + 1);
    let mut at = 0u64;
    for &r in roots {
        out.push(at);
        let present = matches!(h.state(r, v), strata_changes::history::State::Alive { .. });
        if present {
            at += ci.counts(r..r + 1)?[0];
        }
    }
    out.push(at);
    Ok(out)
}

/// How a history's versions change a table's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteMode {
    /// The format's usual way: merge-on-read for Iceberg, copy-on-write
    /// for Delta.
    #[default]
    Default,
    /// Rows deleted by position (Iceberg position delete files), the
    /// updated rows in a new file.
    MergeOnRead,
    /// Every file holding a changed row written again.
    CopyOnWrite,
    /// Rows deleted in Delta deletion vectors, the updated rows in a new
    /// file.
    DeletionVectors,
    /// Rows deleted by primary key (an Iceberg equality delete file per
    /// version), the updated rows in a new file.
    EqualityDeletes,
}

/// What a version does to a table's files.
#[derive(Default)]
struct Step {
    added: Vec<(String, strata_table::stats::FileFacts)>,
    removed: Vec<String>,
    /// Rows deleted in place, by file (its index) and position.
    deletes: BTreeMap<u32, Vec<u64>>,
    /// Rows deleted by key (equality deletes): their ids.
    keys: Vec<u64>,
    /// Inserts, updates and deletes.
    counts: [u64; 3],
}

/// What each version of one table's history is written with: the
/// history, the rows' images, the table, and the files' schema and codec.
struct Steps<'a> {
    h: &'a History,
    images: &'a Images,
    dir: &'a strata_table::dir::TableDir,
    schema: arrow_schema::SchemaRef,
    compression: strata_parquet::Compression,
}

impl Steps<'_> {
    /// Version `v` over the tracked `files` (and each row's `home`), its
    /// new files `PREFIX_K.parquet`: in place (`Some(by_key)`, see
    /// [`Steps::in_place`]) or copy-on-write (`None`, see
    /// [`Steps::copy_on_write`]).
    fn step(
        &self,
        in_place: Option<bool>,
        files: &mut Vec<Tracked>,
        home: &mut [u32],
        v: u64,
        prefix: &str,
    ) -> Result<Step, Error> {
        match in_place {
            Some(by_key) => self.in_place(files, home, v, prefix, by_key),
            None => self.copy_on_write(files, home, v, prefix),
        }
    }

    /// The rows `ids`, row `i` in image `imgs[i]`, written as the new
    /// file `rel` and tracked.
    fn add_file(
        &self,
        step: &mut Step,
        files: &mut Vec<Tracked>,
        home: &mut [u32],
        rel: String,
        ids: Vec<u64>,
        imgs: &[u64],
    ) -> Result<(), Error> {
        let facts = write_rows(
            self.images,
            &ids,
            imgs,
            self.dir,
            &rel,
            self.schema.clone(),
            self.compression,
        )?;
        push_file(files, home, rel.clone(), ids, Vec::new());
        step.added.push((rel, facts));
        Ok(())
    }

    /// Version `v` merge-on-read: the rows it updates or deletes deleted in
    /// place from the files that hold them (by position, or by key when
    /// `by_key`), the updated and inserted rows in a new file
    /// `PREFIX_0.parquet`.
    fn in_place(
        &self,
        files: &mut Vec<Tracked>,
        home: &mut [u32],
        v: u64,
        prefix: &str,
        by_key: bool,
    ) -> Result<Step, Error> {
        use strata_changes::history::Op;
        let h = self.h;
        let mut step = Step::default();
        let (mut new_ids, mut new_images) = (Vec::new(), Vec::new());
        for id in 0..h.ids_at(v) {
            let Some((op, _, after)) = h.change(id, v) else {
                continue;
            };
            step.counts[match op {
                Op::Insert => 0,
                Op::Update => 1,
                Op::Delete => 2,
            }] += 1;
            let at = home[id as usize];
            if op != Op::Insert && at != NOWHERE {
                if by_key {
                    step.keys.push(id);
                } else {
                    let f = &files[at as usize];
                    let pos = f.ids.binary_search(&id).map_err(|_| {
                        Error::InvalidConfig(format!("row {id} is not in {}", f.rel))
                    })?;
                    step.deletes.entry(at).or_default().push(pos as u64);
                }
                home[id as usize] = NOWHERE;
            }
            if let Some(image) = after {
                new_ids.push(id);
                new_images.push(if op == Op::Update { v } else { image });
            }
        }
        if !new_ids.is_empty() {
            let rel = format!("{prefix}_0.parquet");
            self.add_file(&mut step, files, home, rel, new_ids, &new_images)?;
        }
        Ok(step)
    }

    /// Version `v` copy-on-write: every file holding a row it updates or
    /// deletes removed and written again with the rows alive then, as they
    /// then are (`PREFIX_K.parquet`); the inserted rows in one more file.
    fn copy_on_write(
        &self,
        files: &mut Vec<Tracked>,
        home: &mut [u32],
        v: u64,
        prefix: &str,
    ) -> Result<Step, Error> {
        use strata_changes::history::{Op, State};
        let h = self.h;
        let mut step = Step::default();
        let (mut affected, mut inserted) = (std::collections::BTreeSet::new(), Vec::new());
        for id in 0..h.ids_at(v) {
            match h.change(id, v).map(|c| c.0) {
                Some(Op::Insert) => {
                    step.counts[0] += 1;
                    inserted.push(id);
                }
                Some(op) => {
                    step.counts[if op == Op::Update { 1 } else { 2 }] += 1;
                    let at = home[id as usize];
                    if at != NOWHERE {
                        affected.insert(at);
                    }
                }
                None => {}
            }
        }
        let mut k = 0;
        for &f in &affected {
            step.removed.push(files[f as usize].rel.clone());
            let (mut ids, mut imgs) = (Vec::new(), Vec::new());
            for i in 0..files[f as usize].ids.len() {
                let id = files[f as usize].ids[i];
                match h.state(id, v) {
                    State::Alive { image } => {
                        ids.push(id);
                        imgs.push(image);
                    }
                    _ => home[id as usize] = NOWHERE,
                }
            }
            if ids.is_empty() {
                continue;
            }
            let rel = format!("{prefix}_{k}.parquet");
            k += 1;
            self.add_file(&mut step, files, home, rel, ids, &imgs)?;
        }
        if !inserted.is_empty() {
            let rel = format!("{prefix}_{k}.parquet");
            let imgs = vec![0; inserted.len()];
            self.add_file(&mut step, files, home, rel, inserted, &imgs)?;
        }
        Ok(step)
    }
}

/// A version's change stream as Delta's change data: the rows an insert
/// brings (`insert`), an update's before and after (`update_preimage`,
/// `update_postimage`), a delete's before (`delete`).
fn cdc_batches(stream: &arrow_array::RecordBatch) -> Result<Vec<arrow_array::RecordBatch>, Error> {
    use arrow_array::{Array, StringArray, StructArray, UInt32Array};
    use strata_table::delta::cdc::{ChangeType, with_change_type};
    let n = stream.num_columns();
    let ops = stream
        .column(0)
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| Error::InvalidConfig("a change stream without `op`".into()))?;
    let side = |c: usize| -> Result<arrow_array::RecordBatch, Error> {
        let s = stream
            .column(c)
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| Error::InvalidConfig("a change stream without its images".into()))?;
        // The struct's own nulls (no image) are left out by the rows
        // picked below; its columns hold a row for every op.
        Ok(arrow_array::RecordBatch::try_new(
            std::sync::Arc::new(arrow_schema::Schema::new(s.fields().clone())),
            s.columns().to_vec(),
        )?)
    };
    let (before, after) = (side(n - 2)?, side(n - 1)?);
    let pick =
        |b: &arrow_array::RecordBatch, want: &[&str]| -> Result<arrow_array::RecordBatch, Error> {
            let idx: Vec<u32> = (0..ops.len())
                .filter(|&i| want.contains(&ops.value(i)))
                .map(|i| i as u32)
                .collect();
            Ok(arrow_select::take::take_record_batch(
                b,
                &UInt32Array::from(idx),
            )?)
        };
    let mut out = Vec::new();
    for (b, ops_of, change) in [
        (&after, &["c"][..], ChangeType::Insert),
        (&before, &["u"][..], ChangeType::UpdatePreimage),
        (&after, &["u"][..], ChangeType::UpdatePostimage),
        (&before, &["d"][..], ChangeType::Delete),
    ] {
        let rows = pick(b, ops_of)?;
        if rows.num_rows() > 0 {
            out.push(with_change_type(&rows, change)?);
        }
    }
    Ok(out)
}

/// Tracks file `rel` holding rows `ids` (and, for a child table's file,
/// where each root row's children start): every id's home is it.
fn push_file(
    files: &mut Vec<Tracked>,
    home: &mut [u32],
    rel: String,
    ids: Vec<u64>,
    starts: Vec<u64>,
) {
    let at = files.len() as u32;
    for &id in &ids {
        home[id as usize] = at;
    }
    files.push(Tracked { rel, ids, starts });
}

/// Where the rows of version 0 are: for each data file `summary` lists,
/// its path relative to table `dir` and the ids it holds (contiguous
/// ranges: a table without a layout), and for each id of the history its
/// file.
fn track(
    history: &History,
    cfg: &crate::generate::GenerateConfig,
    summary: &crate::generate::Summary,
    dir: &strata_table::dir::TableDir,
    name: &str,
) -> Result<(Vec<u32>, Vec<Tracked>), Error> {
    let total = history.ids_at(history.versions());
    if total >= u64::from(NOWHERE) {
        return Err(Error::InvalidConfig(format!(
            "table `{name}`: a history of more than {NOWHERE} rows"
        )));
    }
    let mut home = vec![NOWHERE; total as usize];
    let mut files: Vec<Tracked> = Vec::new();
    let rels = crate::table::data_paths(cfg, summary, dir, "")?;
    for (i, rel) in rels.into_iter().enumerate() {
        // The file's rows: its writer's (root rows, for a child table).
        push_file(
            &mut files,
            &mut home,
            rel,
            cfg.file_rows(i).collect(),
            Vec::new(),
        );
    }
    Ok((home, files))
}

/// Writes `batches` as Parquet file `rel` of table `dir` with `schema`,
/// created only if absent, and returns its facts.
fn write_batches(
    batches: impl IntoIterator<Item = Result<arrow_array::RecordBatch, Error>>,
    dir: &strata_table::dir::TableDir,
    rel: &str,
    schema: arrow_schema::SchemaRef,
    compression: strata_parquet::Compression,
) -> Result<strata_table::stats::FileFacts, Error> {
    let mut body = Vec::new();
    {
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(
                strata_parquet::encoder::parquet_codec(compression).map_err(Error::Write)?,
            )
            .build();
        let mut w = ParquetWriter::try_new(&mut body, schema, props).map_err(Error::Write)?;
        for b in batches {
            let b = b?;
            if b.num_rows() > 0 {
                w.write(&b).map_err(Error::Write)?;
            }
        }
        w.finish().map_err(Error::Write)?;
    }
    dir.put_new(rel, &body)?;
    Ok(dir.facts(rel)?)
}

/// The children present at version `v` of root rows `roots` (ascending),
/// as batches of contiguous runs of them.
fn child_batches(
    ci: &ChildImages,
    h: &History,
    v: u64,
    roots: &[u64],
) -> Result<Vec<arrow_array::RecordBatch>, Error> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < roots.len() {
        let mut j = i + 1;
        while j < roots.len() && roots[j] == roots[j - 1] + 1 && j - i < BATCH_IDS as usize {
            j += 1;
        }
        out.push(ci.at_version(h, v, roots[i]..roots[j - 1] + 1)?);
        i = j;
    }
    Ok(out)
}

/// Writes the rows `ids` (images `imgs`) of `images` as Parquet file
/// `rel` of table `dir` with `schema`, created only if absent, and
/// returns its facts.
fn write_rows(
    images: &Images,
    ids: &[u64],
    imgs: &[u64],
    dir: &strata_table::dir::TableDir,
    rel: &str,
    schema: arrow_schema::SchemaRef,
    compression: strata_parquet::Compression,
) -> Result<strata_table::stats::FileFacts, Error> {
    let batches = ids
        .chunks(BATCH_IDS as usize)
        .zip(imgs.chunks(BATCH_IDS as usize))
        .map(|(ids, imgs)| Ok(images.rows(ids, imgs)?));
    write_batches(batches, dir, rel, schema, compression)
}
