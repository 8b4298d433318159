//! Help text and command-line errors: defaults shown as users type them,
//! the README's flag table complete, parser errors on one line.

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
fn the_readme_lists_every_generate_flag_and_preset() {
    let g = help(&["generate", "--help"]);
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let table = &readme[readme.find("## `strata generate`").unwrap()..];
    let table = &table[..table.find("### Presets").unwrap()];
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
            "--{f} is not in the README's table"
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
