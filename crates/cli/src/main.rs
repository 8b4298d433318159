//! The `strata` binary: the command line of [`strata_cli`].

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(strata_cli::run(std::env::args_os()))
}
