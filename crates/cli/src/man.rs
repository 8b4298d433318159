//! `strata man`: the manual pages (roff), from the same clap definition
//! that parses the command line: `strata.1` on stdout, or one page per
//! command (`strata.1`, `strata-generate.1`, `strata-compact-plan.1`, ...)
//! into a directory.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

/// Arguments of `strata man`.
#[derive(Args, Debug)]
pub(crate) struct ManArgs {
    /// Write a page per command into this directory (created if missing;
    /// each page appears whole) instead of printing `strata.1`.
    #[arg(long, value_name = "DIR", value_parser = crate::common::local_output)]
    dir: Option<PathBuf>,
    /// With --dir: replace pages that exist.
    #[arg(long)]
    overwrite: bool,
}

/// Prints or writes the pages of `cmd`.
pub(crate) fn run(args: ManArgs, mut cmd: clap::Command) -> Result<()> {
    cmd.build();
    let Some(dir) = args.dir else {
        let mut out = std::io::stdout().lock();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        return Ok(());
    };
    let mut pages = vec![];
    collect(&cmd, &mut pages)?;
    let pages: Vec<(PathBuf, Vec<u8>)> = pages
        .into_iter()
        .map(|(name, page)| (dir.join(format!("{name}.1")), page))
        .collect();
    if !args.overwrite
        && let Some((path, _)) = pages.iter().find(|(path, _)| path.exists())
    {
        anyhow::bail!(
            "{} exists (add --overwrite to replace the pages)",
            path.display()
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (path, page) in &pages {
        strata_store::output::write_atomically(path, page, args.overwrite, true)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    println!("wrote {} pages to {}", pages.len(), dir.display());
    Ok(())
}

/// The page of `cmd` (built, so that its subcommands know their full
/// names) and of every subcommand below it, as (file stem, roff).
fn collect(cmd: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    let name = cmd
        .get_bin_name()
        .unwrap_or_else(|| cmd.get_name())
        .replace(' ', "-");
    let mut page = vec![];
    clap_mangen::Man::new(cmd.clone().name(name.clone())).render(&mut page)?;
    pages.push((name, page));
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        collect(sub, pages)?;
    }
    Ok(())
}
