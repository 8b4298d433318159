//! String templates: literal text with `{placeholder}` slots.
//!
//! | placeholder | value |
//! |---|---|
//! | `{seq}` | the element index (see [`crate::Generator::Sequence`]) |
//! | `{first_name}`, `{last_name}`, `{word}` | a uniform pick from a built-in list |
//! | `{uniform(A,B)}` | an integer uniform in `A..=B` |
//! | `{zipf(S,N)}` | a Zipf rank in `1..=N` with exponent `S` |
//! | `{hex(N)}` | `N` random lowercase hex digits (1 to 16) |
//! | `{digits(N)}` | `N` random decimal digits, leading zeros kept (1 to 64) |
//! | `{upper(N)}` | `N` random ASCII uppercase letters `A`-`Z` (1 to 64) |
//! | `{lower(N)}` | `N` random ASCII lowercase letters `a`-`z` (1 to 64) |
//!
//! Number slots take a width: `{seq:08}` pads with zeros to 8 digits,
//! `{seq:8}` with spaces. `{{` and `}}` are literal braces.

use std::fmt;

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    source: String,
    parts: Vec<Part>,
}

/// A piece of a template.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text copied as is.
    Literal(String),
    /// A generated value.
    Slot {
        /// What to generate.
        placeholder: Placeholder,
        /// Minimum width of a number.
        width: usize,
        /// Pad with zeros (else spaces).
        zero: bool,
    },
}

/// What a template slot generates.
#[derive(Debug, Clone, PartialEq)]
pub enum Placeholder {
    /// The element index.
    Seq,
    /// A given name.
    FirstName,
    /// A family name.
    LastName,
    /// A common English word.
    Word,
    /// An integer uniform in `min..=max`.
    Uniform {
        /// Least value.
        min: i64,
        /// Greatest value.
        max: i64,
    },
    /// A Zipf rank.
    Zipf {
        /// Exponent.
        s: f64,
        /// Ranks.
        n: u64,
    },
    /// Random hex digits.
    Hex(u32),
    /// Random decimal digits (`0`-`9`, leading zeros kept).
    Digits(u32),
    /// Random uppercase ASCII letters.
    Upper(u32),
    /// Random lowercase ASCII letters.
    Lower(u32),
}

impl Placeholder {
    fn is_number(&self) -> bool {
        matches!(
            self,
            Placeholder::Seq | Placeholder::Uniform { .. } | Placeholder::Zipf { .. }
        )
    }
}

impl Template {
    /// Parses `source`.
    ///
    /// # Errors
    /// A message for an unknown placeholder, bad arguments, an unclosed
    /// `{` or a lone `}`.
    pub fn parse(source: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut chars = source.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|p| p.1) == Some('{') => {
                    chars.next();
                    lit.push('{');
                }
                '}' if chars.peek().map(|p| p.1) == Some('}') => {
                    chars.next();
                    lit.push('}');
                }
                '}' => {
                    return Err(format!(
                        "template {source:?}: lone `}}` at byte {at} (write `}}}}` for a brace)"
                    ));
                }
                '{' => {
                    let rest = &source[at + 1..];
                    let Some(end) = rest.find('}') else {
                        return Err(format!(
                            "template {source:?}: `{{` at byte {at} is not closed"
                        ));
                    };
                    let inner = &rest[..end];
                    for _ in 0..inner.chars().count() + 1 {
                        chars.next();
                    }
                    if !lit.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut lit)));
                    }
                    parts.push(parse_slot(inner).map_err(|e| format!("template {source:?}: {e}"))?);
                }
                c => lit.push(c),
            }
        }
        if !lit.is_empty() {
            parts.push(Part::Literal(lit));
        }
        Ok(Template {
            source: source.to_string(),
            parts,
        })
    }

    /// The template as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The parsed pieces.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// An upper bound on the bytes of one value.
    pub fn max_len(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Literal(s) => s.len(),
                Part::Slot {
                    placeholder, width, ..
                } => {
                    let own = match placeholder {
                        Placeholder::Seq
                        | Placeholder::Uniform { .. }
                        | Placeholder::Zipf { .. } => 20,
                        Placeholder::FirstName | Placeholder::LastName | Placeholder::Word => {
                            crate::names::SLOT
                        }
                        Placeholder::Hex(n)
                        | Placeholder::Digits(n)
                        | Placeholder::Upper(n)
                        | Placeholder::Lower(n) => *n as usize,
                    };
                    own.max(*width)
                }
            })
            .sum()
    }

    /// The number of distinct values, when it is finite and below 2^64
    /// (a `{seq}` makes it unbounded).
    pub fn cardinality(&self) -> Option<u64> {
        let mut n: u64 = 1;
        for p in &self.parts {
            let Part::Slot { placeholder, .. } = p else {
                continue;
            };
            let k = match placeholder {
                Placeholder::Seq => return None,
                Placeholder::FirstName => crate::names::first_names().len() as u64,
                Placeholder::LastName => crate::names::last_names().len() as u64,
                Placeholder::Word => crate::names::words().len() as u64,
                Placeholder::Uniform { min, max } => {
                    u64::try_from(*max as i128 - *min as i128 + 1).ok()?
                }
                Placeholder::Zipf { n, .. } => *n,
                Placeholder::Hex(d) => 1u64.checked_shl(4 * d)?,
                Placeholder::Digits(d) => 10u64.checked_pow(*d)?,
                Placeholder::Upper(d) | Placeholder::Lower(d) => 26u64.checked_pow(*d)?,
            };
            n = n.checked_mul(k)?;
        }
        Some(n)
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

fn parse_slot(inner: &str) -> Result<Part, String> {
    let (body, format) = match inner.rsplit_once(':') {
        // A colon inside parentheses belongs to the arguments.
        Some((b, f)) if !f.contains(')') => (b.trim(), Some(f.trim())),
        _ => (inner.trim(), None),
    };
    let (name, args) = match body.split_once('(') {
        Some((n, rest)) => {
            let Some(args) = rest.strip_suffix(')') else {
                return Err(format!("`{{{inner}}}`: missing `)`"));
            };
            (n.trim(), Some(args))
        }
        None => (body, None),
    };
    let args: Vec<&str> = args
        .map(|a| a.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let want = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!(
                "`{{{inner}}}`: `{name}` takes {n} argument{}",
                if n == 1 { "" } else { "s" }
            ))
        }
    };
    let int = |s: &str| {
        s.replace('_', "")
            .parse::<i64>()
            .map_err(|_| format!("`{{{inner}}}`: `{s}` is not an integer"))
    };
    let placeholder = match name {
        "seq" => want(0).map(|_| Placeholder::Seq)?,
        "first_name" => want(0).map(|_| Placeholder::FirstName)?,
        "last_name" => want(0).map(|_| Placeholder::LastName)?,
        "word" => want(0).map(|_| Placeholder::Word)?,
        "uniform" => {
            want(2)?;
            let (min, max) = (int(args[0])?, int(args[1])?);
            if min > max {
                return Err(format!("`{{{inner}}}`: min {min} is above max {max}"));
            }
            Placeholder::Uniform { min, max }
        }
        "zipf" => {
            want(2)?;
            let s: f64 = args[0]
                .parse()
                .map_err(|_| format!("`{{{inner}}}`: `{}` is not a number", args[0]))?;
            let n = int(args[1])?;
            if !(s > 0.0 && s.is_finite()) {
                return Err(format!(
                    "`{{{inner}}}`: zipf exponent s must be a positive number, not {s}"
                ));
            }
            if n < 1 {
                return Err(format!("`{{{inner}}}`: zipf needs n >= 1, not {n}"));
            }
            Placeholder::Zipf { s, n: n as u64 }
        }
        "hex" => {
            want(1)?;
            let n = int(args[0])?;
            if !(1..=16).contains(&n) {
                return Err(format!("`{{{inner}}}`: hex takes 1 to 16 digits, not {n}"));
            }
            Placeholder::Hex(n as u32)
        }
        "digits" | "upper" | "lower" => {
            want(1)?;
            let n = int(args[0])?;
            if !(1..=64).contains(&n) {
                let what = if name == "digits" {
                    "digits"
                } else {
                    "letters"
                };
                return Err(format!(
                    "`{{{inner}}}`: {name} takes 1 to 64 {what}, not {n}"
                ));
            }
            let n = n as u32;
            match name {
                "digits" => Placeholder::Digits(n),
                "upper" => Placeholder::Upper(n),
                _ => Placeholder::Lower(n),
            }
        }
        "" => return Err("empty `{}` (write `{{}}` for braces)".into()),
        other => {
            return Err(format!(
                "unknown placeholder `{other}`; expected seq, first_name, last_name, word, \
                 uniform(A,B), zipf(S,N), hex(N), digits(N), upper(N) or lower(N)"
            ));
        }
    };
    let (width, zero) = match format {
        None => (0, false),
        Some(f) => {
            if !placeholder.is_number() {
                return Err(format!("`{{{inner}}}`: only numbers take a width"));
            }
            let zero = f.starts_with('0') && f.len() > 1;
            let w: usize =
                f.parse().ok().filter(|w| *w <= 64).ok_or_else(|| {
                    format!("`{{{inner}}}`: width `{f}` is not a number up to 64")
                })?;
            (w, zero)
        }
    };
    Ok(Part::Slot {
        placeholder,
        width,
        zero,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_slots_and_literals() {
        let t = Template::parse("+91-99-{seq:08}").unwrap();
        assert_eq!(
            t.parts(),
            &[
                Part::Literal("+91-99-".into()),
                Part::Slot {
                    placeholder: Placeholder::Seq,
                    width: 8,
                    zero: true
                }
            ]
        );
        let t = Template::parse("{{x}} {first_name} {uniform(1, 17)}.{zipf(1.5,10):3}").unwrap();
        assert_eq!(t.parts().len(), 6);
        assert_eq!(t.parts()[0], Part::Literal("{x} ".into()));
        assert_eq!(
            t.cardinality(),
            Some(crate::names::first_names().len() as u64 * 17 * 10)
        );
        assert_eq!(
            Template::parse("{uniform(0,9)}{hex(2)}")
                .unwrap()
                .cardinality(),
            Some(2560)
        );
        assert_eq!(Template::parse("{seq}").unwrap().cardinality(), None);
        let t = Template::parse("{digits(3)}-{upper(2)}{lower(1)}").unwrap();
        assert_eq!(t.cardinality(), Some(1000 * 26 * 26 * 26));
        assert_eq!(t.max_len(), 3 + 1 + 2 + 1);
        assert_eq!(
            Template::parse("{digits(64)}").unwrap().parts(),
            &[Part::Slot {
                placeholder: Placeholder::Digits(64),
                width: 0,
                zero: false
            }]
        );
        assert_eq!(Template::parse("{digits(20)}").unwrap().cardinality(), None);
    }

    #[test]
    fn rejects_bad_templates() {
        for (t, want) in [
            ("{nope}", "unknown placeholder `nope`"),
            ("{seq", "not closed"),
            ("a}b", "lone `}`"),
            ("{uniform(3,1)}", "min 3 is above max 1"),
            ("{zipf(0,10)}", "positive"),
            ("{zipf(1,0)}", "n >= 1"),
            ("{word:08}", "only numbers take a width"),
            ("{hex(17)}", "1 to 16"),
            ("{digits(0)}", "digits takes 1 to 64 digits, not 0"),
            ("{digits(65)}", "digits takes 1 to 64 digits, not 65"),
            ("{upper(0)}", "upper takes 1 to 64 letters, not 0"),
            ("{lower(65)}", "lower takes 1 to 64 letters, not 65"),
            ("{digits}", "`digits` takes 1 argument"),
            ("{upper(x)}", "`x` is not an integer"),
            ("{lower(2):04}", "only numbers take a width"),
            ("{seq(1)}", "takes 0 arguments"),
            ("{}", "empty"),
        ] {
            let e = Template::parse(t).unwrap_err();
            assert!(e.contains(want), "{t}: {e}");
        }
    }
}
