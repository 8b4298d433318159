//! Differential tests against arrow-row 60.1 (the byte-format oracle) and a
//! plain lexicographic comparator (the order oracle), over random arrays of
//! every supported type with fixed seeds.

use std::{cmp::Ordering, sync::Arc};

use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Date32Array, Decimal128Array,
    Decimal256Array, DictionaryArray, DurationNanosecondArray, FixedSizeBinaryArray,
    FixedSizeListArray, Float16Array, Float32Array, Float64Array, Int8Array, Int16Array,
    Int32Array, Int64Array, IntervalDayTimeArray, IntervalMonthDayNanoArray, LargeListArray,
    LargeStringArray, ListArray, ListViewArray, MapArray, NullArray, RunArray, StringArray,
    StringViewArray, StructArray, Time64MicrosecondArray, TimestampMicrosecondArray, UInt8Array,
    UInt16Array, UInt32Array, UInt64Array,
    types::{Int8Type, Int16Type, Int32Type},
};
use arrow_buffer::{
    IntervalDayTime, IntervalMonthDayNano, NullBuffer, OffsetBuffer, ScalarBuffer, i256,
};
use arrow_schema::{DataType, Field, Fields, SortOptions};
use strata_row::{Error, RowEncoder, SortField};

/// Fixed-seed test data from strata-gen's SplitMix64 streams.
struct Rng(strata_gen::rng::RowRng);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(strata_gen::rng::RowRng::seeded(seed))
    }
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.next_below(n)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    /// Values with many ties: small most of the time, any bits otherwise.
    fn int(&mut self) -> u64 {
        if self.chance(0.7) {
            self.below(8)
        } else {
            self.next()
        }
    }
    fn nulls(&mut self, n: usize, rate: f64) -> Option<NullBuffer> {
        (rate > 0.0)
            .then(|| NullBuffer::from((0..n).map(|_| !self.chance(rate)).collect::<Vec<_>>()))
    }
    fn bytes(&mut self) -> Vec<u8> {
        let len = match self.below(4) {
            0 => 0,
            1 => self.below(9),
            2 => self.below(40),
            _ => self.below(100),
        } as usize;
        let alpha = [b'a', b'b', 0, 0xFF, b'z'];
        (0..len).map(|_| alpha[self.below(5) as usize]).collect()
    }
    /// Strings of 0 to 32 bytes, the branch-free encoder's range.
    fn short_string(&mut self) -> String {
        let len = self.below(33) as usize;
        (0..len)
            .map(|_| ['a', 'b', 'z', '~'][self.below(4) as usize])
            .collect()
    }
    /// Strings of 0 to 64 bytes (some multi-byte characters), the
    /// branch-free medium encoder's range.
    fn medium_string(&mut self) -> String {
        let chars = self.below(61) as usize;
        (0..chars)
            .map(|_| ['a', 'b', 'é', 'z', '~'][self.below(5) as usize])
            .take_while({
                let mut bytes = 0;
                move |c| {
                    bytes += c.len_utf8();
                    bytes <= 64
                }
            })
            .collect()
    }
    fn string(&mut self) -> String {
        let len = [0, 1, 3, 8, 9, 12, 13, 31, 32, 33, 70][self.below(11) as usize];
        (0..len)
            .map(|_| ['a', 'b', 'é', 'z'][self.below(4) as usize])
            .collect()
    }
}

/// Options for `ncols` columns: pattern 0 cycles through all four, pattern
/// `p` in 1..=4 gives every column `OPTIONS[p - 1]` (so runs of alike
/// columns reach the specialised kernels).
fn option_pattern(pattern: usize, ncols: usize) -> Vec<SortOptions> {
    (0..ncols)
        .map(|i| OPTIONS[if pattern == 0 { i % 4 } else { pattern - 1 }])
        .collect()
}

const OPTIONS: [SortOptions; 4] = [
    SortOptions {
        descending: false,
        nulls_first: true,
    },
    SortOptions {
        descending: false,
        nulls_first: false,
    },
    SortOptions {
        descending: true,
        nulls_first: true,
    },
    SortOptions {
        descending: true,
        nulls_first: false,
    },
];

/// A random array of the given test type with `n` rows.
fn array(kind: &str, n: usize, rng: &mut Rng, null_rate: f64) -> ArrayRef {
    macro_rules! prim {
        ($a:ty, $f:expr) => {{
            let values: Vec<_> = (0..n).map(|_| $f(rng)).collect();
            Arc::new(<$a>::new(values.into(), rng.nulls(n, null_rate))) as ArrayRef
        }};
    }
    match kind {
        "null" => Arc::new(NullArray::new(n)),
        "bool" => Arc::new(BooleanArray::new(
            (0..n).map(|_| rng.chance(0.5)).collect(),
            rng.nulls(n, null_rate),
        )),
        "i8" => prim!(Int8Array, |r: &mut Rng| r.int() as i8),
        "i16" => prim!(Int16Array, |r: &mut Rng| r.int() as i16),
        "i32" => prim!(Int32Array, |r: &mut Rng| r.int() as i32),
        "i64" => prim!(Int64Array, |r: &mut Rng| r.int() as i64),
        "u8" => prim!(UInt8Array, |r: &mut Rng| r.int() as u8),
        "u16" => prim!(UInt16Array, |r: &mut Rng| r.int() as u16),
        "u32" => prim!(UInt32Array, |r: &mut Rng| r.int() as u32),
        "u64" => prim!(UInt64Array, |r: &mut Rng| r.int()),
        "f16" => prim!(Float16Array, |r: &mut Rng| half::f16::from_bits(
            r.int() as u16
        )),
        "f32" => prim!(Float32Array, |r: &mut Rng| match r.below(6) {
            0 => f32::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f32::NEG_INFINITY,
            _ => f32::from_bits(r.next() as u32),
        }),
        "f64" => prim!(Float64Array, |r: &mut Rng| match r.below(6) {
            0 => -f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => (r.below(5) as f64) - 2.0,
            _ => f64::from_bits(r.next()),
        }),
        "decimal128" => Arc::new(
            Decimal128Array::new(
                (0..n)
                    .map(|_| (rng.int() as i128) << 40 | rng.int() as i128)
                    .collect(),
                rng.nulls(n, null_rate),
            )
            .with_precision_and_scale(38, 5)
            .unwrap(),
        ),
        "decimal256" => Arc::new(
            Decimal256Array::new(
                (0..n)
                    .map(|_| i256::from_parts(rng.int() as u128, rng.int() as i128))
                    .collect(),
                rng.nulls(n, null_rate),
            )
            .with_precision_and_scale(76, 10)
            .unwrap(),
        ),
        "date32" => prim!(Date32Array, |r: &mut Rng| r.int() as i32),
        "time64" => prim!(
            Time64MicrosecondArray,
            |r: &mut Rng| (r.int() % 86_400_000_000) as i64
        ),
        "timestamp_tz" => Arc::new(
            TimestampMicrosecondArray::new(
                (0..n).map(|_| rng.int() as i64).collect(),
                rng.nulls(n, null_rate),
            )
            .with_timezone("+05:30"),
        ),
        "duration" => prim!(DurationNanosecondArray, |r: &mut Rng| r.int() as i64),
        "interval_dt" => prim!(IntervalDayTimeArray, |r: &mut Rng| IntervalDayTime::new(
            r.int() as i32,
            r.int() as i32
        )),
        "interval_mdn" => prim!(IntervalMonthDayNanoArray, |r: &mut Rng| {
            IntervalMonthDayNano::new(r.below(3) as i32 - 1, r.int() as i32, r.int() as i64)
        }),
        "utf8" => Arc::new(StringArray::from(
            (0..n)
                .map(|_| (!rng.chance(null_rate)).then(|| rng.string()))
                .collect::<Vec<_>>(),
        )),
        "utf8_short" => Arc::new(StringArray::from(
            (0..n)
                .map(|_| (!rng.chance(null_rate)).then(|| rng.short_string()))
                .collect::<Vec<_>>(),
        )),
        "utf8_medium" => Arc::new(StringArray::from(
            (0..n)
                .map(|_| (!rng.chance(null_rate)).then(|| rng.medium_string()))
                .collect::<Vec<_>>(),
        )),
        "large_utf8" => Arc::new(LargeStringArray::from(
            (0..n)
                .map(|_| (!rng.chance(null_rate)).then(|| rng.string()))
                .collect::<Vec<_>>(),
        )),
        "utf8_view" => Arc::new(StringViewArray::from(
            (0..n)
                .map(|_| (!rng.chance(null_rate)).then(|| rng.string()))
                .collect::<Vec<_>>(),
        )),
        "binary" => {
            let v: Vec<Option<Vec<u8>>> = (0..n)
                .map(|_| (!rng.chance(null_rate)).then(|| rng.bytes()))
                .collect();
            Arc::new(BinaryArray::from_iter(v))
        }
        "binary_view" => {
            let v: Vec<Option<Vec<u8>>> = (0..n)
                .map(|_| (!rng.chance(null_rate)).then(|| rng.bytes()))
                .collect();
            Arc::new(BinaryViewArray::from_iter(v))
        }
        "fixed_binary" => {
            let v: Vec<Option<Vec<u8>>> = (0..n)
                .map(|_| {
                    (!rng.chance(null_rate)).then(|| (0..5).map(|_| rng.below(3) as u8).collect())
                })
                .collect();
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(v.into_iter(), 5).unwrap(),
            )
        }
        "dict" => {
            let values = array("utf8", 6, rng, 0.2);
            let keys = Int32Array::new(
                (0..n).map(|_| rng.below(6) as i32).collect(),
                rng.nulls(n, null_rate),
            );
            Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values).unwrap())
        }
        // Entries of at most 28 bytes (strings of up to 24), which the
        // writer blends in without a branch on their length.
        "dict_short" => {
            let values: Vec<Option<String>> = (0..20)
                .map(|_| {
                    let mut v = rng.short_string();
                    v.truncate(24);
                    (!rng.chance(0.1)).then_some(v)
                })
                .collect();
            let keys = Int8Array::new(
                (0..n).map(|_| rng.below(20) as i8).collect(),
                rng.nulls(n, null_rate),
            );
            Arc::new(
                DictionaryArray::<Int8Type>::try_new(keys, Arc::new(StringArray::from(values)))
                    .unwrap(),
            )
        }
        "struct" => {
            let a = array("i32", n, rng, 0.2);
            let b = array("utf8", n, rng, 0.2);
            let fields = Fields::from(vec![
                Field::new("a", DataType::Int32, true),
                Field::new("b", DataType::Utf8, true),
            ]);
            Arc::new(StructArray::new(
                fields,
                vec![a, b],
                rng.nulls(n, null_rate),
            ))
        }
        "list" | "large_list" | "list_view" => {
            let mut offsets = vec![0usize];
            for _ in 0..n {
                offsets.push(offsets.last().unwrap() + rng.below(4) as usize);
            }
            let child_kind = if kind == "large_list" { "utf8" } else { "i32" };
            let values = array(child_kind, *offsets.last().unwrap(), rng, 0.2);
            let nulls = rng.nulls(n, null_rate);
            let field = Arc::new(Field::new("item", values.data_type().clone(), true));
            match kind {
                "list" => Arc::new(ListArray::new(
                    field,
                    OffsetBuffer::new(offsets.iter().map(|&o| o as i32).collect()),
                    values,
                    nulls,
                )),
                "large_list" => Arc::new(LargeListArray::new(
                    field,
                    OffsetBuffer::new(offsets.iter().map(|&o| o as i64).collect()),
                    values,
                    nulls,
                )),
                _ => {
                    let starts: ScalarBuffer<i32> =
                        offsets[..n].iter().map(|&o| o as i32).collect();
                    let sizes: ScalarBuffer<i32> =
                        offsets.windows(2).map(|w| (w[1] - w[0]) as i32).collect();
                    Arc::new(ListViewArray::new(field, starts, sizes, values, nulls))
                }
            }
        }
        "fixed_list" => {
            let values = array("i16", n * 3, rng, 0.2);
            let field = Arc::new(Field::new("item", DataType::Int16, true));
            Arc::new(FixedSizeListArray::new(
                field,
                3,
                values,
                rng.nulls(n, null_rate),
            ))
        }
        "map" => {
            let mut offsets = vec![0i32];
            for _ in 0..n {
                offsets.push(offsets.last().unwrap() + rng.below(3) as i32);
            }
            let m = *offsets.last().unwrap() as usize;
            let keys = array("utf8", m, rng, 0.0);
            let values = array("i32", m, rng, 0.3);
            let fields = Fields::from(vec![
                Field::new("keys", DataType::Utf8, false),
                Field::new("values", DataType::Int32, true),
            ]);
            let entries = StructArray::new(fields.clone(), vec![keys, values], None);
            let field = Arc::new(Field::new("entries", DataType::Struct(fields), false));
            Arc::new(MapArray::new(
                field,
                OffsetBuffer::new(offsets.into()),
                entries,
                rng.nulls(n, null_rate),
                false,
            ))
        }
        "ree" => {
            let mut ends = Vec::new();
            let mut at = 0i16;
            while (at as usize) < n {
                at += 1 + rng.below(4) as i16;
                ends.push(at.min(n as i16));
            }
            let values = array("utf8", ends.len(), rng, null_rate);
            Arc::new(RunArray::<Int16Type>::try_new(&Int16Array::from(ends), &values).unwrap())
        }
        other => panic!("unknown kind {other}"),
    }
}

const KINDS: &[&str] = &[
    "null",
    "bool",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "f16",
    "f32",
    "f64",
    "decimal128",
    "decimal256",
    "date32",
    "time64",
    "timestamp_tz",
    "duration",
    "interval_dt",
    "interval_mdn",
    "utf8",
    "utf8_short",
    "utf8_medium",
    "large_utf8",
    "utf8_view",
    "binary",
    "binary_view",
    "fixed_binary",
    "dict",
    "dict_short",
    "struct",
    "list",
    "large_list",
    "list_view",
    "fixed_list",
    "map",
    "ree",
];

fn oracle_rows(
    cols: &[ArrayRef],
    opts: &[SortOptions],
) -> (arrow_row::RowConverter, arrow_row::Rows) {
    let fields = cols
        .iter()
        .zip(opts)
        .map(|(c, o)| arrow_row::SortField::new_with_options(c.data_type().clone(), *o))
        .collect();
    let conv = arrow_row::RowConverter::new(fields).unwrap();
    let rows = conv.convert_columns(cols).unwrap();
    (conv, rows)
}

fn encoder(cols: &[ArrayRef], opts: &[SortOptions]) -> RowEncoder {
    RowEncoder::new(
        cols.iter()
            .zip(opts)
            .map(|(c, o)| SortField::new(c.data_type().clone()).with_options(*o))
            .collect(),
    )
    .unwrap()
}

/// Lexicographic comparison of rows `i` and `j` with arrow-ord's per-type
/// comparators, or `None` where arrow-ord has none for a type.
fn plain_order(cols: &[ArrayRef], opts: &[SortOptions]) -> Option<Vec<usize>> {
    let cmps = cols
        .iter()
        .zip(opts)
        .map(|(c, o)| arrow_ord::ord::make_comparator(c.as_ref(), c.as_ref(), *o).ok())
        .collect::<Option<Vec<_>>>()?;
    let mut idx: Vec<usize> = (0..cols[0].len()).collect();
    idx.sort_by(|&i, &j| {
        cmps.iter()
            .map(|c| c(i, j))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
            .then(i.cmp(&j))
    });
    Some(idx)
}

/// Checks bytes, round trip and order for one set of columns.
fn check(cols: &[ArrayRef], opts: &[SortOptions], what: &str) {
    let (conv, expected) = oracle_rows(cols, opts);
    let enc = encoder(cols, opts);
    let rows = enc.encode(cols).unwrap();
    assert_eq!(rows.num_rows(), expected.num_rows(), "{what}");
    for i in 0..rows.num_rows() {
        assert_eq!(
            rows.row(i).as_bytes(),
            expected.row(i).as_ref(),
            "{what}: row {i} differs from arrow-row"
        );
    }
    // Decoding gives what arrow-row decodes (dictionaries come back as
    // their values), which for other types is the input itself.
    let ours = enc.decode(&rows).unwrap();
    let theirs = conv.convert_rows(&expected).unwrap();
    for (c, ((o, t), input)) in ours.iter().zip(&theirs).zip(cols).enumerate() {
        assert_eq!(o.data_type(), t.data_type(), "{what}: column {c} type");
        assert_eq!(o.to_data(), t.to_data(), "{what}: column {c} decoded");
        if !matches!(input.data_type(), DataType::Dictionary(..)) && !has_dict(input.data_type()) {
            assert_eq!(
                o.to_data(),
                input.to_data(),
                "{what}: column {c} round trip"
            );
        }
    }
    // Parsed rows decode the same.
    let parser = enc.parser();
    let copies: Vec<Vec<u8>> = rows.iter().map(|r| r.to_owned_bytes()).collect();
    let parsed = enc
        .decode_rows(copies.iter().map(|b| parser.parse(b)))
        .unwrap();
    for (a, b) in parsed.iter().zip(&ours) {
        assert_eq!(a.to_data(), b.to_data(), "{what}: parsed rows");
    }
    // Order equals the plain comparator's (stable, so ties keep index order).
    if let Some(want) = plain_order(cols, opts) {
        let mut got: Vec<usize> = (0..rows.num_rows()).collect();
        got.sort_by(|&i, &j| rows.row(i).cmp(&rows.row(j)).then(i.cmp(&j)));
        assert_eq!(got, want, "{what}: order differs from the plain comparator");
    }
}

fn has_dict(dt: &DataType) -> bool {
    match dt {
        DataType::Dictionary(..) => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            has_dict(f.data_type())
        }
        DataType::Struct(fs) => fs.iter().any(|f| has_dict(f.data_type())),
        _ => false,
    }
}

#[test]
fn every_type_every_option_matches_arrow_row() {
    let mut rng = Rng::new(7);
    for kind in KINDS {
        for (oi, o) in OPTIONS.iter().enumerate() {
            for null_rate in [0.0, 0.25] {
                for n in [0, 1, 2, 150] {
                    let a = array(kind, n, &mut rng, null_rate);
                    check(
                        std::slice::from_ref(&a),
                        &[*o],
                        &format!("{kind} opts{oi} nulls {null_rate} n {n}"),
                    );
                    if n > 20 {
                        let s = a.slice(5, n - 12);
                        check(&[s], &[*o], &format!("{kind} opts{oi} sliced"));
                    }
                }
            }
        }
    }
}

#[test]
fn random_multi_column_schemas_match_arrow_row() {
    let mut rng = Rng::new(99);
    for case in 0..120 {
        let ncols = 1 + rng.below(6) as usize;
        let n = rng.below(300) as usize;
        let kinds: Vec<&str> = (0..ncols)
            .map(|_| KINDS[rng.below(KINDS.len() as u64) as usize])
            .collect();
        let cols: Vec<ArrayRef> = kinds.iter().map(|k| array(k, n, &mut rng, 0.2)).collect();
        let opts: Vec<SortOptions> = (0..ncols).map(|_| OPTIONS[rng.below(4) as usize]).collect();
        check(&cols, &opts, &format!("case {case}: {kinds:?}"));
        // Appending in two pieces gives the same rows as one encode.
        let enc = encoder(&cols, &opts);
        let whole = enc.encode(&cols).unwrap();
        let mut parts = enc.empty_rows(0, 0);
        let cut = n / 3;
        enc.append(
            &mut parts,
            &cols.iter().map(|c| c.slice(0, cut)).collect::<Vec<_>>(),
        )
        .unwrap();
        enc.append(
            &mut parts,
            &cols
                .iter()
                .map(|c| c.slice(cut, n - cut))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert_eq!(whole.data(), parts.data(), "case {case}: append");
        assert_eq!(
            whole.offsets(),
            parts.offsets(),
            "case {case}: append offsets"
        );
    }
}

#[test]
fn wide_fixed_schema_matches_arrow_row() {
    // The seed case shape: 50 u64 columns, with and without nulls, and
    // enough rows for many tiles.
    let mut rng = Rng::new(3);
    for null_rate in [0.0, 0.1] {
        for kind in ["u64", "i32", "f64"] {
            let cols: Vec<ArrayRef> = (0..50)
                .map(|_| array(kind, 3000, &mut rng, null_rate))
                .collect();
            // Mixed options, then every option alike (the specialised
            // kernels for all-ascending, nulls-first runs).
            for pattern in 0..5 {
                let opts = option_pattern(pattern, 50);
                check(
                    &cols,
                    &opts,
                    &format!("50 x {kind}, nulls {null_rate}, pattern {pattern}"),
                );
            }
        }
    }
}

#[test]
fn non_nullable_fields_drop_the_validity_byte_and_keep_order() {
    let mut rng = Rng::new(11);
    let a = array("i64", 500, &mut rng, 0.0);
    let b = array("utf8", 500, &mut rng, 0.0);
    let s = array("struct", 500, &mut rng, 0.0);
    let f = array("f64", 500, &mut rng, 0.0);
    let t = array("bool", 500, &mut rng, 0.0);
    let x = array("fixed_binary", 500, &mut rng, 0.0);
    let l = array("fixed_list", 500, &mut rng, 0.0);
    let cols = vec![a, b, s, f, t, x, l];
    let opts = [
        OPTIONS[0], OPTIONS[3], OPTIONS[2], OPTIONS[1], OPTIONS[2], OPTIONS[3], OPTIONS[1],
    ];
    let enc = RowEncoder::new(
        cols.iter()
            .zip(opts)
            .map(|(c, o)| {
                SortField::new(c.data_type().clone())
                    .with_options(o)
                    .non_nullable()
            })
            .collect(),
    )
    .unwrap();
    let rows = enc.encode(&cols).unwrap();
    let full = encoder(&cols, &opts).encode(&cols).unwrap();
    for i in 0..500 {
        // One byte less for i64, struct, f64, bool, fixed-size binary and
        // fixed-size list; strings and dictionaries keep their encoding.
        assert_eq!(
            rows.row(i).as_bytes().len() + 6,
            full.row(i).as_bytes().len()
        );
        for j in 0..500 {
            assert_eq!(rows.row(i).cmp(&rows.row(j)), full.row(i).cmp(&full.row(j)));
        }
    }
    let back = enc.decode(&rows).unwrap();
    for (x, y) in back.iter().zip(&cols) {
        assert_eq!(x.to_data(), y.to_data());
    }
    // An array with nulls is refused, naming the column; so is one whose
    // nulls are only logical (valid keys to null dictionary values).
    let with_nulls = array("i64", 10, &mut rng, 0.5);
    let enc = RowEncoder::new(vec![SortField::new(DataType::Int64).non_nullable()]).unwrap();
    let err = enc.encode(&[with_nulls]).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(err.to_string().contains("non-nullable"), "{err}");
    let values: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None]));
    let dict: ArrayRef = Arc::new(
        DictionaryArray::<Int32Type>::try_new(Int32Array::from(vec![0, 1, 0]), values).unwrap(),
    );
    assert_eq!(dict.null_count(), 0);
    let enc = RowEncoder::new(vec![
        SortField::new(dict.data_type().clone()).non_nullable(),
    ])
    .unwrap();
    assert!(matches!(
        enc.encode(&[dict]),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn bad_inputs_are_errors() {
    let enc = RowEncoder::new(vec![
        SortField::new(DataType::Int32),
        SortField::new(DataType::Utf8),
    ])
    .unwrap();
    let i: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    let s: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
    let short: ArrayRef = Arc::new(StringArray::from(vec!["a"]));
    assert!(matches!(
        enc.encode(std::slice::from_ref(&i)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        enc.encode(&[i.clone(), short]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        enc.encode(&[s.clone(), i.clone()]),
        Err(Error::InvalidArgument(_))
    ));
    // Rows of another encoder are refused, not misread.
    let other = RowEncoder::new(vec![
        SortField::new(DataType::Int32),
        SortField::new(DataType::Utf8),
    ])
    .unwrap();
    let rows = enc.encode(&[i.clone(), s.clone()]).unwrap();
    assert!(matches!(
        other.decode(&rows),
        Err(Error::InvalidArgument(_))
    ));
    let mut theirs = other.empty_rows(0, 0);
    assert!(matches!(
        enc.append(&mut theirs, &[i, s]),
        Err(Error::InvalidArgument(_))
    ));
    // A dictionary whose (unchecked) key names no value is refused.
    let values: ArrayRef = Arc::new(StringArray::from(vec!["x", "y"]));
    // SAFETY: deliberately breaks the key invariant; the encoder must
    // report it rather than read outside the values.
    let bad =
        unsafe { DictionaryArray::<Int8Type>::new_unchecked(Int8Array::from(vec![0, 5]), values) };
    let enc_dict = RowEncoder::new(vec![SortField::new(bad.data_type().clone())]).unwrap();
    assert!(matches!(
        enc_dict.encode(&[Arc::new(bad) as ArrayRef]),
        Err(Error::InvalidArgument(_))
    ));
    // Unions are not supported.
    let union = DataType::Union(
        arrow_schema::UnionFields::try_new(vec![0], vec![Field::new("a", DataType::Int32, true)])
            .unwrap(),
        arrow_schema::UnionMode::Sparse,
    );
    assert!(matches!(
        RowEncoder::new(vec![SortField::new(union)]),
        Err(Error::Unsupported(_))
    ));
}

#[test]
fn malformed_parsed_rows_are_errors_not_panics() {
    let mut rng = Rng::new(5);
    for kinds in [
        vec!["i32", "utf8"],
        vec!["struct", "list"],
        vec!["map", "fixed_list", "ree"],
        vec!["bool", "fixed_binary", "utf8_view", "null"],
    ] {
        let cols: Vec<ArrayRef> = kinds.iter().map(|k| array(k, 40, &mut rng, 0.2)).collect();
        let opts: Vec<SortOptions> = (0..cols.len()).map(|i| OPTIONS[i % 4]).collect();
        let enc = encoder(&cols, &opts);
        let rows = enc.encode(&cols).unwrap();
        let parser = enc.parser();
        for i in 0..rows.num_rows() {
            let good = rows.row(i).to_owned_bytes();
            // Every truncation, and every single-byte corruption of the
            // first bytes, either decodes or is an error.
            for cut in 0..good.len() {
                let r = enc.decode_rows([parser.parse(&good[..cut])]);
                assert!(r.is_err(), "{kinds:?} row {i} cut at {cut} decoded");
            }
            for at in 0..good.len().min(12) {
                for v in [0x00, 0x01, 0x02, 0x7F, 0xFE, 0xFF] {
                    let mut bad = good.clone();
                    bad[at] = v;
                    let _ = enc.decode_rows([parser.parse(&bad)]);
                }
            }
            let mut longer = good.clone();
            longer.push(0);
            assert!(enc.decode_rows([parser.parse(&longer)]).is_err());
        }
    }
}

#[test]
fn group_keys_are_equal_exactly_when_rows_are() {
    use strata_row::GroupKeyEncoder;
    let mut rng = Rng::new(21);
    let kinds = [
        "bool",
        "i8",
        "i16",
        "i32",
        "i64",
        "u64",
        "f32",
        "f64",
        "decimal128",
        "interval_mdn",
        "utf8",
        "large_utf8",
        "utf8_view",
        "binary",
        "binary_view",
        "fixed_binary",
        "dict",
    ];
    for case in 0..40 {
        let ncols = 1 + rng.below(5) as usize;
        let picked: Vec<&str> = (0..ncols)
            .map(|_| kinds[rng.below(kinds.len() as u64) as usize])
            .collect();
        // Few distinct values, so many rows repeat.
        let n = 200;
        let cols: Vec<ArrayRef> = picked
            .iter()
            .map(|k| {
                let pool = array(k, 6, &mut rng, 0.3);
                let idx =
                    UInt32Array::from((0..n).map(|_| rng.below(6) as u32).collect::<Vec<_>>());
                arrow_select::take::take(pool.as_ref(), &idx, None).unwrap()
            })
            .collect();
        let enc =
            GroupKeyEncoder::new(cols.iter().map(|c| c.data_type().clone()).collect()).unwrap();
        let keys = enc.encode(&cols).unwrap();
        // Oracle: arrow-row bytes are equal exactly when rows are equal.
        let (_, oracle) = oracle_rows(&cols, &vec![SortOptions::default(); ncols]);
        for i in 0..n {
            for j in 0..n {
                assert_eq!(
                    keys.key(i) == keys.key(j),
                    oracle.row(i) == oracle.row(j),
                    "case {case} {picked:?}: rows {i} and {j}"
                );
            }
        }
        // Fixed-width keys stay 8-byte aligned.
        if !picked
            .iter()
            .any(|k| k.contains("utf8") || k.contains("binary") || *k == "dict")
        {
            assert_eq!(keys.key(0).as_bytes().len() % 8, 0, "{picked:?}");
        }
    }
    let nested = DataType::List(Arc::new(Field::new("item", DataType::Int32, true)));
    assert!(matches!(
        GroupKeyEncoder::new(vec![nested]),
        Err(Error::Unsupported(_))
    ));
    // Columns that do not match the encoder's types are refused.
    let enc = GroupKeyEncoder::new(vec![DataType::Int32, DataType::Utf8]).unwrap();
    let i: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    let s: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
    let short: ArrayRef = Arc::new(StringArray::from(vec!["a"]));
    for cols in [
        vec![i.clone()],
        vec![i.clone(), short],
        vec![s.clone(), i.clone()],
    ] {
        assert!(matches!(enc.encode(&cols), Err(Error::InvalidArgument(_))));
    }
    assert_eq!(enc.encode(&[i, s]).unwrap().len(), 2);
}

#[test]
fn every_kernel_level_matches_arrow_row() {
    // 0 scalar, 1 AVX2, 2 AVX-512: each wide run of 8-byte integers goes
    // through the widest allowed kernel the CPU has, with scalar tails.
    let mut rng = Rng::new(17);
    for level in [0, 1, 2] {
        strata_row::set_simd_level(level);
        for (n, ncols) in [(3000, 50), (37, 19), (8, 8), (5, 4)] {
            for kind in ["u64", "i64"] {
                let cols: Vec<ArrayRef> =
                    (0..ncols).map(|_| array(kind, n, &mut rng, 0.0)).collect();
                for pattern in 0..5 {
                    let opts = option_pattern(pattern, ncols);
                    check(
                        &cols,
                        &opts,
                        &format!("level {level} {ncols} x {kind} x {n}, pattern {pattern}"),
                    );
                }
            }
        }
    }
    strata_row::set_simd_level(2);
}

#[test]
fn a_first_null_late_in_the_batch_decodes() {
    // A null many tiles into the batch, after only valid rows, must mark
    // exactly that row.
    let mut rng = Rng::new(23);
    let cols: Vec<ArrayRef> = (0..20)
        .map(|c| {
            let values: Vec<u64> = (0..3000).map(|_| rng.int()).collect();
            let nulls = NullBuffer::from((0..3000).map(|i| i != 2500 + c).collect::<Vec<_>>());
            Arc::new(UInt64Array::new(values.into(), Some(nulls))) as ArrayRef
        })
        .collect();
    let opts: Vec<SortOptions> = (0..20).map(|i| OPTIONS[i % 4]).collect();
    check(&cols, &opts, "one late null per column");
}
