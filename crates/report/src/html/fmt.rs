//! Text for the page: escaping, truncation and number formatting.

/// Escapes text for HTML and SVG, in element content and in quoted
/// attribute values: `& < > " '` become entities and control characters
/// (other than tab and newline) become U+FFFD.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(ch),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to at most `max` characters, the cut marked with `…`.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    let max = max.max(1);
    let mut chars = s.char_indices();
    match chars.nth(max) {
        None => s.to_string(),
        Some(_) => {
            let end = s.char_indices().nth(max - 1).map_or(s.len(), |(i, _)| i);
            format!("{}…", &s[..end])
        }
    }
}

/// `s` cut to its last `max` characters at most, the cut marked with `…`
/// (for paths, whose ends tell them apart).
pub(crate) fn truncate_start(s: &str, max: usize) -> String {
    let max = max.max(1);
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let start = s.char_indices().nth(n - (max - 1)).map_or(0, |(i, _)| i);
    format!("…{}", &s[start..])
}

/// [`truncate`], then [`esc`].
pub(crate) fn esc_trunc(s: &str, max: usize) -> String {
    esc(&truncate(s, max))
}

/// Digits grouped by thousands: `1,234,567`.
pub(crate) fn int(n: u64) -> String {
    group(&n.to_string())
}

/// Groups the digits of an unsigned integer's text by thousands.
fn group(digits: &str) -> String {
    let len = digits.len();
    let mut out = String::with_capacity(len + len / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (len - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A non-finite number as text.
fn non_finite(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v > 0.0 {
        "∞".into()
    } else {
        "−∞".into()
    }
}

/// Removes trailing zeros after a decimal point (and the point itself).
fn trim_zeros(mut s: String) -> String {
    if s.contains('.') && !s.contains('e') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" { "0".into() } else { s }
}

/// A statistic: integers with thousands separators, others to about six
/// significant digits, very large or small ones in scientific notation.
pub(crate) fn num(v: f64) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-4..1e15).contains(&a) {
        return format!("{v:.3e}");
    }
    let decimals = if v.fract() == 0.0 {
        0
    } else {
        (5 - a.log10().floor() as i32).clamp(0, 8) as usize
    };
    let s = trim_zeros(format!("{a:.decimals$}"));
    let (whole, frac) = s.split_once('.').unwrap_or((&s, ""));
    let mut out = String::new();
    if v < 0.0 && s != "0" {
        out.push('-');
    }
    out.push_str(&group(whole));
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// A share as a percentage: `12.3%`, small ones with more digits.
pub(crate) fn pct(share: f64) -> String {
    if !share.is_finite() {
        return non_finite(share);
    }
    let p = share * 100.0;
    if p == 0.0 {
        "0%".into()
    } else if p.abs() < 0.01 {
        "<0.01%".into()
    } else if p.abs() < 0.1 || (p > 99.9 && p < 100.0) {
        format!("{}%", trim_zeros(format!("{p:.2}")))
    } else {
        format!("{}%", trim_zeros(format!("{p:.1}")))
    }
}

/// `part` of `whole` as a share, 0 when `whole` is 0.
pub(crate) fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// A size in bytes: `512 B`, `1.5 KiB`, `2.3 GiB`.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    let decimals = if v >= 100.0 { 0 } else { 1 };
    format!("{} {}", trim_zeros(format!("{v:.decimals$}")), UNITS[unit])
}

/// The SI divisor and suffix for numbers up to `max` in magnitude.
fn si_unit(max: f64) -> (f64, &'static str) {
    const UNITS: [(f64, &str); 6] = [
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
    ];
    UNITS
        .iter()
        .find(|(d, _)| max >= *d)
        .map_or((1.0, ""), |&(d, u)| (d, u))
}

/// One number with an SI suffix and three significant digits: `1.2k`,
/// `35M`, `0.25`.
pub(crate) fn si(v: f64) -> String {
    if !v.is_finite() {
        return non_finite(v);
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e21).contains(&a) {
        return format!("{v:.1e}");
    }
    let (d, unit) = si_unit(a);
    let x = v / d;
    let decimals = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else if x.abs() >= 1.0 {
        2
    } else {
        3
    };
    format!("{}{unit}", trim_zeros(format!("{x:.decimals$}")))
}

/// Labels of an axis's ticks, `step` apart: each with its SI suffix and
/// as many decimals as the step needs at that suffix.
pub(crate) fn tick_labels(ticks: &[f64], step: f64) -> Vec<String> {
    ticks
        .iter()
        .map(|&t| {
            if !t.is_finite() {
                return non_finite(t);
            }
            if t.abs() >= 1e21 {
                return format!("{t:.1e}");
            }
            if t.abs() < step.abs() * 1e-6 {
                return "0".into();
            }
            let (d, unit) = si_unit(t.abs());
            let decimals = if step.is_finite() && step > 0.0 {
                (-((step / d).log10() + 1e-9).floor()).clamp(0.0, 6.0) as usize
            } else {
                2
            };
            let s = trim_zeros(format!("{:.decimals$}", t / d));
            if s == "0" { s } else { format!("{s}{unit}") }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abcd", 4), "abcd");
        assert_eq!(truncate("ééééé", 3), "éé…");
        assert_eq!(truncate_start("a/b/part-1.parquet", 8), "…parquet");
        assert_eq!(truncate_start("ab", 8), "ab");
        assert_eq!(int(0), "0");
        assert_eq!(int(1234567), "1,234,567");
        assert_eq!(int(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(num(1234.5678), "1,234.57");
        assert_eq!(num(-3.0), "-3");
        assert_eq!(num(0.012345), "0.012345");
        assert_eq!(num(f64::NAN), "NaN");
        assert_eq!(num(f64::INFINITY), "∞");
        assert_eq!(num(1e300), "1.000e300");
        assert_eq!(pct(0.1234), "12.3%");
        assert_eq!(pct(0.0), "0%");
        assert_eq!(pct(1.0), "100%");
        assert_eq!(pct(0.00001), "<0.01%");
        assert_eq!(bytes(10), "10 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(u64::MAX), "16 EiB");
        assert_eq!(si(1500.0), "1.5k");
        assert_eq!(si(2.5e7), "25M");
        assert_eq!(si(0.25), "0.25");
        assert_eq!(
            tick_labels(&[0.0, 500.0, 1000.0, 1500.0], 500.0),
            ["0", "500", "1k", "1.5k"]
        );
        assert_eq!(
            tick_labels(&[100_200.0, 100_400.0], 200.0),
            ["100.2k", "100.4k"]
        );
        assert_eq!(
            tick_labels(&[0.0, 0.1, 0.2, 0.30000000000000004], 0.1),
            ["0", "0.1", "0.2", "0.3"]
        );
    }
}
