//! The user guide in `docs/` is tested:
//!
//! - every code block whose info string is `toml spec` is a whole spec:
//!   it is written to a file and `strata spec check FILE` must accept it;
//! - every code block whose info string is `sh runnable` runs with
//!   `bash -e -o pipefail` in a temporary directory of its own, with the
//!   `strata` under test first on `PATH`, and must exit with status 0;
//! - `docs/src/reference/cli.md` is the command line as `strata_cli::command()`
//!   defines it: run with `STRATA_BLESS=1` to write it again after a change
//!   of a flag or of a help text;
//! - every key of the spec format's JSON Schema appears in an example;
//! - every chapter is in `SUMMARY.md`, every relative link of the guide
//!   and of the README resolves (anchors included), and the performance
//!   page links every results file under `benches/results/`.
//!
//! Other blocks (`toml`, `sh`, `sql`, `python`, `text`) are shown, not run:
//! use them for what needs a server, a large run or a tool the tests lack.
//!
//! The CLI reference is the same with and without the `bench` feature:
//! `strata bench` is listed with its description and examples only, since
//! its options and subcommands exist only in a build with the feature.

use std::{
    collections::BTreeSet,
    fmt::Write as _,
    path::{Path, PathBuf},
    process::Command,
};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every Markdown file under `docs/src`, relative to it, sorted.
fn chapters() -> Vec<PathBuf> {
    let src = root().join("docs/src");
    let mut out = vec![];
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p.strip_prefix(&src).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// A fenced code block: its info string, text and first line (from 1).
struct Block {
    info: String,
    code: String,
    line: usize,
}

/// The fenced code blocks of `text` (fences of three backticks, indented
/// as a list item's may be; the block's lines lose that indentation).
fn blocks(text: &str) -> Vec<Block> {
    let mut out = vec![];
    let mut open: Option<(usize, Block)> = None;
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let block = Block {
                        info: info.trim().to_string(),
                        code: String::new(),
                        line: i + 2,
                    };
                    open = Some((indent, block));
                }
            }
            Some((ind, block)) => {
                if trimmed == "```" {
                    out.push(open.take().unwrap().1);
                } else {
                    let cut = line.len() - line.trim_start().len();
                    block.code.push_str(&line[cut.min(*ind)..]);
                    block.code.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "a code block is not closed");
    out
}

/// The blocks of every chapter whose info string's words are `words`,
/// with the chapter they are in.
fn marked(words: &[&str]) -> Vec<(String, Block)> {
    let mut out = vec![];
    for chapter in chapters() {
        let text = std::fs::read_to_string(root().join("docs/src").join(&chapter)).unwrap();
        for b in blocks(&text) {
            if b.info.split_whitespace().eq(words.iter().copied()) {
                out.push((chapter.display().to_string(), b));
            }
        }
    }
    out
}

#[test]
fn spec_examples_are_valid_specs() {
    let examples = marked(&["toml", "spec"]);
    assert!(examples.len() > 30, "{} spec examples", examples.len());
    let dir = tempfile::tempdir().unwrap();
    for (i, (chapter, b)) in examples.iter().enumerate() {
        let file = dir.path().join(format!("example_{i}.toml"));
        std::fs::write(&file, &b.code).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(["spec", "check"])
            .arg(&file)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "docs/src/{chapter}:{}: `strata spec check` refuses this example:\n{}\n{}",
            b.line,
            b.code,
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn runnable_examples_run() {
    let examples = marked(&["sh", "runnable"]);
    assert!(examples.len() > 10, "{} runnable examples", examples.len());
    let bin = Path::new(env!("CARGO_BIN_EXE_strata"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    // Two at a time: each example is small, and most of their time is
    // the process starts.
    let failures: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<_> = examples.chunks(examples.len().div_ceil(2)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let path = &path;
                s.spawn(move || {
                    let mut failed = vec![];
                    for (chapter, b) in chunk {
                        let dir = tempfile::tempdir().unwrap();
                        let o = Command::new("bash")
                            .args(["-e", "-o", "pipefail", "-c", &b.code])
                            .env("PATH", path)
                            .current_dir(dir.path())
                            .output()
                            .unwrap();
                        if !o.status.success() {
                            failed.push(format!(
                                "docs/src/{chapter}:{}: exit status {:?}:\n{}\nstdout:\n{}\nstderr:\n{}",
                                b.line,
                                o.status.code(),
                                b.code,
                                String::from_utf8_lossy(&o.stdout),
                                String::from_utf8_lossy(&o.stderr)
                            ));
                        }
                    }
                    failed
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Markdown text with the characters that would read as markup escaped,
/// outside code spans.
fn escape(text: &str) -> String {
    let mut out = String::new();
    let mut code = false;
    for c in text.chars() {
        if c == '`' {
            code = !code;
        } else if !code && matches!(c, '*' | '_' | '<' | '>' | '[' | ']' | '\\' | '|') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A help text as Markdown paragraphs, each line of the text escaped.
fn paragraphs(text: &str) -> String {
    text.trim()
        .lines()
        .map(|l| escape(l.trim_end()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One argument as a list item: its names, help, default, values and
/// environment variable.
fn argument(a: &clap::Arg) -> String {
    let values = a
        .get_value_names()
        .map(|v| {
            v.iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", a.get_id().as_str().to_uppercase()));
    let takes_value = a.get_num_args().is_some_and(|n| n.takes_values());
    let many = a
        .get_num_args()
        .is_some_and(|n| n.max_values() > 1 && n.max_values() != n.min_values())
        || matches!(a.get_action(), clap::ArgAction::Append);
    let mut name = match (a.get_short(), a.get_long()) {
        (Some(s), Some(l)) => format!("-{s}, --{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, Some(l)) => format!("--{l}"),
        (None, None) => String::new(),
    };
    if a.is_positional() {
        name = values.clone();
    } else if takes_value {
        name = format!("{name} {values}");
    }
    if many && a.is_positional() {
        name.push_str("...");
    }
    let help = a
        .get_long_help()
        .or(a.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let mut item = format!("- `{name}`");
    if a.is_required_set() {
        item.push_str(" (required)");
    }
    let help = paragraphs(&help);
    if !help.is_empty() {
        item.push_str(": ");
        item.push_str(&help.replace('\n', "\n  "));
    }
    let mut facts = vec![];
    // A flag's `false` default says nothing.
    if takes_value && !a.is_hide_default_value_set() && !a.get_default_values().is_empty() {
        let d: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|v| format!("`{}`", v.to_string_lossy()))
            .collect();
        facts.push(format!("Default: {}.", d.join(", ")));
    }
    let possible = a.get_possible_values();
    if !a.is_hide_possible_values_set() && !possible.is_empty() && takes_value {
        let p: Vec<String> = possible
            .iter()
            .filter(|p| !p.is_hide_set())
            .map(|p| format!("`{}`", p.get_name()))
            .collect();
        facts.push(format!("Values: {}.", p.join(", ")));
    }
    if let Some(env) = a.get_env() {
        facts.push(format!("Environment: `{}`.", env.to_string_lossy()));
    }
    if !facts.is_empty() {
        // A backslash at the end of a line breaks it.
        item.push_str(if help.is_empty() { ": " } else { "\\\n  " });
        item.push_str(&facts.join(" "));
    }
    item
}

/// Appends command `cmd`, named `name` (`strata compact plan`), and its
/// subcommands to `out`, as sections of heading level `level`.
fn render_command(cmd: &mut clap::Command, name: &str, level: usize, out: &mut String) {
    let hashes = "#".repeat(level.min(4));
    writeln!(out, "{hashes} `{name}`\n").unwrap();
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    if !about.is_empty() {
        writeln!(out, "{}\n", paragraphs(&about)).unwrap();
    }
    // `strata bench` has its options only in a build with the `bench`
    // feature: its entry is the same in every build.
    let bench = name == "strata bench";
    if bench {
        out.push_str(
            "Its suites, options and subcommands are built in only with the `bench` \
             feature (`cargo build --release --bin strata --features bench`); \
             `strata bench --help` in such a build lists them, and \
             [Benchmarks](../commands/bench.md) describes them.\n\n",
        );
    } else {
        let usage = cmd.render_usage().to_string();
        let usage = usage.trim().trim_start_matches("Usage:").trim();
        writeln!(out, "```text\n{usage}\n```\n").unwrap();
        let args: Vec<String> = cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
            .map(argument)
            .collect();
        if !args.is_empty() {
            writeln!(out, "{}\n", args.join("\n")).unwrap();
        }
    }
    if let Some(after) = cmd.get_after_help() {
        let after = after.to_string();
        let examples = after.trim().strip_prefix("Examples:").unwrap_or(&after);
        let lines: Vec<&str> = examples
            .trim_matches('\n')
            .lines()
            .map(|l| l.strip_prefix("  ").unwrap_or(l))
            .collect();
        writeln!(out, "Examples:\n\n```sh\n{}\n```\n", lines.join("\n")).unwrap();
    }
    if bench {
        return;
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_string())
        .collect();
    for sub in subs {
        let s = cmd.find_subcommand_mut(&sub).unwrap();
        render_command(s, &format!("{name} {sub}"), level + 1, out);
    }
}

/// `docs/src/reference/cli.md` as the command line defines it.
fn cli_reference() -> String {
    let mut cmd = strata_cli::command();
    cmd.build();
    let mut out = String::from(
        "# Command-line reference\n\n\
         <!-- Generated from the command line's definition by the test \
         `cli_reference_is_current` (crates/cli/tests/integration/docs.rs). \
         Do not edit: run `STRATA_BLESS=1 cargo test -p strata-cli --test \
         integration docs` after changing a flag or a help text. -->\n\n\
         Every command and subcommand of `strata`, with its usage, options \
         and examples, as `strata COMMAND --help` prints them. Every command \
         also takes `-h` (a summary) and `--help` (all of it); `strata \
         --version` prints the version and the commit. Exit statuses are in \
         [Troubleshooting](../troubleshooting.md).\n\n",
    );
    let subs: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_string())
        .collect();
    out.push_str("Commands:\n\n");
    for sub in &subs {
        let about = cmd
            .find_subcommand(sub)
            .and_then(|s| s.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        let first = about.lines().next().unwrap_or("").trim_end_matches('.');
        writeln!(out, "- [`strata {sub}`](#strata-{sub}): {}", escape(first)).unwrap();
    }
    out.push('\n');
    render_command(&mut cmd, "strata", 2, &mut out);
    out.trim_end().to_string() + "\n"
}

#[test]
fn cli_reference_is_current() {
    let path = root().join("docs/src/reference/cli.md");
    let want = cli_reference();
    if std::env::var_os("STRATA_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        let line = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(have.lines().count().min(want.lines().count()));
        panic!(
            "docs/src/reference/cli.md is not the command line's current definition \
             (first difference at line {}: {:?} should be {:?}); run \
             `STRATA_BLESS=1 cargo test -p strata-cli --test integration docs` to write it again",
            line + 1,
            have.lines().nth(line).unwrap_or("<end of file>"),
            want.lines().nth(line).unwrap_or("<end of file>"),
        );
    }
}

#[test]
fn every_chapter_is_in_the_summary() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    for chapter in chapters() {
        let name = chapter.display().to_string();
        if name == "SUMMARY.md" {
            continue;
        }
        assert!(
            summary.contains(&format!("]({name})")),
            "docs/src/{name} is not in docs/src/SUMMARY.md, so the book leaves it out"
        );
    }
}

/// A relative link (or image) of a Markdown text: its target file (empty
/// for the same page) and its `#anchor` (empty for none).
struct Link {
    target: String,
    anchor: String,
}

/// The relative links of Markdown `text` (no URLs), outside code blocks.
fn links(text: &str) -> Vec<Link> {
    let mut out = vec![];
    let mut code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            code = !code;
        }
        if code {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            let (target, anchor) = after[..end].split_once('#').unwrap_or((&after[..end], ""));
            if !target.contains("://") && !target.starts_with("mailto:") {
                out.push(Link {
                    target: target.to_string(),
                    anchor: anchor.to_string(),
                });
            }
            rest = &after[end..];
        }
    }
    out
}

/// The anchors mdBook gives the headings of Markdown `text`: lower case,
/// spaces as `-`, only letters, digits, `-` and `_` kept.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            code = !code;
        }
        if code || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        out.insert(slug);
    }
    out
}

#[test]
fn relative_links_resolve() {
    let src = root().join("docs/src");
    let mut broken = vec![];
    let mut check = |from: &Path, name: String| {
        let text = std::fs::read_to_string(from).unwrap();
        for l in links(&text) {
            let file = if l.target.is_empty() {
                from.to_path_buf()
            } else {
                from.parent().unwrap().join(&l.target)
            };
            if !file.exists() {
                broken.push(format!("{name}: {}", l.target));
            } else if !l.anchor.is_empty()
                && file.extension().is_some_and(|x| x == "md")
                && !anchors(&std::fs::read_to_string(&file).unwrap()).contains(&l.anchor)
            {
                broken.push(format!(
                    "{name}: {}#{} (no such heading)",
                    l.target, l.anchor
                ));
            }
        }
    };
    for chapter in chapters() {
        check(
            &src.join(&chapter),
            format!("docs/src/{}", chapter.display()),
        );
    }
    check(&root().join("README.md"), "README.md".into());
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_performance_page_links_every_results_file() {
    let page = std::fs::read_to_string(root().join("docs/src/performance.md")).unwrap();
    let linked: BTreeSet<String> = links(&page).into_iter().map(|l| l.target).collect();
    let results = root().join("benches/results");
    let mut missing = vec![];
    for e in std::fs::read_dir(&results).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let target = if p.is_dir() {
            format!("../../benches/results/{name}/")
        } else {
            format!("../../benches/results/{name}")
        };
        if !linked.contains(&target) {
            missing.push(target);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/src/performance.md links none of: {missing:?}"
    );
}

/// Every property name of `value` (a JSON Schema) and of the schemas in it.
fn schema_keys(value: &serde_json::Value, out: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            for v in map.values() {
                schema_keys(v, out);
            }
        }
        serde_json::Value::Array(items) => {
            for v in items {
                schema_keys(v, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_spec_key_has_an_example() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("crates/gen/spec.schema.json")).unwrap(),
    )
    .unwrap();
    let mut keys = BTreeSet::new();
    schema_keys(&schema, &mut keys);
    assert!(keys.len() > 50, "{keys:?}");
    let examples: String = marked(&["toml", "spec"])
        .into_iter()
        .chain(marked(&["sh", "runnable"]))
        .map(|(_, b)| b.code)
        .collect();
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| {
            ![
                format!("{k} ="),
                format!("[{k}]"),
                format!(".{k}]"),
                format!("[[{k}]]"),
            ]
            .iter()
            .any(|p| examples.contains(p.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "keys of crates/gen/spec.schema.json without an example in docs/src (a `toml spec` \
         or `sh runnable` block): {missing:?}"
    );
}

/// The README is a landing page: at most 300 lines, with the command that
/// runs the main job and the one that runs every test near its top (the
/// reference lives in the guide).
#[test]
fn readme_is_a_landing_page() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    assert!(
        lines.len() <= 300,
        "README.md has {} lines; move reference text into docs/src",
        lines.len()
    );
    let top = lines[..lines.len().min(40)].join("\n");
    for command in [
        "cargo run --release --bin strata -- generate",
        "scripts/test",
    ] {
        assert!(
            top.contains(command),
            "README.md's first 40 lines do not show `{command}`"
        );
    }
}
