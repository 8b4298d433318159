//! The generate flow, written once for `strata generate`, the Python
//! module and the benchmarks: the chosen tables of a [`Dataset`] (a spec
//! of one table is a dataset of that one table) -> each table's generator
//! and [`GenerateConfig`] ([`Flow::new`]) -> the [`Plan`] of a dry run, or
//! the run ([`generate_tables_with`]) -> its [`Report`].
//!
//! [`DatasetPlan`] and [`DatasetReport`], serialised, are what `strata
//! generate --dry-run` and `--summary-json` print: for a spec of one table
//! that table's plan or report alone, for a dataset of several tables an
//! object of `dataset`, `scale` and `tables`, one entry per chosen table,
//! each with the keys of the one-table case. The Python module's summary
//! dict is one table's [`Report`].
//!
//! A spec of one table writes `DIR/STEM_N.EXT` with the rows, stem and
//! directory of its [`GenerateConfig`]; table `T` of a dataset of several
//! tables writes `DIR/T/T_N.EXT`, with rows from its `rows_per_scale` at
//! the run's scale.
//!
//! A spec file is read by [`read_spec_file`], its word lists' files from
//! its own directory.

use std::path::{Path, PathBuf};

use serde::Serialize;
use strata_gen::{BatchGenerator, Dataset, SpecGenerator};
use strata_parquet::Format;

use crate::{
    Error,
    generate::{
        GenerateConfig, MAX_TARGET_RECORDS, RunOptions, Summary, generate_tables_with,
        parquet_properties,
    },
    layout::{Layout, LayoutFlags, LayoutPlan, plan_layout},
};

/// Why a spec file gave no dataset.
#[derive(Debug, thiserror::Error)]
pub enum SpecFileError {
    /// The file could not be read (missing, unreadable, not UTF-8, or
    /// larger than [`strata_gen::MAX_SPEC_BYTES`]).
    #[error("cannot read spec file {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        error: std::io::Error,
    },
    /// The spec's own error (its file, line and field), a word list's
    /// file that cannot be read among them.
    #[error(transparent)]
    Spec(#[from] strata_gen::SpecError),
}

/// The dataset of spec file `path`: one table (a plain spec) or a dataset
/// of `[[tables]]`. The file and each of its word lists' files (read
/// relative to the spec file's directory) hold at most
/// [`strata_gen::MAX_SPEC_BYTES`] of UTF-8.
///
/// # Errors
/// [`SpecFileError::Read`] when the spec file cannot be read;
/// [`SpecFileError::Spec`] for the spec's errors.
pub fn read_spec_file(path: &Path) -> Result<Dataset, SpecFileError> {
    let text = std::fs::File::open(path)
        .and_then(strata_gen::read_text)
        .map_err(|error| SpecFileError::Read {
            path: path.to_path_buf(),
            error,
        })?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let read = |name: &str| -> Result<String, String> {
        std::fs::File::open(dir.join(name))
            .and_then(strata_gen::read_text)
            .map_err(|e| e.to_string())
    };
    Ok(Dataset::parse_with_files(
        &text,
        &path.display().to_string(),
        &read,
    )?)
}

/// The tables of one run, each with its generator and settings: a spec
/// of one table, or the chosen tables of a dataset of several.
pub struct Flow {
    dataset: Dataset,
    scale: f64,
    tables: Vec<usize>,
    jobs: Vec<(SpecGenerator, GenerateConfig)>,
}

impl Flow {
    /// Tables `tables` of `dataset` at `scale`, with the settings of
    /// `base` (its writers, batches, row groups, format, codec, threads,
    /// seed and part). For a spec of one table ([`Dataset::multi_table`]
    /// unset) that table is generated with `base` as it is, its rows
    /// `base.target_records`, whatever `tables` and `scale` say. In a
    /// dataset of several tables, table `T` goes to
    /// `base.output_dir/T/T_N.EXT` with the rows its `rows_per_scale` gives
    /// at `scale`; a child table walks its root ancestor's rows, so its
    /// rows, parts and files count those, and its batches and row groups
    /// are shrunk by the mean children per root row so as to hold about
    /// the rows asked for; a table with fewer rows in this part than
    /// `base.num_writers` gets one file per row. Every table's settings
    /// are checked ([`GenerateConfig::validate`]), and so are its row
    /// counts against the spec's sequences and per-row values.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a scale that is not a positive number,
    /// no table, a bad setting, or rows a table cannot have (the message
    /// names the flag); the generator's errors.
    pub fn new(
        dataset: Dataset,
        tables: &[usize],
        base: &GenerateConfig,
        scale: f64,
    ) -> Result<Flow, Error> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::InvalidConfig(format!(
                "--scale must be a positive number, got {scale}"
            )));
        }
        if tables.is_empty() || tables.iter().any(|&t| t >= dataset.tables.len()) {
            return Err(Error::InvalidConfig(format!(
                "no such table in dataset `{}`: {tables:?}",
                dataset.name
            )));
        }
        // Row counts, bounds and counts computed once per run, at this
        // scale (or 1 for a plain spec, as its generator has them).
        let resolved = match dataset.at_scale(if dataset.multi_table { scale } else { 1.0 })? {
            std::borrow::Cow::Owned(d) => Some(d),
            // Nothing to compute: the dataset as it is, not a copy.
            std::borrow::Cow::Borrowed(_) => None,
        };
        let dataset = resolved.unwrap_or(dataset);
        let (tables, jobs) = if dataset.multi_table {
            let jobs = dataset_jobs(&dataset, tables, base, scale)?;
            for (_, cfg) in &jobs {
                cfg.validate()?;
            }
            (tables.to_vec(), jobs)
        } else {
            let generator = dataset.generator(0, base.seed, 1.0)?;
            base.validate()?;
            let last = base.row_offset.checked_add(base.target_records).ok_or_else(|| {
                Error::InvalidConfig(format!(
                    "--row-offset {} and --target-records {} pass the last row a run can number",
                    base.row_offset, base.target_records
                ))
            })?;
            generator.check_rows(last).map_err(|e| {
                if base.row_offset > 0 {
                    Error::InvalidConfig(format!(
                        "--row-offset {} with --target-records {}: {e}",
                        base.row_offset, base.target_records
                    ))
                } else {
                    Error::InvalidConfig(format!("--target-records {}: {e}", base.target_records))
                }
            })?;
            (vec![0], vec![(generator, base.clone())])
        };
        let mut flow = Flow {
            dataset,
            scale,
            tables,
            jobs,
        };
        flow.set_layouts(&LayoutFlags::default())?;
        Ok(flow)
    }

    /// Lays each table out as its spec's `layout` says with `flags` over
    /// it ([`Layout::resolve`]), checked before anything is written.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] naming the table and the setting.
    pub fn set_layouts(&mut self, flags: &LayoutFlags) -> Result<(), Error> {
        let names: Vec<&str> = self
            .tables
            .iter()
            .map(|&t| self.dataset.tables[t].spec.name.as_str())
            .collect();
        flags.check_tables(&names)?;
        for ((generator, cfg), &t) in self.jobs.iter_mut().zip(&self.tables) {
            let spec = &self.dataset.tables[t].spec;
            let layout =
                Layout::resolve(&spec.layout, flags, &spec.name, &names, &generator.schema())?;
            if let Some(l) = &layout
                && !l.own_path()
                && let Some(strata_gen::RowGroupSize::Rows(n)) = l.row_group_size
            {
                // Row groups in rows are the plain run's own (a child
                // table's counted in the rows of the table it walks).
                let per_root = if self.dataset.multi_table {
                    self.dataset.rows_per_root_row(t).max(1.0)
                } else {
                    1.0
                };
                cfg.row_group_rows = ((n as f64 / per_root).round() as usize).max(1);
            }
            cfg.layout = layout;
        }
        Ok(())
    }

    /// Starts the run's rows at global row `offset` (see
    /// [`GenerateConfig::row_offset`]), for a run of one table.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a dataset (its tables are related row
    /// by row), or a sequence that would leave its type's range by the
    /// last row.
    pub fn set_row_offset(&mut self, offset: u64) -> Result<(), Error> {
        if self.is_dataset() {
            return Err(Error::InvalidConfig(format!(
                "--row-offset: the tables of dataset `{}` are related row by row (a child's rows \
                 expand its parent's); generate a dataset at another --seed instead",
                self.dataset.name
            )));
        }
        for (generator, cfg) in &mut self.jobs {
            let last = offset.checked_add(cfg.target_records).ok_or_else(|| {
                Error::InvalidConfig(format!(
                    "--row-offset {offset} and --target-records {} pass the last row a run can number",
                    cfg.target_records
                ))
            })?;
            generator.check_rows(last).map_err(|e| {
                Error::InvalidConfig(format!(
                    "--row-offset {offset} with --target-records {}: {e}",
                    cfg.target_records
                ))
            })?;
            cfg.row_offset = offset;
        }
        Ok(())
    }

    /// Every job's settings, for the table formats to place data files
    /// ([`crate::table`]).
    pub(crate) fn jobs_mut(&mut self) -> &mut [(SpecGenerator, GenerateConfig)] {
        &mut self.jobs
    }

    /// The layout plan of each table with a layout of its own (`None`
    /// for the others), from a sample of its rows.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a table expected to pass
    /// `--max-partitions`; the generator's and encoder's errors.
    pub fn layout_plans(&self) -> Result<Vec<Option<LayoutPlan>>, Error> {
        self.jobs
            .iter()
            .map(
                |(g, cfg)| match cfg.layout.as_ref().filter(|l| l.own_path()) {
                    Some(l) => Ok(Some(plan_layout(
                        g,
                        &cfg.layout_target(),
                        l,
                        parquet_properties(g, cfg)?,
                        true,
                    )?)),
                    None => Ok(None),
                },
            )
            .collect()
    }

    /// The dataset (for a spec of one table, the dataset of that table),
    /// with what it computes per run computed at the run's scale
    /// ([`Dataset::at_scale`]).
    pub fn dataset(&self) -> &Dataset {
        &self.dataset
    }

    /// The scale the run's row counts are at (1 for a spec of one
    /// table).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Whether the spec has several tables: its plan and report then
    /// name the dataset and hold one entry per table.
    pub fn is_dataset(&self) -> bool {
        self.dataset.multi_table
    }

    /// The indices in [`Flow::dataset`] of the tables generated, in run
    /// order.
    pub fn tables(&self) -> &[usize] {
        &self.tables
    }

    /// Each table's generator and settings, in run order.
    pub fn jobs(&self) -> &[(SpecGenerator, GenerateConfig)] {
        &self.jobs
    }

    /// The rows the run walks, all tables together (for a child table, the
    /// rows of the root table it walks): the units of the run's progress.
    pub fn rows(&self) -> u64 {
        self.jobs
            .iter()
            .map(|(_, cfg)| {
                let r = cfg.rows();
                r.end - r.start
            })
            .sum()
    }

    /// What the run would write, without writing: for a table with a
    /// layout of its own, the partitions and files expected (from a
    /// sample of its rows) instead of its files.
    ///
    /// # Errors
    /// As [`Flow::layout_plans`].
    pub fn plan(&self) -> Result<DatasetPlan, Error> {
        let layouts = self.layout_plans()?;
        let plans = self
            .jobs
            .iter()
            .zip(&self.tables)
            .zip(layouts)
            .map(|(((_, cfg), &t), layout)| {
                let mut plan = cfg.plan_table(&self.dataset, t);
                if layout.is_some() {
                    plan.files.clear();
                }
                plan.layout = layout;
                plan
            })
            .collect();
        Ok(self.shaped(plans))
    }

    /// Runs every table and makes their files visible together
    /// ([`generate_tables_with`]); the summaries come in run order.
    ///
    /// # Errors
    /// As [`generate_tables_with`].
    pub fn run(
        &self,
        opts: RunOptions<'_>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<Summary>, Error> {
        generate_tables_with(&self.jobs, opts, progress)
    }

    /// Each table's report of a run whose summaries are `summaries`.
    pub fn reports(&self, summaries: &[Summary]) -> Vec<Report> {
        self.jobs
            .iter()
            .zip(summaries)
            .map(|((g, cfg), s)| cfg.report(g.name(), s.clone()))
            .collect()
    }

    /// The report of a run whose summaries are `summaries`, shaped as its
    /// spec.
    pub fn report(&self, summaries: &[Summary]) -> DatasetReport {
        self.shaped(self.reports(summaries))
    }

    /// `items`, one per table, alone for a spec of one table, else under
    /// the dataset's name and scale.
    fn shaped<T>(&self, mut items: Vec<T>) -> PerTable<T> {
        if !self.dataset.multi_table
            && items.len() == 1
            && let Some(one) = items.pop()
        {
            return PerTable::Table(one);
        }
        PerTable::Dataset(Tables {
            dataset: self.dataset.name.clone(),
            scale: self.scale,
            tables: items,
        })
    }
}

/// A plan or a report of a run shaped as its spec: a spec of one table
/// gives that table's alone, a dataset of several tables one for each
/// table generated.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum PerTable<T> {
    /// The one table of a spec of one table.
    Table(T),
    /// The tables of a dataset of several.
    Dataset(Tables<T>),
}

/// One plan or report for each table generated of a dataset.
#[derive(Debug, Clone, Serialize)]
pub struct Tables<T> {
    /// The dataset's name.
    pub dataset: String,
    /// The scale the tables' rows were set at.
    pub scale: f64,
    /// One for each table generated, in run order.
    pub tables: Vec<T>,
}

/// A dry run's plan: what `strata generate --dry-run` prints.
pub type DatasetPlan = PerTable<Plan>;

/// A run's report: what `strata generate --summary-json` writes.
pub type DatasetReport = PerTable<Report>;

impl GenerateConfig {
    /// What a run with this configuration would write, without writing:
    /// each file's path and rows.
    pub fn plan(&self, spec: &str) -> Plan {
        let r = self.rows();
        Plan {
            spec: spec.to_string(),
            config: self.clone(),
            rows: r.end - r.start,
            estimate: false,
            children_of: None,
            layout: None,
            files: (0..self.num_writers)
                .map(|i| {
                    let rows = self.file_rows(i);
                    PlannedFile {
                        path: self.file_path(i),
                        first_row: rows.start,
                        rows: rows.end - rows.start,
                        parent_rows: None,
                    }
                })
                .collect(),
        }
    }

    /// [`GenerateConfig::plan`] of table `table` of `dataset`, as
    /// [`Flow::new`] set this configuration up for it: for a child
    /// table, whose rows are drawn per row of its root ancestor (the rows
    /// this configuration counts), the rows are estimates: the mean
    /// children per root row times the root rows.
    pub fn plan_table(&self, dataset: &Dataset, table: usize) -> Plan {
        let name = &dataset.tables[table].spec.name;
        let mut plan = self.plan(name);
        let root = dataset.root_of(table);
        if root == table {
            return plan;
        }
        let mean = dataset.rows_per_root_row(table);
        let estimate = |parents: u64| (parents as f64 * mean).round() as u64;
        plan.children_of = Some(ParentRows {
            table: dataset.tables[root].spec.name.clone(),
            rows: plan.rows,
            mean,
        });
        plan.rows = estimate(plan.rows);
        plan.estimate = true;
        for f in &mut plan.files {
            f.parent_rows = Some(f.rows);
            f.rows = estimate(f.rows);
        }
        plan
    }

    /// The report of a finished run of spec `spec` with this
    /// configuration.
    pub fn report(&self, spec: &str, summary: Summary) -> Report {
        Report {
            spec: spec.to_string(),
            seed: self.seed,
            part: self.part.index,
            parts: self.part.count,
            format: self.format,
            first_row: self.rows().start,
            config: self.clone(),
            summary,
        }
    }
}

/// A dry run: the configuration and the files it would write.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The spec's name.
    pub spec: String,
    /// The configuration (for a child table, its `target_records` count
    /// the rows of the table it walks: see `children_of`).
    pub config: GenerateConfig,
    /// The rows the run writes: exact, or an estimate (`estimate`).
    pub rows: u64,
    /// Whether `rows` and each file's rows are estimates: a child table's
    /// counts are drawn per parent row, and are known only once drawn.
    pub estimate: bool,
    /// For a child table, the rows it is drawn from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children_of: Option<ParentRows>,
    /// The files, in order (none listed for a table with a layout of its
    /// own: see `layout`).
    pub files: Vec<PlannedFile>,
    /// For a table with a layout of its own: the partitions and files
    /// expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutPlan>,
}

/// The rows a child table's [`Plan`] is drawn from: `mean` rows for each
/// of `rows` rows of `table`.
#[derive(Debug, Clone, Serialize)]
pub struct ParentRows {
    /// The table whose rows it walks (its root ancestor).
    pub table: String,
    /// The rows of that table this run walks.
    pub rows: u64,
    /// The mean rows per row of that table.
    pub mean: f64,
}

/// One file of a [`Plan`].
#[derive(Debug, Clone, Serialize)]
pub struct PlannedFile {
    /// Its path.
    pub path: PathBuf,
    /// The index of its first row in the whole dataset (for a child
    /// table, of the first row of the table it walks).
    pub first_row: u64,
    /// Its rows (an estimate for a child table).
    pub rows: u64,
    /// For a child table, the rows of the table it walks whose children
    /// it holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_rows: Option<u64>,
}

/// The report of a run, one set of keys wherever it is shown: the CLI's
/// `--summary-json` and the Python module's summary dict are this,
/// serialised.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The spec's name.
    pub spec: String,
    /// The seed.
    pub seed: u64,
    /// Which part this run wrote, from 1.
    pub part: u64,
    /// Of how many parts.
    pub parts: u64,
    /// The file format.
    pub format: Format,
    /// The index of the run's first row in the whole dataset.
    pub first_row: u64,
    /// The whole configuration.
    pub config: GenerateConfig,
    /// What was written, how fast.
    #[serde(flatten)]
    pub summary: Summary,
}

/// The generators and settings of tables `tables` of a dataset of
/// several tables at `scale`, from `base`, as [`Flow::new`] describes.
///
/// # Errors
/// [`Error::InvalidConfig`] for a table without rows at `scale`, with
/// fewer rows than parts, or with a sequence that would leave its type's
/// range at `scale`; the generator's errors.
fn dataset_jobs(
    dataset: &Dataset,
    tables: &[usize],
    base: &GenerateConfig,
    scale: f64,
) -> Result<Vec<(SpecGenerator, GenerateConfig)>, Error> {
    if base.row_offset > 0 {
        return Err(Error::InvalidConfig(format!(
            "--row-offset: the tables of dataset `{}` are related row by row (a child's rows expand \
             its parent's); generate a dataset at another --seed instead",
            dataset.name
        )));
    }
    let mut jobs = Vec::with_capacity(tables.len());
    for &i in tables {
        let table = &dataset.tables[i];
        let driver = dataset.root_of(i);
        let driver_name = &dataset.tables[driver].spec.name;
        let rows = dataset.tables[driver]
            .rows
            .as_ref()
            .map_or(0, |r| r.at(scale));
        if rows == 0 {
            return Err(Error::InvalidConfig(format!(
                "table `{driver_name}` has no rows at scale {scale} (rows_per_scale x scale rounds to 0); use a larger --scale"
            )));
        }
        if rows > MAX_TARGET_RECORDS {
            return Err(Error::InvalidConfig(format!(
                "table `{driver_name}` has more rows at scale {scale} than a run writes ({MAX_TARGET_RECORDS}); use a smaller --scale"
            )));
        }
        if base.part.count > rows {
            return Err(Error::InvalidConfig(format!(
                "table `{driver_name}` has {rows} rows at scale {scale}, fewer than --parts ({}); use fewer parts",
                base.part.count
            )));
        }
        let mut cfg = base.clone();
        cfg.target_records = rows;
        let per_root = dataset.rows_per_root_row(i);
        if per_root > 1.0 {
            let shrink = |n: usize| ((n as f64 / per_root).round() as usize).max(1);
            cfg.record_batch_size = shrink(cfg.record_batch_size);
            cfg.row_group_rows = shrink(cfg.row_group_rows);
        }
        cfg.output_dir = base.output_dir.join(&table.spec.name);
        cfg.output_filename = table.spec.name.clone();
        let part_rows = {
            let r = cfg.rows();
            r.end - r.start
        };
        cfg.num_writers = cfg.num_writers.min(part_rows as usize);
        let generator = dataset.generator(i, base.seed, scale)?;
        // Sequences that would leave their type's range at this scale are
        // refused before anything is written (in any part).
        generator
            .check_rows(rows)
            .map_err(|e| Error::InvalidConfig(format!("at scale {scale}: {e}")))?;
        jobs.push((generator, cfg));
    }
    Ok(jobs)
}
