//! No module circles in any crate of the workspace.
//!
//! The module graph is derived from the source: every `crate::`, `super::`
//! and `self::` path (in `use` lines and in code), and every path through a
//! child module's name, resolved through `pub use` re-exports to the module
//! that defines the item. Two modules with the same parent depend on each
//! other when code in one (or below it) names an item of the other (or
//! below it); a parent's own code and its children are nodes of the same
//! graph, so a child that calls back into functions its parent defines
//! while the parent calls the child is a circle too. Test modules
//! (`#[cfg(test)] mod ...`, `tests.rs`) are left out. A strongly connected
//! component of more than one node in any parent's graph is a circle.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

/// A module: its path of names from the crate root (empty for the root).
type ModPath = Vec<String>;

/// One parsed source file of a crate.
struct Module {
    file: PathBuf,
    /// Child modules declared here (`mod x;` or inline `mod x {`), not tests.
    children: BTreeSet<String>,
    /// Names re-exported here (`pub use a::b::Name;`), to the path they name.
    reexports: BTreeMap<String, ModPath>,
    /// Paths named by code here (absolute, item name last), with their line.
    uses: Vec<(ModPath, usize)>,
}

/// Source with comments, strings, char literals and test modules blanked
/// out (newlines kept, so lines still count).
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &b[i..j.min(b.len())] {
                out.push(blank(ch));
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), or a lifetime.
            let end = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&j| b[j] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    for _ in i..=e {
                        out.push(' ');
                    }
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    blank_test_modules(&out)
}

/// Blanks `#[cfg(test)]` items that are inline modules (`mod x { ... }`).
fn blank_test_modules(src: &str) -> String {
    let mut b: Vec<char> = src.chars().collect();
    let text: String = b.iter().collect();
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]").map(|p| p + from) {
        from = at + 1;
        let start = text[..at].chars().count();
        // Other attributes and a visibility may stand before `mod`.
        let mut rest = text[at + "#[cfg(test)]".len()..].trim_start();
        while rest.starts_with("#[") {
            match rest.find(']') {
                Some(end) => rest = rest[end + 1..].trim_start(),
                None => break,
            }
        }
        if let Some(after) = rest.strip_prefix("pub") {
            rest = after.trim_start();
            if rest.starts_with('(') {
                rest = rest.find(')').map_or("", |e| rest[e + 1..].trim_start());
            }
        }
        if !rest.starts_with("mod ") {
            continue;
        }
        // Find the module's braces (or its `;`).
        let mut i = start;
        while i < b.len() && b[i] != '{' && b[i] != ';' {
            i += 1;
        }
        if i >= b.len() || b[i] == ';' {
            continue;
        }
        let mut depth = 0;
        let mut j = i;
        while j < b.len() {
            match b[j] {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let last = j.min(b.len() - 1);
        for ch in &mut b[start..=last] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    }
    b.into_iter().collect()
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Sep,
    Open,
    Close,
    Comma,
    Star,
    Semi,
    Other,
}

/// Tokens with their line numbers (1-based).
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' {
            let s = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            let word: String = b[s..i].iter().collect();
            out.push((Tok::Ident(word.trim_start_matches("r#").to_string()), line));
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push((Tok::Sep, line));
            i += 2;
        } else {
            out.push((
                match c {
                    '{' => Tok::Open,
                    '}' => Tok::Close,
                    ',' => Tok::Comma,
                    '*' => Tok::Star,
                    ';' => Tok::Semi,
                    _ => Tok::Other,
                },
                line,
            ));
            i += 1;
        }
    }
    out
}

/// Expands the path starting at `toks[i]` (a use tree after `prefix`):
/// every full path it names, and the index after it.
fn path_tree(toks: &[(Tok, usize)], mut i: usize, prefix: ModPath) -> (Vec<ModPath>, usize) {
    let mut path = prefix;
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                i += 1;
                if toks.get(i).map(|t| &t.0) == Some(&Tok::Sep) {
                    i += 1;
                    continue;
                }
                return (vec![path], i);
            }
            Some(Tok::Open) => {
                i += 1;
                let mut all = Vec::new();
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Close) => return (all, i + 1),
                        Some(Tok::Comma) => i += 1,
                        None => return (all, i),
                        _ => {
                            let (more, next) = path_tree(toks, i, path.clone());
                            all.extend(more);
                            i = if next == i { i + 1 } else { next };
                        }
                    }
                }
            }
            Some(Tok::Star) => return (vec![path], i + 1),
            _ => return (vec![path], i),
        }
    }
}

/// Reads one module file.
fn parse(file: &Path, here: &ModPath) -> Module {
    let src = std::fs::read_to_string(file).unwrap();
    let toks = tokens(&strip(&src));
    let mut m = Module {
        file: file.to_path_buf(),
        children: BTreeSet::new(),
        reexports: BTreeMap::new(),
        uses: Vec::new(),
    };
    // Child modules, first: paths through their names are resolved below.
    for w in toks.windows(2) {
        if let (Tok::Ident(k), Tok::Ident(name)) = (&w[0].0, &w[1].0)
            && k == "mod"
        {
            m.children.insert(name.clone());
        }
    }
    let absolute = |rel: &[String]| -> Option<ModPath> {
        let mut out = here.clone();
        let mut rest = rel;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                out.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    out.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) if m.children.contains(first) => {}
            _ => return None,
        }
        out.extend(rest.iter().cloned());
        Some(out)
    };
    let mut i = 0;
    while i < toks.len() {
        let (tok, line) = &toks[i];
        let after_sep = i > 0 && toks[i - 1].0 == Tok::Sep;
        match tok {
            Tok::Ident(k) if k == "use" => {
                let public = i > 0 && matches!(&toks[i - 1].0, Tok::Ident(p) if p == "pub")
                    || (i > 3
                        && matches!(&toks[i - 4].0, Tok::Ident(p) if p == "pub")
                        && toks[i - 1].0 == Tok::Other);
                let (paths, next) = path_tree(&toks, i + 1, Vec::new());
                for p in paths {
                    let Some(abs) = absolute(&p) else { continue };
                    if public
                        && let Some(name) = p.last()
                        && abs.len() > here.len()
                        && abs.starts_with(here)
                    {
                        // `pub use child::Name`: a re-export, not a use.
                        m.reexports.insert(name.clone(), abs);
                        continue;
                    }
                    m.uses.push((abs, *line));
                }
                i = next.max(i + 1);
            }
            Tok::Ident(k)
                if !after_sep
                    && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Sep)
                    && (k == "crate"
                        || k == "super"
                        || k == "self"
                        || m.children.contains(k.as_str())) =>
            {
                let (paths, next) = path_tree(&toks, i, Vec::new());
                for p in paths {
                    if let Some(abs) = absolute(&p) {
                        m.uses.push((abs, *line));
                    }
                }
                i = next.max(i + 1);
            }
            _ => i += 1,
        }
    }
    m
}

/// Every module file of the crate rooted at `src` (tests and binaries left
/// out), by module path.
fn modules(src: &Path) -> BTreeMap<ModPath, Module> {
    let mut out = BTreeMap::new();
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|r| src.join(r))
        .find(|p| p.exists())
        .unwrap();
    let mut todo = vec![(root, Vec::<String>::new())];
    while let Some((file, path)) = todo.pop() {
        let m = parse(&file, &path);
        let dir = if file.file_name().is_some_and(|n| n == "mod.rs") || path.is_empty() {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for child in &m.children {
            if child == "tests" {
                continue;
            }
            let mut p = path.clone();
            p.push(child.clone());
            for f in [
                dir.join(format!("{child}.rs")),
                dir.join(child).join("mod.rs"),
            ] {
                if f.exists() {
                    todo.push((f, p.clone()));
                    break;
                }
            }
        }
        out.insert(path, m);
    }
    out
}

/// The module that defines the item `path` names: module names are
/// followed as far as they go, then re-exports.
fn resolve(mods: &BTreeMap<ModPath, Module>, path: &[String]) -> ModPath {
    let mut at: ModPath = Vec::new();
    let mut hops = 0;
    let mut rest: Vec<String> = path.to_vec();
    loop {
        let Some(first) = rest.first().cloned() else {
            return at;
        };
        let Some(m) = mods.get(&at) else { return at };
        if m.children.contains(&first)
            && mods.contains_key(&[at.clone(), vec![first.clone()]].concat())
        {
            at.push(first);
            rest.remove(0);
            continue;
        }
        match m.reexports.get(&first) {
            Some(target) if hops < 32 => {
                hops += 1;
                let mut t = target.clone();
                t.extend(rest.drain(1..));
                rest = t;
                at.clear();
            }
            _ => return at,
        }
    }
}

/// Circles found in one crate, as readable lines.
fn circles(krate: &str, src: &Path) -> Vec<String> {
    let mods = modules(src);
    // Per parent: edges between its nodes (a child's name, or "" for the
    // parent's own code), with one example each.
    let mut graphs: BTreeMap<ModPath, BTreeMap<(String, String), String>> = BTreeMap::new();
    for (from, m) in &mods {
        for (path, line) in &m.uses {
            let to = resolve(&mods, path);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            let (parent, a, b) = if common == from.len() && common == to.len() {
                continue;
            } else if common == to.len() {
                // Code below `to` names an item `to` itself defines.
                (to.clone(), from[common].clone(), String::new())
            } else if common == from.len() {
                (from.clone(), String::new(), to[common].clone())
            } else {
                (
                    from[..common].to_vec(),
                    from[common].clone(),
                    to[common].clone(),
                )
            };
            graphs
                .entry(parent)
                .or_default()
                .entry((a, b))
                .or_insert_with(|| {
                    format!("{}:{line} names {}", m.file.display(), path.join("::"))
                });
        }
    }
    let mut found = Vec::new();
    for (parent, edges) in &graphs {
        for cycle in strongly_connected(edges) {
            let show = |n: &str| {
                let name = if n.is_empty() { "(own code)" } else { n };
                format!(
                    "{}::{name}",
                    [vec![krate.to_string()], parent.clone()]
                        .concat()
                        .join("::")
                )
            };
            let mut lines = vec![format!(
                "circle among {}",
                cycle.iter().map(|n| show(n)).collect::<Vec<_>>().join(", ")
            )];
            for ((a, b), example) in edges {
                if cycle.contains(a) && cycle.contains(b) {
                    lines.push(format!("  {} -> {}: {example}", show(a), show(b)));
                }
            }
            found.push(lines.join("\n"));
        }
    }
    found
}

/// Components of more than one node (Tarjan's algorithm).
fn strongly_connected(edges: &BTreeMap<(String, String), String>) -> Vec<BTreeSet<String>> {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default();
    }
    struct T<'a> {
        adj: BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.adj[v].clone() {
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let nodes: Vec<&str> = adj.keys().copied().collect();
    let mut t = T {
        adj,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn workspace_crates() -> Vec<(String, PathBuf)> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(crates)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                p.join("src"),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn no_crate_has_a_module_circle() {
    let crates = workspace_crates();
    assert!(crates.len() >= 10, "{crates:?}");
    let found: Vec<String> = crates
        .iter()
        .flat_map(|(name, src)| circles(name, src))
        .collect();
    assert!(found.is_empty(), "module circles:\n{}", found.join("\n"));
}

/// The checker finds what it is for: circles between siblings (directly
/// and around a loop, through `use` groups, `super::`, code paths and
/// re-exports) and between a parent's own code and a child; none where
/// the dependencies only go one way.
#[test]
fn the_checker_finds_circles_and_only_circles() {
    let dir = tempfile_dir();
    let write = |files: &[(&str, &str)]| {
        let _ = std::fs::remove_dir_all(&dir);
        for (name, text) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        circles("k", &dir)
    };
    // One way only, with a test module and strings naming the other way.
    assert_eq!(
        write(&[
            ("lib.rs", "mod a;\nmod b;\npub use a::A;\n"),
            ("a.rs", "pub struct A;\nfn f() -> crate::b::B { todo!() }\n"),
            (
                "b.rs",
                "pub struct B;\n// crate::a::A\nconst S: &str = \"crate::a::A\";\n\
                 #[cfg(test)]\nmod tests { use crate::a::A; }\n\
                 #[cfg(test)]\n#[allow(dead_code)]\npub(super) mod more { use crate::a::A; }\n"
            ),
        ]),
        Vec::<String>::new()
    );
    // Both ways: a `use` group one way, a re-export followed the other.
    let found = write(&[
        ("lib.rs", "mod a;\nmod b;\npub use a::A;\n"),
        ("a.rs", "use crate::{b::{B}, x};\npub struct A;\n"),
        ("b.rs", "pub struct B;\nfn f(_: crate::A) {}\n"),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("circle among k::a, k::b"), "{found:?}");
    // Around a loop of three, one edge through `super::`, one nested.
    let found = write(&[
        ("lib.rs", "pub mod m;\n"),
        ("m/mod.rs", "mod a;\nmod b;\nmod c;\n"),
        ("m/a.rs", "use super::b::B;\npub struct A;\n"),
        ("m/b/mod.rs", "mod inner;\npub struct B;\n"),
        ("m/b/inner.rs", "fn f() { let _ = crate::m::c::C; }\n"),
        ("m/c.rs", "pub struct C;\nfn g(_: super::a::A) {}\n"),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("circle among k::m::a, k::m::b, k::m::c"),
        "{found:?}"
    );
    // A child calling back into its parent's own function.
    let found = write(&[
        (
            "lib.rs",
            "mod ext;\npub fn run() { ext::go() }\npub fn helper() {}\n",
        ),
        ("ext.rs", "pub fn go() { super::helper() }\n"),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("k::(own code)"), "{found:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh scratch directory under the target directory.
fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-module-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
