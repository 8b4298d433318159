//! Sets `STRATA_VERSION` for `strata --version`: the package version and
//! the commit it was built from (`STRATA_COMMIT` when set, as a build from
//! a source archive can do; else `git`), and reruns when the commit
//! changes.

use std::process::Command;

/// `git ARGS` in this crate's directory: its trimmed output, or `None`
/// (no git, or not a checkout).
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=STRATA_COMMIT");
    let commit = match std::env::var("STRATA_COMMIT") {
        Ok(c) if !c.trim().is_empty() => Some(c.trim().to_string()),
        _ => {
            // The files whose change means another commit: HEAD, the
            // branch it names, and the packed refs (only those that exist:
            // cargo reruns every time for a missing one).
            for name in ["HEAD", "packed-refs"]
                .into_iter()
                .map(String::from)
                .chain(git(&["symbolic-ref", "-q", "HEAD"]))
            {
                if let Some(path) = git(&["rev-parse", "--git-path", &name])
                    && std::path::Path::new(&path).exists()
                {
                    println!("cargo:rerun-if-changed={path}");
                }
            }
            git(&["log", "-1", "--abbrev=12", "--format=%h, %cs"])
        }
    };
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let commit = commit.unwrap_or_else(|| "unknown: not built from a git checkout".into());
    println!("cargo:rustc-env=STRATA_VERSION={version} (commit {commit})");
}
