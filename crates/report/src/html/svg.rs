//! Chart primitives and the charts the page draws: an SVG builder whose
//! coordinates are rounded to a tenth of a pixel, linear and logarithmic
//! scales, nice ticks, and one function per kind of chart. Each chart is
//! an `<svg class="chart KIND" role="img">` whose first child is its
//! `<title>`; data are drawn in the data color (`bar`, `dot`), the
//! spec's expectation with elements of class `expected`.

use std::fmt::Write as _;

use super::fmt::{esc, int, pct, share, si, tick_labels, truncate, truncate_start};
use crate::model::{Bin, FileReport, Histogram, KeyRange, NullLevel, RankFrequency, TopValue};

/// The most bars (or points, or rows) one chart draws; the rest are left
/// out and counted in the chart's caption.
pub(crate) const MAX_BARS: usize = 300;
/// The most bins a histogram draws; more are merged into wider ones.
const MAX_BINS: usize = 120;
/// The widest a bar over a category is drawn.
const MAX_BAR_WIDTH: f64 = 36.0;
/// The most values a top-values chart draws.
pub(crate) const MAX_TOP: usize = 25;
/// The most nesting levels a null chart draws.
pub(crate) const MAX_LEVELS: usize = 12;
/// The most partitions a partitions chart draws.
pub(crate) const MAX_PARTITIONS: usize = 60;

/// A coordinate as text: rounded to one decimal, without a trailing
/// `.0`; non-finite ones as 0.
pub(crate) fn c(x: f64) -> String {
    if !x.is_finite() {
        return "0".into();
    }
    let r = (x.clamp(-1e7, 1e7) * 10.0).round() / 10.0;
    if r == 0.0 {
        "0".into()
    } else if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// How a text is anchored at its point.
#[derive(Clone, Copy)]
pub(crate) enum Anchor {
    Start,
    Middle,
    End,
}

/// An SVG being written.
pub(crate) struct Svg {
    buf: String,
}

impl Svg {
    /// Opens `<svg class="chart {classes}" role="img">` of `w` by `h`
    /// pixels, with its title.
    pub(crate) fn new(classes: &str, title: &str, w: f64, h: f64) -> Self {
        let mut buf = String::with_capacity(2048);
        let _ = write!(
            buf,
            r#"<svg class="chart {classes}" role="img" viewBox="0 0 {w} {h}" width="{w}" height="{h}"><title>{t}</title>"#,
            w = c(w),
            h = c(h),
            t = esc(title)
        );
        Svg { buf }
    }

    pub(crate) fn rect(&mut self, class: &str, x: f64, y: f64, w: f64, h: f64) {
        let _ = write!(
            self.buf,
            r#"<rect class="{class}" x="{}" y="{}" width="{}" height="{}"/>"#,
            c(x),
            c(y),
            c(w.max(0.0)),
            c(h.max(0.0))
        );
    }

    /// A rectangle with a tooltip.
    pub(crate) fn rect_tip(&mut self, class: &str, x: f64, y: f64, w: f64, h: f64, tip: &str) {
        let _ = write!(
            self.buf,
            r#"<rect class="{class}" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>"#,
            c(x),
            c(y),
            c(w.max(0.0)),
            c(h.max(0.0)),
            esc(tip)
        );
    }

    pub(crate) fn line(&mut self, class: &str, x1: f64, y1: f64, x2: f64, y2: f64) {
        let _ = write!(
            self.buf,
            r#"<line class="{class}" x1="{}" y1="{}" x2="{}" y2="{}"/>"#,
            c(x1),
            c(y1),
            c(x2),
            c(y2)
        );
    }

    pub(crate) fn circle(&mut self, class: &str, cx: f64, cy: f64, r: f64) {
        let _ = write!(
            self.buf,
            r#"<circle class="{class}" cx="{}" cy="{}" r="{}"/>"#,
            c(cx),
            c(cy),
            c(r)
        );
    }

    /// A path; `d` is built from [`c`] coordinates.
    pub(crate) fn path(&mut self, class: &str, d: &str) {
        if !d.is_empty() {
            let _ = write!(self.buf, r#"<path class="{class}" d="{d}"/>"#);
        }
    }

    /// Text, escaped here.
    pub(crate) fn text(&mut self, class: &str, x: f64, y: f64, anchor: Anchor, s: &str) {
        let anchor = match anchor {
            Anchor::Start => "",
            Anchor::Middle => r#" text-anchor="middle""#,
            Anchor::End => r#" text-anchor="end""#,
        };
        let _ = write!(
            self.buf,
            r#"<text class="{class}" x="{}" y="{}"{anchor}>{}</text>"#,
            c(x),
            c(y),
            esc(s)
        );
    }

    /// Text cut to `max` characters; when cut, the whole as its tooltip.
    pub(crate) fn text_cut(
        &mut self,
        class: &str,
        x: f64,
        y: f64,
        anchor: Anchor,
        s: &str,
        max: usize,
    ) {
        let cut = truncate(s, max);
        if cut.len() == s.len() {
            self.text(class, x, y, anchor, s);
            return;
        }
        self.text(class, x, y, anchor, &cut);
        // The tooltip goes inside the text element just written.
        self.buf.truncate(self.buf.len() - "</text>".len());
        let _ = write!(self.buf, "<title>{}</title></text>", esc(&truncate(s, 120)));
    }

    /// Text cut to its last `max` characters; when cut, the whole as its
    /// tooltip.
    pub(crate) fn text_cut_start(
        &mut self,
        class: &str,
        x: f64,
        y: f64,
        anchor: Anchor,
        s: &str,
        max: usize,
    ) {
        let cut = truncate_start(s, max);
        self.text(class, x, y, anchor, &cut);
        if cut.len() != s.len() {
            self.buf.truncate(self.buf.len() - "</text>".len());
            let _ = write!(self.buf, "<title>{}</title></text>", esc(&truncate(s, 120)));
        }
    }

    /// A legend at the top right, when there is an expectation: the
    /// data's swatch and the expectation's.
    pub(crate) fn legend(&mut self, right: f64, data: &str, expected: Option<&str>) {
        let Some(label) = expected else {
            return;
        };
        let mut x = right - 6.5 * label.chars().count() as f64;
        self.text("legend", x, 11.0, Anchor::Start, label);
        x -= 18.0;
        self.line("sw-expected", x, 7.0, x + 14.0, 7.0);
        x -= 14.0;
        x -= 6.5 * data.chars().count() as f64;
        self.text("legend", x, 11.0, Anchor::Start, data);
        self.rect("sw-data", x - 14.0, 2.0, 10.0, 10.0);
    }

    pub(crate) fn finish(mut self) -> String {
        self.buf.push_str("</svg>");
        self.buf
    }
}

/// Straight lines drawn as one path (grid lines).
#[derive(Default)]
struct Lines(String);

impl Lines {
    fn h(&mut self, x0: f64, x1: f64, y: f64) {
        let _ = write!(self.0, "M{} {}H{}", c(x0), c(y), c(x1));
    }

    fn v(&mut self, x: f64, y0: f64, y1: f64) {
        let _ = write!(self.0, "M{} {}V{}", c(x), c(y0), c(y1));
    }
}

/// A linear map from `[d0, d1]` onto `[r0, r1]`, values outside clamped.
#[derive(Clone, Copy)]
pub(crate) struct Linear {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
}

impl Linear {
    pub(crate) fn new(d0: f64, d1: f64, r0: f64, r1: f64) -> Self {
        let (d0, d1) = if d0.is_finite() && d1.is_finite() && d1 > d0 {
            (d0, d1)
        } else if d0.is_finite() {
            (d0 - 0.5, d0 + 0.5)
        } else {
            (0.0, 1.0)
        };
        Linear { d0, d1, r0, r1 }
    }

    pub(crate) fn at(&self, v: f64) -> f64 {
        let t = if v.is_nan() {
            0.0
        } else {
            ((v - self.d0) / (self.d1 - self.d0)).clamp(0.0, 1.0)
        };
        self.r0 + t * (self.r1 - self.r0)
    }
}

/// A logarithmic map from the decades `[10^e0, 10^e1]` onto `[r0, r1]`.
#[derive(Clone, Copy)]
struct Log {
    e0: f64,
    e1: f64,
    r0: f64,
    r1: f64,
}

impl Log {
    /// The decades around `lo..=hi` (both positive).
    fn around(lo: f64, hi: f64, r0: f64, r1: f64) -> Self {
        let lo = if lo.is_finite() && lo > 0.0 { lo } else { 1.0 };
        let hi = if hi.is_finite() && hi >= lo { hi } else { lo };
        let e0 = lo.log10().floor();
        let mut e1 = hi.log10().ceil();
        if e1 <= e0 {
            e1 = e0 + 1.0;
        }
        Log { e0, e1, r0, r1 }
    }

    fn at(&self, v: f64) -> f64 {
        let e = if v > 0.0 && v.is_finite() {
            v.log10()
        } else {
            self.e0
        };
        let t = ((e - self.e0) / (self.e1 - self.e0)).clamp(0.0, 1.0);
        self.r0 + t * (self.r1 - self.r0)
    }

    /// Ticks at decades (every other one, or fewer, when there are
    /// many; with 2 and 5 times each when there are at most two).
    fn ticks(&self) -> Vec<(f64, String)> {
        let span = (self.e1 - self.e0) as i64;
        let every = (span / 6 + 1).max(1);
        let mut out = Vec::new();
        let mut e = self.e0 as i64;
        while e <= self.e1 as i64 {
            let v = 10f64.powi(e as i32);
            out.push((v, si(v)));
            if span <= 2 && e < self.e1 as i64 {
                out.push((2.0 * v, si(2.0 * v)));
                out.push((5.0 * v, si(5.0 * v)));
            }
            e += every;
        }
        out
    }
}

/// About `n` nice ticks (steps of 1, 2 or 5 times a power of ten) within
/// `[lo, hi]`, and the step; integer steps when `integer`.
pub(crate) fn nice_ticks(lo: f64, hi: f64, n: usize, integer: bool) -> (Vec<f64>, f64) {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return (if lo.is_finite() { vec![lo] } else { Vec::new() }, 1.0);
    }
    let step = nice_step((hi - lo) / n.max(1) as f64, integer);
    let first = (lo / step - 1e-9).ceil();
    let mut ticks = Vec::new();
    for i in 0..64 {
        let v = (first + i as f64) * step;
        if v > hi + step * 1e-9 {
            break;
        }
        ticks.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
    }
    (ticks, step)
}

fn nice_step(raw: f64, integer: bool) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    // The nearest of 1, 2, 5 and 10 on a log scale.
    let m = if norm < 2f64.sqrt() {
        1.0
    } else if norm < 10f64.sqrt() {
        2.0
    } else if norm < 50f64.sqrt() {
        5.0
    } else {
        10.0
    };
    let step = m * mag;
    if integer { step.max(1.0) } else { step }
}

/// The top of a count axis over `0..=max`: the first nice tick at or
/// above it, with the ticks.
fn count_axis(max: f64, n: usize) -> (f64, Vec<f64>, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let step = nice_step(max / n as f64, true);
    let top = (max / step - 1e-9).ceil() * step;
    let (ticks, step) = nice_ticks(0.0, top, n, true);
    (top, ticks, step)
}

/// The plot area of a chart.
#[derive(Clone, Copy)]
struct Frame {
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
}

/// A count axis on the left with light grid lines; the scale of counts.
fn y_count_axis(svg: &mut Svg, f: Frame, max: f64) -> Linear {
    let (top, ticks, step) = count_axis(max, 4);
    let y = Linear::new(0.0, top, f.bottom, f.top);
    let labels = tick_labels(&ticks, step);
    let mut grid = Lines::default();
    for (t, label) in ticks.iter().zip(&labels) {
        let py = y.at(*t);
        grid.h(f.left, f.right, py);
        svg.text("tick", f.left - 5.0, py + 3.5, Anchor::End, label);
    }
    svg.path("grid", &grid.0);
    y
}

/// A tick label on the x axis, kept inside the chart.
fn x_label(svg: &mut Svg, f: Frame, x: f64, label: &str, max_chars: usize) {
    let label = truncate(label, max_chars);
    let half = 3.2 * label.chars().count() as f64;
    let anchor = if x - half < f.left - 30.0 {
        Anchor::Start
    } else if x + half > f.right + 8.0 {
        Anchor::End
    } else {
        Anchor::Middle
    };
    svg.text("tick", x, f.bottom + 15.0, anchor, &label);
}

/// Up to `k` indices spread evenly over `0..n`, first and last included.
fn spread(n: usize, k: usize) -> Vec<usize> {
    match (n, k) {
        (0, _) | (_, 0) => Vec::new(),
        (1, _) | (_, 1) => vec![0],
        _ if n <= k => (0..n).collect(),
        _ => {
            let mut out: Vec<usize> = (0..k)
                .map(|j| ((j * (n - 1)) as f64 / (k - 1) as f64).round() as usize)
                .collect();
            out.dedup();
            out
        }
    }
}

/// A finite, non-negative count, else 0.
fn finite(v: f64) -> f64 {
    if v.is_finite() && v > 0.0 { v } else { 0.0 }
}

/// Bins merged so that at most [`MAX_BINS`] are drawn; expected counts
/// summed alike.
fn merged_bins(h: &Histogram) -> (Vec<Bin>, Option<Vec<f64>>) {
    let n = h.bins.len();
    let group = n.div_ceil(MAX_BINS).max(1);
    let expected = h.expected.as_ref();
    let mut bins = Vec::with_capacity(n.min(MAX_BINS));
    let mut exp = expected.map(|_| Vec::with_capacity(n.min(MAX_BINS)));
    for (g, chunk) in h.bins.chunks(group).enumerate() {
        let count = chunk.iter().fold(0u64, |a, b| a.saturating_add(b.count));
        let first = &chunk[0];
        let last = &chunk[chunk.len() - 1];
        bins.push(Bin {
            lo: first.lo,
            hi: last.hi,
            label: first.label.clone(),
            count,
        });
        if let (Some(out), Some(e)) = (exp.as_mut(), expected) {
            let start = g * group;
            let end = (start + chunk.len()).min(e.len());
            let sum: Option<f64> = if start < end {
                Some(e[start..end].iter().sum())
            } else {
                None
            };
            out.push(sum.unwrap_or(f64::NAN));
        }
    }
    (bins, exp)
}

/// Whether the bins lie in order on a finite axis of positive width.
fn on_value_axis(bins: &[Bin]) -> bool {
    let (Some(first), Some(last)) = (bins.first(), bins.last()) else {
        return false;
    };
    last.hi > first.lo
        && first.lo.is_finite()
        && last.hi.is_finite()
        && bins
            .iter()
            .all(|b| b.lo.is_finite() && b.hi.is_finite() && b.hi >= b.lo)
        && bins.windows(2).all(|w| w[1].lo >= w[0].lo)
}

/// How a histogram's x axis is labelled.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum XAxis {
    /// Nice numbers on the values' axis.
    Numbers,
    /// Whole numbers (lengths).
    Integers,
    /// The bins' own labels (dates).
    BinLabels,
}

/// A histogram (`histogram` or `lengths`): bars of the realised counts,
/// the expected counts as a step line of class `expected`.
pub(crate) fn histogram(kind: &str, title: &str, h: &Histogram, axis: XAxis) -> String {
    const W: f64 = 380.0;
    const H: f64 = 200.0;
    let f = Frame {
        left: 46.0,
        top: 22.0,
        right: W - 12.0,
        bottom: H - 26.0,
    };
    let mut svg = Svg::new(kind, title, W, H);
    let (bins, expected) = merged_bins(h);
    let ymax = bins
        .iter()
        .map(|b| b.count as f64)
        .chain(expected.iter().flatten().map(|&e| finite(e)))
        .fold(0.0, f64::max);
    let y = y_count_axis(&mut svg, f, ymax);
    let n = bins.len();
    let value_axis = on_value_axis(&bins);
    let x = if value_axis {
        Linear::new(bins[0].lo, bins[n - 1].hi, f.left, f.right)
    } else {
        // Bins by their order: bars at most MAX_BAR_WIDTH wide, centered.
        let n = n.max(1) as f64;
        let width = ((f.right - f.left) / n).min(MAX_BAR_WIDTH) * n;
        let left = f.left + (f.right - f.left - width) / 2.0;
        Linear::new(0.0, n, left, left + width)
    };
    let span = |i: usize| -> (f64, f64) {
        if value_axis {
            (x.at(bins[i].lo), x.at(bins[i].hi))
        } else {
            (x.at(i as f64), x.at(i as f64 + 1.0))
        }
    };
    for (i, b) in bins.iter().enumerate() {
        if b.count == 0 {
            continue;
        }
        let (x0, x1) = span(i);
        let gap = if x1 - x0 > 4.0 { 1.0 } else { 0.0 };
        let top = y.at(b.count as f64);
        svg.rect(
            "bar",
            x0 + gap / 2.0,
            top,
            (x1 - x0 - gap).max(1.0),
            f.bottom - top,
        );
    }
    if let Some(exp) = &expected {
        let mut d = String::new();
        let mut open = false;
        for (i, e) in exp.iter().enumerate().take(n) {
            if !e.is_finite() {
                open = false;
                continue;
            }
            let (x0, x1) = span(i);
            let py = c(y.at(finite(*e)));
            if open {
                let _ = write!(d, "V{py}H{}", c(x1));
            } else {
                let _ = write!(d, "M{} {py}H{}", c(x0), c(x1));
                open = true;
            }
        }
        svg.path("expected", &d);
    }
    svg.line("axis", f.left, f.bottom, f.right, f.bottom);
    match axis {
        XAxis::Numbers | XAxis::Integers if value_axis => {
            let (lo, hi) = (bins[0].lo, bins[n - 1].hi);
            let (ticks, step) = nice_ticks(lo, hi, 5, axis == XAxis::Integers);
            let labels = tick_labels(&ticks, step);
            for (t, label) in ticks.iter().zip(&labels) {
                x_label(&mut svg, f, x.at(*t), label, 12);
            }
        }
        _ => {
            for i in spread(n, 4) {
                let (x0, x1) = span(i);
                let px = if axis == XAxis::BinLabels && value_axis {
                    x0
                } else {
                    (x0 + x1) / 2.0
                };
                x_label(&mut svg, f, px, &bins[i].label, 12);
            }
        }
    }
    svg.legend(W - 8.0, "realised", expected.as_ref().map(|_| "expected"));
    svg.finish()
}

/// The null share at each nesting level as horizontal bars on a 0–100%
/// axis; the spec's share as a tick of class `expected`.
pub(crate) fn nulls(title: &str, levels: &[NullLevel]) -> String {
    const W: f64 = 380.0;
    const ROW: f64 = 22.0;
    let shown = &levels[..levels.len().min(MAX_LEVELS)];
    let has_expected = shown.iter().any(|l| l.expected.is_some());
    let top = if has_expected { 22.0 } else { 4.0 };
    let f = Frame {
        left: 104.0,
        top,
        right: W - 118.0,
        bottom: top + ROW * shown.len().max(1) as f64,
    };
    let h = f.bottom + 22.0;
    let mut svg = Svg::new("nulls", title, W, h);
    let x = Linear::new(0.0, 1.0, f.left, f.right);
    let mut grid = Lines::default();
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let px = x.at(t);
        grid.v(px, f.top, f.bottom);
        svg.text("tick", px, f.bottom + 14.0, Anchor::Middle, &pct(t));
    }
    svg.path("grid", &grid.0);
    for (i, level) in shown.iter().enumerate() {
        let y0 = f.top + i as f64 * ROW;
        let s = share(level.nulls, level.slots);
        svg.text(
            "label",
            f.left - 6.0,
            y0 + ROW / 2.0 + 4.0,
            Anchor::End,
            &truncate(&level.path, 16),
        );
        svg.rect("bar-bg", f.left, y0 + 4.0, f.right - f.left, ROW - 8.0);
        if level.nulls > 0 {
            svg.rect(
                "bar",
                f.left,
                y0 + 4.0,
                (x.at(s) - f.left).max(1.0),
                ROW - 8.0,
            );
        }
        if let Some(e) = level.expected {
            let px = x.at(finite(e));
            svg.line("expected", px, y0 + 1.0, px, y0 + ROW - 1.0);
        }
        let text = if level.slots == 0 {
            "no slots".to_string()
        } else {
            format!("{} of {}", pct(s), si(level.slots as f64))
        };
        svg.text(
            "value",
            f.right + 6.0,
            y0 + ROW / 2.0 + 4.0,
            Anchor::Start,
            &text,
        );
    }
    svg.line("axis", f.left, f.top, f.left, f.bottom);
    svg.legend(W - 8.0, "null share", has_expected.then_some("expected"));
    svg.finish()
}

/// The most frequent values as horizontal bars, the spec's share of each
/// as an outlined bar of class `expected`; `total` is the non-null count
/// the shares are of.
pub(crate) fn top_values(title: &str, top: &[TopValue], total: u64) -> String {
    const W: f64 = 400.0;
    const ROW: f64 = 18.0;
    let shown = &top[..top.len().min(MAX_TOP)];
    let has_expected = shown.iter().any(|t| t.expected_share.is_some());
    let top = if has_expected { 20.0 } else { 4.0 };
    let f = Frame {
        left: 128.0,
        top,
        right: W - 96.0,
        bottom: top + ROW * shown.len().max(1) as f64,
    };
    let mut svg = Svg::new("top-values", title, W, f.bottom + 6.0);
    let expected_count = |t: &TopValue| t.expected_share.map(|e| finite(e) * total as f64);
    let max = shown
        .iter()
        .map(|t| t.count as f64)
        .chain(shown.iter().filter_map(expected_count))
        .fold(0.0, f64::max);
    let x = Linear::new(0.0, if max > 0.0 { max } else { 1.0 }, f.left, f.right);
    for (i, t) in shown.iter().enumerate() {
        let y0 = f.top + i as f64 * ROW;
        let label = if t.value.is_empty() {
            "(empty)"
        } else {
            &t.value
        };
        svg.text_cut(
            "label",
            f.left - 6.0,
            y0 + ROW / 2.0 + 4.0,
            Anchor::End,
            label,
            20,
        );
        let end = x.at(t.count as f64);
        if t.count > 0 {
            svg.rect("bar", f.left, y0 + 3.0, (end - f.left).max(1.0), ROW - 6.0);
        }
        let mut right = end;
        if let Some(e) = expected_count(t) {
            let px = x.at(e);
            svg.rect("expected", f.left, y0 + 3.0, px - f.left, ROW - 6.0);
            right = right.max(px);
        }
        let text = if total > 0 {
            format!("{} · {}", si(t.count as f64), pct(share(t.count, total)))
        } else {
            si(t.count as f64)
        };
        svg.text(
            "value",
            right + 5.0,
            y0 + ROW / 2.0 + 4.0,
            Anchor::Start,
            &text,
        );
    }
    svg.line("axis", f.left, f.top, f.left, f.bottom);
    svg.legend(W - 8.0, "rows", has_expected.then_some("expected"));
    svg.finish()
}

/// `Σ k^-s` for `k` in `1..=n`: summed to 100,000 terms, the rest by the
/// integral.
fn harmonic(n: u64, s: f64) -> f64 {
    const DIRECT: u64 = 100_000;
    let m = n.min(DIRECT);
    let mut sum: f64 = (1..=m).map(|k| (k as f64).powf(-s)).sum();
    if n > m {
        let (a, b) = (m as f64 + 0.5, n as f64 + 0.5);
        sum += if (s - 1.0).abs() < 1e-9 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - s) - a.powf(1.0 - s)) / (1.0 - s)
        };
    }
    sum
}

/// Counts by rank on log-log axes, and the spec's Zipf law as a line of
/// class `expected`; `total` is the count of all values (0 when unknown:
/// the line then starts at the first point).
pub(crate) fn rank_frequency(title: &str, rf: &RankFrequency, total: u64) -> String {
    const W: f64 = 380.0;
    const H: f64 = 220.0;
    let f = Frame {
        left: 46.0,
        top: 22.0,
        right: W - 14.0,
        bottom: H - 34.0,
    };
    let mut svg = Svg::new("rank-frequency", title, W, H);
    let points: Vec<(f64, f64)> = rf
        .points
        .iter()
        .filter(|(r, n)| *r > 0 && *n > 0)
        .map(|&(r, n)| (r as f64, n as f64))
        .collect();
    let step = points.len().div_ceil(MAX_BARS).max(1);
    let max_rank = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let mut lo = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let mut hi = points.iter().map(|p| p.1).fold(1.0, f64::max);
    let line = rf.expected.and_then(|(s, n)| {
        if !(s.is_finite() && n > 0) {
            return None;
        }
        let first = points.first().map_or(1.0, |p| p.1 * p.0.powf(s));
        let c1 = if total > 0 {
            total as f64 / harmonic(n, s)
        } else {
            first
        };
        let end = max_rank.min(n as f64).max(1.0);
        let c_end = c1 * end.powf(-s);
        (c1.is_finite() && c_end.is_finite() && c_end > 0.0).then_some((end, c1, c_end))
    });
    if let Some((_, c1, c_end)) = line {
        lo = lo.min(c_end);
        hi = hi.max(c1);
    }
    if !lo.is_finite() {
        lo = 1.0;
    }
    let x = Log::around(1.0, max_rank, f.left, f.right);
    let y = Log::around(lo.max(1e-3), hi, f.bottom, f.top);
    let mut grid = Lines::default();
    for (v, label) in y.ticks() {
        let py = y.at(v);
        grid.h(f.left, f.right, py);
        svg.text("tick", f.left - 5.0, py + 3.5, Anchor::End, &label);
    }
    for (v, label) in x.ticks() {
        let px = x.at(v);
        grid.v(px, f.top, f.bottom);
        svg.text("tick", px, f.bottom + 14.0, Anchor::Middle, &label);
    }
    svg.path("grid", &grid.0);
    svg.line("axis", f.left, f.bottom, f.right, f.bottom);
    svg.line("axis", f.left, f.top, f.left, f.bottom);
    svg.text(
        "axis-title",
        (f.left + f.right) / 2.0,
        H - 4.0,
        Anchor::Middle,
        "rank",
    );
    svg.text("axis-title", 4.0, 12.0, Anchor::Start, "count");
    for p in points.iter().step_by(step) {
        svg.circle("dot", x.at(p.0), y.at(p.1), 2.4);
    }
    if let Some((end, c1, c_end)) = line {
        svg.line("expected", x.at(1.0), y.at(c1), x.at(end), y.at(c_end));
    }
    svg.legend(W - 8.0, "realised", line.map(|_| "expected Zipf"));
    svg.finish()
}

/// Vertical bars over categories labelled below (a few of them); the
/// bars of `muted` categories drawn muted.
pub(crate) fn category_bars(
    kind: &str,
    title: &str,
    bars: &[(String, u64, bool)],
    x_title: &str,
    y_title: &str,
) -> String {
    const W: f64 = 380.0;
    const H: f64 = 190.0;
    let f = Frame {
        left: 46.0,
        top: 22.0,
        right: W - 12.0,
        bottom: H - 40.0,
    };
    let mut svg = Svg::new(kind, title, W, H);
    let shown = &bars[..bars.len().min(MAX_BARS)];
    let max = shown.iter().map(|b| b.1 as f64).fold(0.0, f64::max);
    let y = y_count_axis(&mut svg, f, max);
    let n = shown.len().max(1);
    let bw = ((f.right - f.left) / n as f64).min(MAX_BAR_WIDTH);
    let x = Linear::new(0.0, n as f64, f.left, f.left + bw * n as f64);
    let gap = if bw > 4.0 { (bw * 0.15).min(3.0) } else { 0.0 };
    for (i, (_, count, muted)) in shown.iter().enumerate() {
        if *count == 0 {
            continue;
        }
        let top = y.at(*count as f64);
        let class = if *muted { "bar muted" } else { "bar" };
        svg.rect(
            class,
            x.at(i as f64) + gap / 2.0,
            top,
            (bw - gap).max(0.8),
            f.bottom - top,
        );
    }
    svg.line("axis", f.left, f.bottom, f.right, f.bottom);
    for i in spread(shown.len(), 8) {
        x_label(&mut svg, f, x.at(i as f64 + 0.5), &shown[i].0, 8);
    }
    svg.text(
        "axis-title",
        (f.left + f.right) / 2.0,
        H - 6.0,
        Anchor::Middle,
        x_title,
    );
    svg.text("axis-title", 4.0, 12.0, Anchor::Start, y_title);
    svg.finish()
}

/// Each partition's files and bytes as two panels of horizontal bars.
pub(crate) fn partitions(title: &str, parts: &[(String, u64, u64)]) -> String {
    const W: f64 = 620.0;
    const ROW: f64 = 18.0;
    const LABEL: f64 = 180.0;
    const PANEL: f64 = 210.0;
    let shown = &parts[..parts.len().min(MAX_PARTITIONS)];
    let top = 22.0;
    let h = top + ROW * shown.len().max(1) as f64 + 6.0;
    let mut svg = Svg::new("partitions", title, W, h);
    let max_files = shown
        .iter()
        .map(|p| p.1 as f64)
        .fold(0.0, f64::max)
        .max(1.0);
    let max_bytes = shown
        .iter()
        .map(|p| p.2 as f64)
        .fold(0.0, f64::max)
        .max(1.0);
    let files_x = Linear::new(0.0, max_files, LABEL, LABEL + PANEL - 60.0);
    let bytes_x = Linear::new(0.0, max_bytes, LABEL + PANEL, LABEL + 2.0 * PANEL - 70.0);
    svg.text("axis-title", LABEL, 12.0, Anchor::Start, "files");
    svg.text("axis-title", LABEL + PANEL, 12.0, Anchor::Start, "bytes");
    for (i, (path, files, bytes)) in shown.iter().enumerate() {
        let y0 = top + i as f64 * ROW;
        let label = if path.is_empty() {
            "(unpartitioned)"
        } else {
            path
        };
        svg.text(
            "label",
            LABEL - 8.0,
            y0 + ROW / 2.0 + 4.0,
            Anchor::End,
            &truncate(label, 28),
        );
        let fx = files_x.at(*files as f64);
        if *files > 0 {
            svg.rect("bar", LABEL, y0 + 3.0, (fx - LABEL).max(1.0), ROW - 6.0);
        }
        svg.text(
            "value",
            fx + 4.0,
            y0 + ROW / 2.0 + 4.0,
            Anchor::Start,
            &int(*files),
        );
        let bx = bytes_x.at(*bytes as f64);
        if *bytes > 0 {
            svg.rect(
                "bar",
                LABEL + PANEL,
                y0 + 3.0,
                (bx - LABEL - PANEL).max(1.0),
                ROW - 6.0,
            );
        }
        svg.text(
            "value",
            bx + 4.0,
            y0 + ROW / 2.0 + 4.0,
            Anchor::Start,
            &super::fmt::bytes(*bytes),
        );
    }
    svg.line("axis", LABEL, top, LABEL, h - 6.0);
    svg.line("axis", LABEL + PANEL, top, LABEL + PANEL, h - 6.0);
    svg.finish()
}

/// One bar of a key-ranges chart.
pub(crate) struct RangeBar<'a> {
    pub(crate) name: &'a str,
    pub(crate) range: &'a KeyRange,
    pub(crate) picked: bool,
}

/// The most ranges covering one point: the deepest overlap.
pub(crate) fn overlap_depth(ranges: &[&KeyRange]) -> usize {
    let mut events: Vec<(f64, i32)> = Vec::with_capacity(ranges.len() * 2);
    for r in ranges {
        if r.lo.is_finite() && r.hi.is_finite() {
            events.push((r.lo.min(r.hi), -1));
            events.push((r.lo.max(r.hi), 1));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut depth, mut max) = (0i64, 0i64);
    for (_, e) in events {
        depth -= i64::from(e);
        max = max.max(depth);
    }
    max.max(0) as usize
}

/// The span of a set of ranges: `(lowest, highest)` of their finite
/// bounds, infinite when there are none.
pub(crate) fn range_span<'a>(ranges: impl IntoIterator<Item = &'a KeyRange>) -> (f64, f64) {
    ranges
        .into_iter()
        .flat_map(|r| [r.lo, r.hi])
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

/// Each file's key range as a horizontal bar on one shared axis, so that
/// overlapping files overlap; `picked` ones highlighted. Labels the axis
/// with the keys nearest a few positions, and each bar with its `lo – hi`
/// when there is room.
/// `span`, when given, is the axis's (to share it with another chart).
pub(crate) fn key_ranges(
    classes: &str,
    title: &str,
    bars: &[RangeBar<'_>],
    span: Option<(f64, f64)>,
) -> String {
    const W: f64 = 980.0;
    let shown = &bars[..bars.len().min(MAX_BARS)];
    let n = shown.len().max(1);
    let row = (480.0 / n as f64).clamp(3.0, 18.0);
    let labelled = row >= 12.0;
    let (left, right) = if labelled {
        (170.0, W - 190.0)
    } else {
        (16.0, W - 16.0)
    };
    let f = Frame {
        left,
        top: 8.0,
        right,
        bottom: 8.0 + row * n as f64,
    };
    let h = f.bottom + 26.0;
    let mut svg = Svg::new(classes, title, W, h);
    let (lo, hi) = span.unwrap_or_else(|| range_span(shown.iter().map(|b| b.range)));
    let x = if lo.is_finite() {
        Linear::new(lo, hi, f.left, f.right)
    } else {
        Linear::new(0.0, 1.0, f.left, f.right)
    };
    // Axis labels: the keys nearest four evenly spaced positions.
    let mut bounds: Vec<(f64, &str)> = shown
        .iter()
        .flat_map(|b| {
            [
                (b.range.lo, b.range.lo_label.as_str()),
                (b.range.hi, b.range.hi_label.as_str()),
            ]
        })
        .filter(|(v, _)| v.is_finite())
        .collect();
    bounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut placed: Vec<f64> = Vec::new();
    let mut grid = Lines::default();
    if lo.is_finite() {
        for j in 0..4 {
            let target = lo + (hi - lo) * j as f64 / 3.0;
            let i = bounds.partition_point(|b| b.0 < target);
            let near = [i.checked_sub(1), Some(i)]
                .into_iter()
                .flatten()
                .filter_map(|k| bounds.get(k))
                .min_by(|a, b| (a.0 - target).abs().total_cmp(&(b.0 - target).abs()));
            if let Some(&(v, label)) = near {
                let px = x.at(v);
                if placed.iter().all(|p| (p - px).abs() > 60.0) {
                    placed.push(px);
                    grid.v(px, f.top, f.bottom);
                    x_label(&mut svg, f, px, label, 14);
                }
            }
        }
    }
    svg.path("grid", &grid.0);
    for (i, b) in shown.iter().enumerate() {
        let y0 = f.top + i as f64 * row;
        let (a, z) = (b.range.lo.min(b.range.hi), b.range.hi.max(b.range.lo));
        let x0 = x.at(a);
        let w = (x.at(z) - x0).max(2.0);
        let class = if b.picked { "bar picked" } else { "bar" };
        let pad = if row > 4.0 { row * 0.18 } else { 0.0 };
        if labelled {
            svg.rect(class, x0, y0 + pad, w, row - 2.0 * pad);
            svg.text_cut_start(
                "label",
                f.left - 8.0,
                y0 + row / 2.0 + 4.0,
                Anchor::End,
                b.name,
                26,
            );
            let range = format!(
                "{} – {}",
                truncate(&b.range.lo_label, 12),
                truncate(&b.range.hi_label, 12)
            );
            svg.text(
                "value",
                f.right + 8.0,
                y0 + row / 2.0 + 4.0,
                Anchor::Start,
                &range,
            );
        } else {
            let tip = format!("{}: {} – {}", b.name, b.range.lo_label, b.range.hi_label);
            svg.rect_tip(
                class,
                x0,
                y0 + pad,
                w,
                row - 2.0 * pad,
                &truncate(&tip, 120),
            );
        }
    }
    svg.line("axis", f.left, f.bottom, f.right, f.bottom);
    svg.finish()
}

/// Integer values binned into at most `max` bins of equal width:
/// `(lo, hi, count)`, `hi` inclusive.
fn int_bins(values: &[u64], max: usize) -> Vec<(u64, u64, u64)> {
    let (Some(&lo), Some(&hi)) = (values.iter().min(), values.iter().max()) else {
        return Vec::new();
    };
    let span = hi - lo;
    let width = (span / max as u64).saturating_add(1);
    let nbins = (span / width + 1) as usize;
    let mut bins: Vec<(u64, u64, u64)> = (0..nbins as u64)
        .map(|i| {
            let a = lo.saturating_add(i.saturating_mul(width));
            (a, a.saturating_add(width - 1).min(hi), 0)
        })
        .collect();
    for &v in values {
        let i = (((v - lo) / width) as usize).min(nbins - 1);
        bins[i].2 = bins[i].2.saturating_add(1);
    }
    bins
}

/// A bin's label: `7` or `5–9`.
fn int_bin_label(lo: u64, hi: u64) -> String {
    let (a, z) = (si(lo as f64), si(hi as f64));
    if lo == hi {
        a
    } else if a == z {
        format!("{}–{}", int(lo), int(hi))
    } else {
        format!("{a}–{z}")
    }
}

/// Two histograms side by side: row groups per file, and rows per row
/// group.
pub(crate) fn row_groups(title: &str, files: &[FileReport]) -> String {
    const W: f64 = 760.0;
    const H: f64 = 190.0;
    let mut svg = Svg::new("row-groups", title, W, H);
    let per_file: Vec<u64> = files.iter().map(|f| f.row_groups.len() as u64).collect();
    let per_group: Vec<u64> = files
        .iter()
        .flat_map(|f| f.row_groups.iter().copied())
        .collect();
    let panels = [
        (0.0, "row groups per file", "files", int_bins(&per_file, 20)),
        (
            W / 2.0,
            "rows per row group",
            "row groups",
            int_bins(&per_group, 20),
        ),
    ];
    for (x0, x_title, y_title, bins) in panels {
        let f = Frame {
            left: x0 + 50.0,
            top: 22.0,
            right: x0 + W / 2.0 - 16.0,
            bottom: H - 40.0,
        };
        let max = bins.iter().map(|b| b.2 as f64).fold(0.0, f64::max);
        let y = y_count_axis(&mut svg, f, max);
        let n = bins.len().max(1);
        let bw = ((f.right - f.left) / n as f64).min(MAX_BAR_WIDTH);
        let gap = if bw > 4.0 { (bw * 0.15).min(3.0) } else { 0.0 };
        for (i, b) in bins.iter().enumerate() {
            if b.2 > 0 {
                let top = y.at(b.2 as f64);
                svg.rect(
                    "bar",
                    f.left + i as f64 * bw + gap / 2.0,
                    top,
                    bw - gap,
                    f.bottom - top,
                );
            }
        }
        svg.line("axis", f.left, f.bottom, f.right, f.bottom);
        for i in spread(bins.len(), 3) {
            let label = int_bin_label(bins[i].0, bins[i].1);
            x_label(&mut svg, f, f.left + (i as f64 + 0.5) * bw, &label, 16);
        }
        svg.text(
            "axis-title",
            (f.left + f.right) / 2.0,
            H - 6.0,
            Anchor::Middle,
            x_title,
        );
        svg.text("axis-title", x0 + 4.0, 12.0, Anchor::Start, y_title);
    }
    svg.finish()
}
