//! Help text and command-line errors: defaults shown as users type them,
//! the guide's flag table of `strata generate` complete, parser errors on
//! one line.

use std::path::Path;

use crate::common::{stderr, strata};

fn help(args: &[&str]) -> String {
    let cwd = tempfile::tempdir().unwrap();
    let o = strata(args, cwd.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// The help paragraph of flag `--name`: its line and the lines below it
/// up to the next flag.
fn paragraph(help: &str, name: &str) -> String {
    let flag = |l: &str| l.trim_start().starts_with('-');
    let mut lines = help
        .lines()
        .skip_while(|l| !(flag(l) && l.split([' ', ',']).any(|w| w == format!("--{name}"))));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no --{name} in {help}"));
    std::iter::once(first)
        .chain(lines.take_while(|l| !flag(l)))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn defaults_are_shown_as_typed_and_only_where_they_apply() {
    let g = help(&["generate", "--help"]);
    for flag in ["parts", "part"] {
        let p = paragraph(&g, flag);
        assert!(!p.contains("[default"), "{p}");
    }
    assert!(paragraph(&g, "seed").contains("[default: 42]"));
    let c = help(&["compact", "plan", "--help"]);
    let p = paragraph(&c, "approximation-ratio");
    assert!(p.contains("[default: 1.05]"), "{p}");
    assert!(!c.contains("1.0499999"), "{c}");
}

#[test]
fn the_guide_lists_every_generate_flag_and_preset() {
    let g = help(&["generate", "--help"]);
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/generate.md"),
    )
    .unwrap();
    let table = &page[page.find("\n## Flags\n").expect("a Flags section")..];
    let table = &table[..table[1..].find("\n## ").unwrap()];
    let flags: Vec<&str> = g
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .filter_map(|l| l.trim_start().split_once("--").map(|(_, f)| f))
        .filter_map(|f| f.split([' ', ',']).next())
        .filter(|f| !f.is_empty() && *f != "help")
        .collect();
    assert!(flags.len() > 25, "{flags:?}");
    for f in flags {
        assert!(
            table.contains(&format!("`--{f}")),
            "--{f} is not in the flag table of docs/src/generate.md"
        );
    }
    let presets = g
        .lines()
        .find_map(|l| l.trim().strip_prefix("[possible values: "))
        .unwrap()
        .trim_end_matches(']');
    let preset_row = table
        .lines()
        .find(|l| l.starts_with("| `--preset`"))
        .unwrap();
    for p in presets.split(", ") {
        assert!(preset_row.contains(&format!("`{p}`")), "{p}: {preset_row}");
    }
}

#[test]
fn parser_errors_are_one_line() {
    let cwd = tempfile::tempdir().unwrap();
    for (args, needle, hint) in [
        (
            &["generate", "--bogus"][..],
            "unexpected argument '--bogus'",
            "strata generate --help",
        ),
        (
            &["generate", "--format", "xml"],
            "'xml'",
            "strata generate --help",
        ),
        (
            &["generate", "--parts", "2"],
            "--part <PART>",
            "strata generate --help",
        ),
        (
            &["generate", "--target-records", "-5"],
            "-5",
            "strata generate --help",
        ),
        (&["sort", "x.parquet"], "--by <KEYS>", "strata sort --help"),
        (
            &["generate", "--s3-timeout", "soon"],
            "expected a number of seconds, not 'soon'",
            "strata generate --help",
        ),
        (
            &["generate", "--s3-timeout", "0"],
            "expected seconds between 0 and 86400, not 0",
            "strata generate --help",
        ),
        (&["nosuch"], "nosuch", "strata --help"),
    ] {
        let o = strata(args, cwd.path());
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.starts_with("strata: error: "), "{e}");
        assert!(e.contains(needle) && e.contains(hint), "{args:?}: {e}");
    }
}

#[test]
fn completions_cover_every_subcommand_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef strata"),
        ("fish", "complete -c strata"),
    ] {
        let script = help(&["completions", shell]);
        assert!(script.contains(marker), "{shell}: {script}");
        for sub in [
            "generate",
            "sort",
            "scan",
            "compact",
            "infer",
            "completions",
        ] {
            assert!(script.contains(sub), "{shell} lacks {sub}");
        }
        assert!(script.contains("verify-distribution"), "{shell}");
    }
    let cwd = tempfile::tempdir().unwrap();
    let o = strata(&["completions", "tcsh"], cwd.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("tcsh"), "{}", stderr(&o));
}

#[test]
fn man_pages_print_or_land_whole_in_a_directory() {
    let page = help(&["man"]);
    assert!(page.contains(".TH strata 1"), "{page}");
    assert!(page.contains("generate"), "{page}");
    let cwd = tempfile::tempdir().unwrap();
    let o = strata(&["man", "--dir", "man1"], cwd.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = cwd.path().join("man1");
    for name in [
        "strata.1",
        "strata-generate.1",
        "strata-compact-plan.1",
        "strata-spec-check.1",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(text.contains(".TH "), "{name}");
    }
    let generate = std::fs::read_to_string(dir.join("strata-generate.1")).unwrap();
    assert!(generate.contains("verify\\-distribution"), "{generate}");
    // Existing pages are kept unless --overwrite.
    std::fs::write(dir.join("strata-sort.1"), "mine").unwrap();
    let o = strata(&["man", "--dir", "man1"], cwd.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--overwrite"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("strata-sort.1")).unwrap(),
        "mine"
    );
    let o = strata(&["man", "--dir", "man1", "--overwrite"], cwd.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(dir.join("strata-sort.1"))
            .unwrap()
            .contains(".TH ")
    );
}

#[test]
fn version_names_the_commit() {
    let v = help(&["--version"]);
    assert!(
        v.starts_with(&format!("strata {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    if let Ok(head) = head
        && head.status.success()
    {
        let head = String::from_utf8(head.stdout).unwrap();
        assert!(v.contains(&head[..12]), "{v} vs {head}");
    }
}

#[test]
fn every_help_shows_examples_and_the_top_level_the_exit_statuses() {
    for args in [
        &["generate", "--help"][..],
        &["compact", "plan", "--help"],
        &["table", "commit", "--help"],
        &["man", "--help"],
    ] {
        let h = help(args);
        assert!(h.contains("Examples:\n  "), "{args:?}: {h}");
    }
    let top = help(&["--help"]);
    for needle in [
        "Exit status:",
        "  130  interrupted",
        "    1  a check ran and failed",
    ] {
        assert!(top.contains(needle), "{needle:?} in {top}");
    }
}

#[test]
fn a_comparison_out_of_bounds_is_status_1() {
    let cwd = tempfile::tempdir().unwrap();
    for (preset, dir) in [("contacts", "a"), ("wide-u64", "b")] {
        let o = strata(
            &[
                "generate",
                "-q",
                "--preset",
                preset,
                "--target-records",
                "2000",
                "--output-dir",
                dir,
            ],
            cwd.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let o = strata(&["infer", "--compare", "a", "b"], cwd.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("out of bounds"), "{}", stderr(&o));
    let o = strata(&["infer", "--compare", "a", "a"], cwd.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
