//! What a spec's generators promise, as distributions over a column's
//! values in the units the profile counts (integers, decimal units, days,
//! timestamp ticks, floats): the share of each histogram bin, of each
//! category and of each length.

use arrow_schema::DataType;
use strata_gen::{Generator, Value, dist::normal_cdf};

/// A distribution over numbers, for the shares of histogram bins.
pub(crate) enum Dist {
    /// Point masses `(value, probability)`, by value.
    Points(Vec<(f64, f64)>),
    /// Integral values (units), `P(X <= u)` for an integer `u`.
    Integral(Box<dyn Fn(f64) -> f64>),
    /// Real values, `P(X <= x)` (clamped: masses at the clamps).
    Real {
        cdf: Box<dyn Fn(f64) -> f64>,
        lo: f64,
        hi: f64,
    },
}

impl Dist {
    /// The probability of `[lo, hi)`, or of `[lo, hi]` when `closed`.
    /// Integral bins have integer bounds.
    pub(crate) fn share(&self, lo: f64, hi: f64, closed: bool) -> f64 {
        let p = match self {
            Dist::Points(points) => points
                .iter()
                .filter(|(v, _)| *v >= lo && (*v < hi || (closed && *v <= hi)))
                .map(|(_, p)| p)
                .sum(),
            Dist::Integral(cdf) => {
                let top = if closed { hi } else { hi - 1.0 };
                cdf(top) - cdf(lo - 1.0)
            }
            Dist::Real { cdf, lo: a, hi: b } => {
                let upto = |x: f64| {
                    if x >= *b {
                        1.0
                    } else if x < *a {
                        0.0
                    } else {
                        cdf(x)
                    }
                };
                // Below `x`: the mass at a clamp belongs to it.
                let below = |x: f64| if x <= *a { 0.0 } else { upto(x) };
                if closed {
                    upto(hi) - below(lo)
                } else {
                    below(hi) - below(lo)
                }
            }
        };
        p.clamp(0.0, 1.0)
    }
}

/// A numeric value of a spec, in the profile's units.
pub(crate) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) if f.is_finite() => Some(*f),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// Units of one of the type's values (10^scale for decimals).
fn unit(dt: &DataType) -> f64 {
    match dt {
        DataType::Decimal32(_, s)
        | DataType::Decimal64(_, s)
        | DataType::Decimal128(_, s)
        | DataType::Decimal256(_, s) => 10f64.powi(i32::from(*s)),
        DataType::Dictionary(_, v) => unit(v),
        _ => 1.0,
    }
}

fn is_float(dt: &DataType) -> bool {
    match dt {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => true,
        DataType::Dictionary(_, v) => is_float(v),
        _ => false,
    }
}

/// The distribution `g` draws for a field of type `dt`, `None` where the
/// spec gives none that can be computed (text, expressions, references,
/// weekday-shifted quantiles). `rows`: the table's rows, for sequences.
pub(crate) fn distribution(g: &Generator, dt: &DataType, rows: u64) -> Option<Dist> {
    let float = is_float(dt);
    let unit = unit(dt);
    match g {
        Generator::Constant(_) | Generator::Weighted { .. } | Generator::Probability(_) => {
            points(g)
        }
        Generator::Zipf {
            values: Some(_), ..
        } => points(g),
        Generator::Zipf {
            s,
            n,
            values: None,
            start,
        } => {
            let p = strata_gen::expected::zipf_probabilities(*s, usize::try_from(*n).ok()?)?;
            if p.len() > 1_000_000 {
                return None;
            }
            let start = *start as f64;
            Some(Dist::Points(
                p.into_iter()
                    .enumerate()
                    .map(|(k, p)| (start + k as f64, p))
                    .collect(),
            ))
        }
        Generator::Uniform { min, max } => {
            let (a, b) = (number(min)?, number(max)?);
            if float {
                if b.partial_cmp(&a) != Some(std::cmp::Ordering::Greater) {
                    return None;
                }
                Some(Dist::Real {
                    cdf: Box::new(move |x| (x - a) / (b - a)),
                    lo: a,
                    hi: b,
                })
            } else {
                if b < a {
                    return None;
                }
                Some(Dist::Integral(Box::new(move |u: f64| {
                    ((u.floor() - a + 1.0) / (b - a + 1.0)).clamp(0.0, 1.0)
                })))
            }
        }
        Generator::Normal {
            mean,
            std,
            min,
            max,
        } => {
            let (m, s) = (*mean, *std);
            if s.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                return None;
            }
            let (lo, hi) = (
                min.unwrap_or(f64::NEG_INFINITY),
                max.unwrap_or(f64::INFINITY),
            );
            if float {
                Some(Dist::Real {
                    cdf: Box::new(move |x| normal_cdf((x - m) / s)),
                    lo,
                    hi,
                })
            } else {
                let (m, s, lo, hi) = (m * unit, s * unit, lo * unit, hi * unit);
                Some(Dist::Integral(Box::new(move |u: f64| {
                    if u >= hi {
                        1.0
                    } else if u < lo.ceil() {
                        0.0
                    } else {
                        normal_cdf((u + 0.5 - m) / s)
                    }
                })))
            }
        }
        Generator::Lognormal {
            mu,
            sigma,
            min,
            max,
        } => {
            let (mu, s) = (*mu, *sigma);
            if s.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                return None;
            }
            let (lo, hi) = (
                min.unwrap_or(f64::NEG_INFINITY),
                max.unwrap_or(f64::INFINITY),
            );
            let g = move |x: f64, mu: f64| {
                if x <= 0.0 {
                    0.0
                } else {
                    normal_cdf((x.ln() - mu) / s)
                }
            };
            if float {
                Some(Dist::Real {
                    cdf: Box::new(move |x| g(x, mu)),
                    lo,
                    hi,
                })
            } else {
                let (mu, lo, hi) = (mu + unit.ln(), lo * unit, hi * unit);
                Some(Dist::Integral(Box::new(move |u: f64| {
                    if u >= hi {
                        1.0
                    } else if u < lo.ceil() {
                        0.0
                    } else {
                        g(u + 0.5, mu)
                    }
                })))
            }
        }
        Generator::Quantiles {
            points,
            weekdays: None,
        } => {
            let q: Vec<f64> = points.iter().map(number).collect::<Option<_>>()?;
            if q.len() < 2 || q.windows(2).any(|w| w[1] < w[0]) {
                return None;
            }
            let n = (q.len() - 1) as f64;
            // The inverse is linear between (i / n, q[i]).
            let cdf = move |x: f64| {
                let (first, last) = (q[0], q[q.len() - 1]);
                if x < first {
                    return 0.0;
                }
                if x >= last {
                    return 1.0;
                }
                let i = q.partition_point(|&p| p <= x).saturating_sub(1);
                let (a, b) = (q[i], q[i + 1]);
                let within = if b > a { (x - a) / (b - a) } else { 1.0 };
                ((i as f64 + within) / n).clamp(0.0, 1.0)
            };
            if float {
                Some(Dist::Real {
                    cdf: Box::new(cdf),
                    lo: f64::NEG_INFINITY,
                    hi: f64::INFINITY,
                })
            } else {
                Some(Dist::Integral(Box::new(move |u: f64| cdf(u + 0.5))))
            }
        }
        Generator::Sequence { start, step } => {
            let (a, d) = (number(start)?, number(step)?);
            if rows == 0 || d == 0.0 || float {
                return None;
            }
            let n = rows as f64;
            // Row i holds a + d * i: the share of rows at or below u.
            Some(Dist::Integral(Box::new(move |u: f64| {
                let k = if d > 0.0 {
                    ((u - a) / d).floor() + 1.0
                } else {
                    n - ((u - a) / d).ceil()
                };
                (k.clamp(0.0, n)) / n
            })))
        }
        _ => None,
    }
}

fn points(g: &Generator) -> Option<Dist> {
    let mut p: Vec<(f64, f64)> = strata_gen::expected::category_probabilities(g)?
        .into_iter()
        .map(|(v, p)| Some((number(&v)?, p)))
        .collect::<Option<_>>()?;
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(Dist::Points(p))
}

/// The share the spec gives each category, by its label (as
/// [`crate::collect::columns`] labels values).
pub(crate) fn category_shares(g: &Generator, dt: &DataType) -> Option<Vec<(String, f64)>> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for (v, p) in strata_gen::expected::category_probabilities(g)? {
        let label = spec_label(&v, dt);
        match out.iter_mut().find(|(l, _)| *l == label) {
            Some(e) => e.1 += p,
            None => out.push((label, p)),
        }
    }
    Some(out)
}

/// A spec value as the report labels values of type `dt`.
pub(crate) fn spec_label(v: &Value, dt: &DataType) -> String {
    match v {
        Value::Str(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        v => v.display_as(dt).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_uniform_shares_bins_by_their_integers() {
        let g = Generator::Uniform {
            min: Value::Int(1),
            max: Value::Int(10),
        };
        let d = distribution(&g, &DataType::Int64, 0).unwrap();
        assert!((d.share(1.0, 3.0, false) - 0.2).abs() < 1e-12);
        assert!((d.share(9.0, 10.0, true) - 0.2).abs() < 1e-12);
        assert!((d.share(1.0, 10.0, true) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn sequences_spread_over_their_rows() {
        let g = Generator::Sequence {
            start: Value::Int(1),
            step: Value::Int(2),
        };
        // 1, 3, ..., 199.
        let d = distribution(&g, &DataType::Int64, 100).unwrap();
        assert!((d.share(1.0, 21.0, false) - 0.1).abs() < 1e-12);
        assert!((d.share(1.0, 199.0, true) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn clamped_normals_keep_their_mass() {
        let g = Generator::Normal {
            mean: 0.0,
            std: 1.0,
            min: Some(-1.0),
            max: Some(1.0),
        };
        let d = distribution(&g, &DataType::Float64, 0).unwrap();
        assert!((d.share(-1.0, 1.0, true) - 1.0).abs() < 1e-12);
        assert!((d.share(-1.0, 0.0, false) - 0.5).abs() < 1e-6);
    }
}
