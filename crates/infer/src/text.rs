//! The patterns of strings too varied to be categories: a template of
//! character classes, words of a vocabulary, or characters of an
//! alphabet, read from a column's sampled strings.

use std::collections::HashMap;

/// How a string column's values are generated.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pattern {
    /// A random version 4 UUID.
    Uuid,
    /// A template (`{digits(3)}-{upper(2)}`), and the share of the
    /// sampled values that have its shape.
    Template { template: String, share: f64 },
    /// `min..=max` words of `words`, joined by spaces.
    Words {
        words: Vec<String>,
        min: u64,
        max: u64,
        distinct: bool,
        coverage: f64,
    },
    /// `min..=max` characters of `alphabet`.
    Chars {
        alphabet: String,
        min: u64,
        max: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Run {
    Digits(usize),
    Upper(usize),
    Lower(usize),
    /// Lowercase hex digits (coarse runs only).
    Hex(usize),
    Lit(char),
}

/// The runs of `s`: digits, uppercase and lowercase letters, and each
/// other character; `coarse` merges digits and `a`-`f` into hex runs.
fn runs(s: &str, coarse: bool) -> Vec<(Run, &str)> {
    let mut out: Vec<(Run, &str)> = Vec::new();
    let mut start = 0;
    let class = |c: char| -> u8 {
        if coarse && matches!(c, '0'..='9' | 'a'..='f') {
            4
        } else if c.is_ascii_digit() {
            1
        } else if c.is_ascii_uppercase() {
            2
        } else if c.is_ascii_lowercase() {
            3
        } else {
            0
        }
    };
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let k = class(c);
        if k == 0 {
            out.push((Run::Lit(c), &s[at..at + c.len_utf8()]));
            i += 1;
            start = i;
            continue;
        }
        let mut j = i;
        while j < chars.len() && class(chars[j].1) == k {
            j += 1;
        }
        let end = if j < chars.len() { chars[j].0 } else { s.len() };
        let n = j - i;
        let run = match k {
            1 => Run::Digits(n),
            2 => Run::Upper(n),
            4 => Run::Hex(n),
            _ => Run::Lower(n),
        };
        out.push((run, &s[at..end]));
        i = j;
        start = i;
    }
    let _ = start;
    out
}

fn escape(s: &str) -> String {
    s.replace('{', "{{").replace('}', "}}")
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// The pattern of `texts` (a column's sampled strings), whose exact byte
/// lengths run `min_len..=max_len`. `unique`: the column's values never
/// repeat (a digit run of its template becomes a sequence). A literal
/// run, a word or a character is kept only when at least `min_count`
/// sampled values hold it.
pub(crate) fn pattern(
    texts: &[Box<str>],
    min_len: u64,
    max_len: u64,
    unique: bool,
    min_count: u64,
) -> Pattern {
    if !texts.is_empty() && texts.iter().all(|t| is_uuid(t)) {
        return Pattern::Uuid;
    }
    if let Some(t) = template(texts, unique, min_count) {
        return t;
    }
    if let Some(w) = words(texts, min_count) {
        return w;
    }
    let mut counts: HashMap<char, u64> = HashMap::new();
    for t in texts {
        for c in t.chars() {
            *counts.entry(c).or_insert(0) += 1;
        }
    }
    let mut alphabet: Vec<char> = counts
        .into_iter()
        .filter(|&(_, n)| n >= min_count)
        .map(|(c, _)| c)
        .collect();
    alphabet.sort_unstable();
    if alphabet.is_empty() {
        alphabet = ('a'..='z').collect();
    }
    // Lengths in characters: bytes for ASCII text.
    let ascii = alphabet.iter().all(char::is_ascii);
    let (min, max) = if ascii {
        (min_len, max_len)
    } else {
        let lens = texts.iter().map(|t| t.chars().count() as u64);
        (lens.clone().min().unwrap_or(0), lens.max().unwrap_or(0))
    };
    Pattern::Chars {
        alphabet: alphabet.into_iter().collect(),
        min,
        max,
    }
}

fn template(texts: &[Box<str>], unique: bool, min_count: u64) -> Option<Pattern> {
    shaped(texts, unique, min_count, false).or_else(|| shaped(texts, unique, min_count, true))
}

fn shaped(texts: &[Box<str>], unique: bool, min_count: u64, coarse: bool) -> Option<Pattern> {
    let mut shapes: HashMap<Vec<Run>, Vec<usize>> = HashMap::new();
    for (i, t) in texts.iter().enumerate() {
        if t.is_empty() {
            continue;
        }
        shapes
            .entry(runs(t, coarse).into_iter().map(|(r, _)| r).collect())
            .or_default()
            .push(i);
    }
    let (shape, members) = shapes.into_iter().max_by(|a, b| {
        a.1.len()
            .cmp(&b.1.len())
            .then_with(|| format!("{:?}", b.0).cmp(&format!("{:?}", a.0)))
    })?;
    let share = members.len() as f64 / texts.len() as f64;
    if share < 0.9 || (members.len() as u64) < min_count.max(2) {
        return None;
    }
    // A run of letters or digits is literal when every value has the same
    // text there; a template of literals only is a category, not a shape.
    let split: Vec<Vec<(Run, &str)>> = members.iter().map(|&i| runs(&texts[i], coarse)).collect();
    let mut out = String::new();
    let mut slots = 0;
    let mut digit_slots: Vec<(usize, usize)> = Vec::new();
    let mut pieces: Vec<String> = Vec::new();
    for (k, run) in shape.iter().enumerate() {
        let first = split[0][k].1;
        let constant = split.iter().all(|s| s[k].1 == first);
        let piece = match run {
            Run::Lit(_) => {
                if !constant {
                    return None;
                }
                escape(first)
            }
            _ if constant => escape(first),
            Run::Digits(n) => {
                slots += 1;
                digit_slots.push((pieces.len(), *n));
                format!("{{digits({n})}}")
            }
            Run::Upper(n) => {
                slots += 1;
                format!("{{upper({n})}}")
            }
            Run::Lower(n) => {
                slots += 1;
                format!("{{lower({n})}}")
            }
            Run::Hex(n)
                if split
                    .iter()
                    .all(|s| s[k].1.bytes().all(|b| b.is_ascii_digit())) =>
            {
                slots += 1;
                digit_slots.push((pieces.len(), *n));
                format!("{{digits({n})}}")
            }
            Run::Hex(n) => {
                slots += 1;
                let mut p = String::new();
                let mut left = *n;
                while left > 0 {
                    let k = left.min(16);
                    p.push_str(&format!("{{hex({k})}}"));
                    left -= k;
                }
                p
            }
        };
        pieces.push(piece);
    }
    if slots == 0 {
        return None;
    }
    // One digit run in a unique column: an identifier, numbered.
    if unique
        && digit_slots.len() == 1
        && slots == 1
        && let Some(&(at, n)) = digit_slots.first()
    {
        pieces[at] = format!("{{seq:0{n}}}");
    }
    // Slots take at most 64 characters; longer runs split.
    for p in pieces {
        out.push_str(&split_long(&p));
    }
    Some(Pattern::Template {
        template: out,
        share,
    })
}

fn split_long(piece: &str) -> String {
    for class in ["digits", "upper", "lower"] {
        if let Some(n) = piece
            .strip_prefix(&format!("{{{class}("))
            .and_then(|r| r.strip_suffix(")}"))
            .and_then(|n| n.parse::<usize>().ok())
            && n > 64
        {
            let mut s = String::new();
            let mut left = n;
            while left > 0 {
                let k = left.min(64);
                s.push_str(&format!("{{{class}({k})}}"));
                left -= k;
            }
            return s;
        }
    }
    piece.to_string()
}

fn words(texts: &[Box<str>], min_count: u64) -> Option<Pattern> {
    let mut counts: HashMap<&str, u64> = HashMap::new();
    let mut tokens = 0u64;
    let (mut min, mut max) = (u64::MAX, 0u64);
    let mut distinct = true;
    let mut multi = 0;
    for t in texts {
        if t.contains("  ") || t.starts_with(' ') || t.ends_with(' ') {
            return None;
        }
        let ws: Vec<&str> = t.split(' ').filter(|w| !w.is_empty()).collect();
        min = min.min(ws.len() as u64);
        max = max.max(ws.len() as u64);
        if ws.len() > 1 {
            multi += 1;
        }
        let mut seen = std::collections::HashSet::new();
        for w in &ws {
            tokens += 1;
            *counts.entry(w).or_insert(0) += 1;
            if !seen.insert(*w) {
                distinct = false;
            }
        }
    }
    if tokens == 0 || multi * 2 < texts.len() {
        return None;
    }
    let mut kept: Vec<(&str, u64)> = counts
        .into_iter()
        .filter(|&(_, n)| n >= min_count)
        .collect();
    let covered: u64 = kept.iter().map(|k| k.1).sum();
    let coverage = covered as f64 / tokens as f64;
    if coverage < 0.95
        || kept.len() < 2
        || kept.len() > 5000
        || (distinct && (kept.len() as u64) < max)
    {
        return None;
    }
    kept.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    Some(Pattern::Words {
        words: kept.into_iter().map(|(w, _)| w.to_string()).collect(),
        min: min.max(1),
        max: max.max(1),
        distinct,
        coverage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(v: &[String]) -> Vec<Box<str>> {
        v.iter().map(|s| s.as_str().into()).collect()
    }

    #[test]
    fn phone_numbers_become_a_template_of_digit_runs() {
        let t: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    "{:02}-{:03}-{:03}-{:04}",
                    10 + i % 25,
                    (i * 7) % 900 + 100,
                    (i * 13) % 900 + 100,
                    (i * 31) % 9000 + 1000
                )
            })
            .collect();
        match pattern(&boxed(&t), 15, 15, false, 10) {
            Pattern::Template { template, share } => {
                assert_eq!(template, "{digits(2)}-{digits(3)}-{digits(3)}-{digits(4)}");
                assert_eq!(share, 1.0);
            }
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn a_constant_prefix_stays_and_a_unique_number_becomes_a_sequence() {
        let t: Vec<String> = (1..=300).map(|i| format!("Customer#{i:09}")).collect();
        match pattern(&boxed(&t), 18, 18, true, 10) {
            Pattern::Template { template, .. } => assert_eq!(template, "Customer#{seq:09}"),
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn text_of_a_small_vocabulary_becomes_words_and_rare_words_are_dropped() {
        let vocab = ["quick", "brown", "fox", "jumps", "over", "lazy", "dog"];
        let mut t: Vec<String> = (0..500)
            .map(|i| {
                (0..(2 + i % 5))
                    .map(|k| vocab[(i * 3 + k * 5) % 7])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        t.push("secret words".into());
        match pattern(&boxed(&t), 3, 40, false, 10) {
            Pattern::Words {
                words, min, max, ..
            } => {
                assert_eq!(words.len(), 7);
                assert!(!words.iter().any(|w| w == "secret"));
                assert_eq!((min, max), (2, 6));
            }
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn random_characters_become_an_alphabet_without_rare_characters() {
        let t: Vec<String> = (0..400u32)
            .map(|i| {
                (0..(10 + i % 20))
                    .map(|k| char::from(b'a' + ((i * 7 + k * 11) % 26) as u8))
                    .collect()
            })
            .chain(std::iter::once("Zq!".to_string()))
            .collect();
        match pattern(&boxed(&t), 3, 29, false, 10) {
            Pattern::Chars { alphabet, min, max } => {
                assert_eq!(alphabet, "abcdefghijklmnopqrstuvwxyz");
                assert_eq!((min, max), (3, 29));
            }
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn hex_identifiers_become_hex_slots() {
        let t: Vec<String> = (0..300u64)
            .map(|i| format!("s-{:012x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16))
            .collect();
        match pattern(&boxed(&t), 14, 14, true, 10) {
            Pattern::Template { template, .. } => assert_eq!(template, "s-{hex(12)}"),
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn uuids_are_recognised() {
        let t = vec!["0f8fad5b-d9cb-469f-a165-70867728950e".to_string(); 20];
        assert_eq!(pattern(&boxed(&t), 36, 36, false, 10), Pattern::Uuid);
    }
}
