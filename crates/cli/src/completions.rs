//! `strata completions SHELL`: the shell's completion script for every
//! subcommand and flag, from the same clap definition that parses them.

use anyhow::Result;
use clap::Args;

/// Arguments of `strata completions`.
#[derive(Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

/// Prints the completion script of `cmd` for the shell.
pub(crate) fn run(args: CompletionsArgs, mut cmd: clap::Command) -> Result<()> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut cmd, "strata", &mut out);
    Ok(())
}
