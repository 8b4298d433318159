//! Pieces the subcommands share: flag parsing, object-store flags and
//! timeouts, the progress bar.

use std::io::IsTerminal;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use strata_store::location::StoreConfig;

/// Parses a flag value with the library's own parser and message.
pub(crate) fn parse<T: std::str::FromStr<Err = E>, E: std::fmt::Display>(
    s: &str,
) -> Result<T, String> {
    s.parse().map_err(|e: E| e.to_string())
}

/// A flag's local output path: a path or a `file://` URL; an object-store
/// URL or a malformed one (`s3:/x`) is refused
/// ([`strata_store::location::parse_local`]).
pub(crate) fn local_output(s: &str) -> Result<std::path::PathBuf, String> {
    strata_store::location::parse_local(s, "a local file").map_err(|e| e.to_string())
}

/// S3 settings; each overrides its standard AWS environment variable.
#[derive(Args, Debug)]
pub(crate) struct StoreArgs {
    /// S3 endpoint URL (overrides AWS_ENDPOINT); http:// allows plain HTTP.
    #[arg(long)]
    endpoint: Option<String>,
    /// S3 region (overrides AWS_REGION).
    #[arg(long)]
    region: Option<String>,
    /// S3 access key id (overrides AWS_ACCESS_KEY_ID).
    #[arg(long)]
    access_key_id: Option<String>,
    /// S3 secret access key (overrides AWS_SECRET_ACCESS_KEY).
    #[arg(long)]
    secret_access_key: Option<String>,
    /// Seconds an S3 request may take, retries included, before it fails
    /// [default: 60]. A request without an answer is reported on stderr
    /// every 5 s while it waits.
    #[arg(long, value_name = "SECONDS", env = "STRATA_S3_TIMEOUT", value_parser = parse_seconds)]
    s3_timeout: Option<std::time::Duration>,
}

/// A positive number of seconds (`30`, `2.5`).
fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, not '{s}'"))?;
    if !(secs > 0.0 && secs <= 86_400.0) {
        return Err(format!("expected seconds between 0 and 86400, not {s}"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

impl StoreArgs {
    /// The settings; S3 requests that wait long are reported on stderr.
    pub(crate) fn config(&self) -> StoreConfig {
        strata_store::wait::on_slow_request(Some(std::sync::Arc::new(|m: &str| {
            eprintln!("strata: {m}")
        })));
        StoreConfig {
            endpoint: self.endpoint.clone(),
            region: self.region.clone(),
            access_key_id: self.access_key_id.clone(),
            secret_access_key: self.secret_access_key.clone(),
            retry: self.s3_timeout.map(strata_store::location::retry_within),
            ..Default::default()
        }
    }
}

pub(crate) fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} rows ({rate}, eta {eta})",
    ) {
        bar.set_style(style.with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1} M rows/s", state.per_sec() / 1e6);
            },
        ));
    }
    bar
}
