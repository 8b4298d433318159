//! Helpers shared by the CLI tests: run the binary, read its messages,
//! and check what a failed run left behind.

use std::{
    path::Path,
    process::{Command, Output},
};

/// Runs `strata` with `args` in `cwd`.
pub fn strata(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run strata")
}

/// The run's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every file below `dir` (hidden ones included), relative names, sorted.
pub fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// Asserts a failed run: exit status 2, `needle` in the message, and
/// exactly `left` (relative paths) remaining in `dir`. Returns stderr.
pub fn failed_cleanly(o: &Output, dir: &Path, needle: &str, left: &[&str]) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains(needle), "expected '{needle}' in: {e}");
    assert_eq!(files(dir), left, "left behind");
    e
}
