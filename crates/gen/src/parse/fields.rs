//! Fields: a `[[fields]]` table read into a [`Field`](crate::Field) with its kind (scalar,
//! struct, list, map), its `when` cases, list lengths and child counts.

use arrow_schema::{DataType, Fields};

use super::generators::GENERATORS;
use super::reader::{Item, P, boxed_item, shown};
use super::types::{TYPES, TypeSpec, check_fixed, parse_type, placeholder_item};
use crate::facts::{MAX_LENGTH, MAX_NAME_BYTES};
use crate::model::class::Class;
use crate::model::document::{self as doc, Items, Raw, Shape, Tab};
use crate::model::query::{categories, category_values, depends_on, dictionary_values, max_length};
use crate::model::{
    Condition, CountCase, Expression, Field, Generator, Kind, SpecError, Value, When,
};

pub(super) const COMMON: &[&str] = &[
    "name",
    "type",
    "null_rate",
    "nullable",
    "parquet_dictionary",
    "parquet",
    "when",
    "description",
    "hidden",
];

/// The most `when` cases of a field or a `count` (a row's branch is a byte,
/// the last value the field's own settings).
pub(super) const MAX_CASES: usize = 255;

pub(super) fn check_cycles(p: &P<'_>, fields: &[Field]) -> Result<(), SpecError> {
    // Depth-first search over "depends on" edges.
    fn visit(i: usize, fields: &[Field], state: &mut [u8], p: &P<'_>) -> Result<(), SpecError> {
        match state[i] {
            2 => return Ok(()),
            1 => {
                return Err(p
                    .err(
                        0..0,
                        Some(&fields[i].path),
                        "`when` cases or expressions form a cycle through this field",
                    )
                    .at_line(fields[i].line));
            }
            _ => {}
        }
        state[i] = 1;
        for dep in depends_on(&fields[i]) {
            if let Some(j) = fields.iter().position(|f| f.name == dep) {
                visit(j, fields, state, p)?;
            }
        }
        state[i] = 2;
        Ok(())
    }
    let mut state = vec![0u8; fields.len()];
    for i in 0..fields.len() {
        visit(i, fields, &mut state, p)?;
    }
    Ok(())
}

impl<'s> P<'s> {
    pub(super) fn field<'d>(
        &self,
        v: &Item<'d, doc::Field>,
        parent: &str,
        default_name: Option<&str>,
    ) -> Result<(Field, Vec<Item<'d, doc::When>>), SpecError> {
        let t = self.item_table(v, None, "a field")?;
        let span = v.0.clone();
        let line = self.line(span.start);
        let name = match (&t.name, default_name) {
            (Some(n), _) => self.string(n, None, "name")?,
            (None, Some(d)) => d.to_string(),
            (None, None) => return Err(self.err(span, None, "a field needs a `name`")),
        };
        if name.len() > MAX_NAME_BYTES {
            let path = format!(
                "{parent}{}{}",
                if parent.is_empty() { "" } else { "." },
                shown(&name)
            );
            return Err(self.err(
                span.clone(),
                Some(&path),
                format!(
                    "the name is {} bytes long; names are at most {MAX_NAME_BYTES}",
                    name.len()
                ),
            ));
        }
        let path = if parent.is_empty() {
            name.clone()
        } else {
            format!("{parent}.{name}")
        };
        let f = Some(path.as_str());
        if name.is_empty() {
            return Err(self.err(span.clone(), f, "the name is empty"));
        }
        if name.contains('.') {
            return Err(self.err(
                span.clone(),
                f,
                "a field name cannot contain `.` (dotted paths name nested fields)",
            ));
        }
        let Some(ty) = &t.ty else {
            return Err(self.err(span, f, format!("needs a `type`: one of {TYPES}")));
        };
        let ty_text = self.string(ty, f, "type")?;
        let ty_spec = parse_type(&ty_text).map_err(|m| self.err(ty.span(), f, m))?;
        let null_rate = t
            .null_rate
            .as_ref()
            .map(|r| self.rate(r, f, "null_rate"))
            .transpose()?
            .unwrap_or(0.0);
        let parquet_dictionary = t
            .parquet_dictionary
            .as_ref()
            .map(|d| self.boolean(d, f, "parquet_dictionary"))
            .transpose()?;
        let mut parquet = self.parquet_column(t.parquet.as_ref(), f)?;
        match (parquet_dictionary, parquet.dictionary) {
            (Some(a), Some(b)) if a != b => {
                return Err(self.err(
                    span.clone(),
                    f,
                    "`parquet_dictionary` and `parquet = { dictionary }` disagree; give one",
                ));
            }
            (Some(a), _) => parquet.dictionary = Some(a),
            _ => {}
        }
        let hidden = match &t.hidden {
            Some(h) if !parent.is_empty() || default_name.is_some() => {
                return Err(self.err(
                    h.span(),
                    f,
                    "`hidden` is for a table's top-level fields (a field inside a struct, list or map is written with it)",
                ));
            }
            Some(h) => self.boolean(h, f, "hidden")?,
            None => false,
        };
        let mut allowed: Vec<&str> = COMMON.to_vec();
        let mut empty_as_null = false;
        // A dictionary, struct, list or map copied by a `ref` (or
        // `parent`): its Arrow type is the referenced field's, filled in
        // when the dataset is resolved; until then a placeholder of its
        // kind.
        let copied = match &ty_spec {
            TypeSpec::Dictionary => Some(DataType::Null),
            TypeSpec::Struct => Some(DataType::Struct(Fields::empty())),
            TypeSpec::List => Some(DataType::List(placeholder_item())),
            TypeSpec::Map => Some(DataType::Map(placeholder_item(), false)),
            TypeSpec::Scalar(_) => None,
        };
        let copying = t.reference.is_some() || t.parent.is_some();
        let kind = match (ty_spec, copied, copying) {
            (_, Some(placeholder), true) => {
                allowed.extend(["ref", "parent"]);
                self.check_keys(&span, &allowed, f, "a field copied by a reference")?;
                let generator = self
                    .generator(t.into(), &span, Class::Str, f)?
                    .ok_or_else(|| self.err(span.clone(), f, "needs a `ref`"))?;
                if let Generator::Reference(r) = &generator
                    && r.offset.is_some()
                {
                    return Err(self.err(
                        span,
                        f,
                        "`offset` adds to integers, dates, timestamps and decimals, not to this field's type",
                    ));
                }
                Kind::Scalar {
                    data_type: placeholder,
                    generator,
                }
            }
            (ty_spec, _, _) => match ty_spec {
                TypeSpec::Scalar(_) | TypeSpec::Dictionary => {
                    allowed.extend(GENERATORS);
                    if matches!(ty_spec, TypeSpec::Dictionary) {
                        allowed.push("key_type");
                    }
                    self.check_keys(&span, &allowed, f, "a field")?;
                    let (dt, class) = match &ty_spec {
                        TypeSpec::Scalar(dt) => (dt.clone(), Class::of(dt)),
                        _ => (DataType::Null, Class::Dict),
                    };
                    let generator =
                        self.generator(t.into(), &span, class, f)?.ok_or_else(|| {
                            self.err(
                                span.clone(),
                                f,
                                format!("needs a generator: one of {}", GENERATORS.join(", ")),
                            )
                        })?;
                    if let TypeSpec::Scalar(DataType::FixedSizeBinary(width)) = &ty_spec {
                        check_fixed(*width as usize, &generator)
                            .map_err(|m| self.err(span.clone(), f, m))?;
                    }
                    let data_type = if class == Class::Dict {
                        let categories = match &generator {
                            Generator::Weighted { values, .. } => values.len(),
                            Generator::Zipf {
                                values: Some(values),
                                ..
                            } => values.len(),
                            Generator::Constant(_) => 1,
                            g @ (Generator::ByRow { .. } | Generator::Calendar(_)) => {
                                category_values(g).map_or(0, |v| v.len())
                            }
                            _ => {
                                return Err(self.err(
                                span,
                                f,
                                "a dictionary field needs `weighted`, `zipf` with values, `constant`, `values_by_row`, or a `calendar` name",
                            ));
                            }
                        };
                        let key = match &t.key_type {
                            Some(k) => {
                                let text = self.string(k, f, "key_type")?;
                                let dt = match parse_type(&text) {
                                    Ok(TypeSpec::Scalar(dt)) if dt.is_dictionary_key_type() => dt,
                                    _ => {
                                        return Err(self.err(
                                            k.span(),
                                            f,
                                            format!(
                                                "`key_type` must be an integer type, not `{text}`"
                                            ),
                                        ));
                                    }
                                };
                                let Class::Int { max, .. } = Class::of(&dt) else {
                                    unreachable!("integer types")
                                };
                                if (categories as i128) > max + 1 {
                                    return Err(self.err(
                                        k.span(),
                                        f,
                                        format!("{categories} values do not fit key type {text}"),
                                    ));
                                }
                                dt
                            }
                            None if categories <= 256 => DataType::UInt8,
                            None if categories <= 65_536 => DataType::UInt16,
                            None => DataType::UInt32,
                        };
                        DataType::Dictionary(Box::new(key), Box::new(DataType::Utf8))
                    } else {
                        dt
                    };
                    Kind::Scalar {
                        data_type,
                        generator,
                    }
                }
                TypeSpec::Struct => {
                    allowed.push("fields");
                    self.check_keys(&span, &allowed, f, "a struct field")?;
                    let Some(fields) = &t.fields else {
                        return Err(self.err(span, f, "a struct needs `fields`"));
                    };
                    Kind::Struct(self.fields(fields, &path)?)
                }
                TypeSpec::List => {
                    allowed.extend(["item", "length", "empty_as_null"]);
                    self.check_keys(&span, &allowed, f, "a list field")?;
                    let Some(item) = &t.item else {
                        return Err(self.err(span, f, "a list needs an `item` field"));
                    };
                    let item = self.child(&boxed_item(&item.at), &path, "item")?;
                    let length = self.length(t.length.as_ref(), f, span.clone())?;
                    empty_as_null = t
                        .empty_as_null
                        .as_ref()
                        .map(|e| self.boolean(e, f, "empty_as_null"))
                        .transpose()?
                        .unwrap_or(false);
                    Kind::List {
                        item: Box::new(item),
                        length,
                        empty_as_null,
                    }
                }
                TypeSpec::Map => {
                    allowed.extend(["key", "value", "length"]);
                    self.check_keys(&span, &allowed, f, "a map field")?;
                    let (Some(k), Some(val)) = (&t.key, &t.value) else {
                        return Err(self.err(span, f, "a map needs `key` and `value` fields"));
                    };
                    let key = self.child(&boxed_item(&k.at), &path, "key")?;
                    if key.nullable {
                        return Err(self.err(k.span(), Some(&key.path), "map keys cannot be null"));
                    }
                    if !matches!(key.kind, Kind::Scalar { .. }) {
                        return Err(self.err(
                            k.span(),
                            Some(&key.path),
                            "map keys must be scalars",
                        ));
                    }
                    let value = self.child(&boxed_item(&val.at), &path, "value")?;
                    let length = self.length(t.length.as_ref(), f, span.clone())?;
                    if let Kind::Scalar { generator, .. } = &key.kind {
                        let distinct_of = |vals: Vec<&Value>| {
                            let mut seen: Vec<&Value> = Vec::new();
                            for v in vals {
                                if !seen.contains(&v) {
                                    seen.push(v);
                                }
                            }
                            seen.len() as u64
                        };
                        if let Some(vals) = dictionary_values(generator)
                            && distinct_of(vals.iter().collect()) != vals.len() as u64
                        {
                            return Err(self.err(
                                k.span(),
                                Some(&key.path),
                                "map key values must be distinct (keys are distinct within a map)",
                            ));
                        }
                        let distinct = match generator {
                            Generator::Weighted { values, weights } => distinct_of(
                                values
                                    .iter()
                                    .zip(weights)
                                    .filter(|(_, w)| **w > 0.0)
                                    .map(|(v, _)| v)
                                    .collect(),
                            ),
                            Generator::Zipf {
                                values: Some(v), ..
                            } => distinct_of(v.iter().collect()),
                            Generator::Constant(_) => 1,
                            // Integer keys `start + step * id` repeat only after
                            // 2^(bits - trailing zeros of step) ids.
                            Generator::Sequence {
                                step: Value::Int(step),
                                ..
                            } if *step != 0 => {
                                let bits = match &key.kind {
                                    Kind::Scalar { data_type, .. } => {
                                        data_type.primitive_width().unwrap_or(8) as u32 * 8
                                    }
                                    _ => 64,
                                };
                                let period = bits.saturating_sub((*step as u64).trailing_zeros());
                                1u64.checked_shl(period).unwrap_or(u64::MAX)
                            }
                            Generator::Sequence { .. } => {
                                return Err(self.err(
                                k.span(),
                                Some(&key.path),
                                "map keys from a sequence need an integer type and a non-zero step (keys are distinct within a map)",
                            ));
                            }
                            _ => {
                                return Err(self.err(
                                k.span(),
                                Some(&key.path),
                                "map keys are distinct within a map: use `weighted`, `zipf` with values, `constant` or `sequence`",
                            ));
                            }
                        };
                        let most = max_length(&length);
                        if most > distinct {
                            return Err(self.err(
                            k.span(),
                            Some(&key.path),
                            format!(
                                "a map may hold {most} entries but its key has only {distinct} possible values (keys are distinct within a map)"
                            ),
                        ));
                        }
                    }
                    Kind::Map {
                        key: Box::new(key),
                        value: Box::new(value),
                        length,
                    }
                }
            },
        };
        let explicit = t
            .nullable
            .as_ref()
            .map(|n| self.boolean(n, f, "nullable").map(|b| (b, n.span())))
            .transpose()?;
        let when_items = match &t.when {
            None => Vec::new(),
            Some(w) => self.items(w, true, f, |kind| {
                format!("`when` must be an array of tables, not {kind}")
            })?,
        };
        let can_be_null = null_rate > 0.0 || empty_as_null;
        let nullable = match explicit {
            Some((false, span)) if can_be_null => {
                return Err(self.err(
                    span,
                    f,
                    "is `nullable = false` but has a null rate (or empty lists as nulls)",
                ));
            }
            Some((b, _)) => b || can_be_null,
            None => can_be_null,
        };
        Ok((
            Field {
                name,
                path,
                line,
                kind,
                null_rate,
                nullable,
                parquet,
                when: Vec::new(),
                hidden,
            },
            when_items,
        ))
    }

    /// A list item or map key/value: a field whose `when` cases are
    /// rejected (it has no siblings).
    pub(super) fn child(
        &self,
        v: &Item<'_, doc::Field>,
        parent: &str,
        default: &str,
    ) -> Result<Field, SpecError> {
        let (f, when) = self.field(v, parent, Some(default))?;
        if let Some(w) = when.first() {
            return Err(self.err(
                w.0.clone(),
                Some(&f.path),
                "`when` needs sibling fields; a list item or map entry has none (put a struct inside)",
            ));
        }
        Ok(f)
    }

    /// A child table's `count` (rows per parent row), read as a list's
    /// `length` is, and its cases (`when`, each a `condition` on the
    /// parent row and a count generator; the conditions are checked once
    /// the parent's fields are known).
    pub(super) fn count(
        &self,
        c: Option<&Tab<doc::CountDraw, doc::Count>>,
        f: Option<&str>,
    ) -> Result<(Generator, Vec<CountCase>), SpecError> {
        const COUNTS: [&str; 5] = ["constant", "uniform", "normal", "zipf", "weighted"];
        let class = Class::Int {
            min: 0,
            max: MAX_LENGTH,
        };
        let Some(c) = c else {
            return Err(self.err(0..0, f, "needs a `count`"));
        };
        if let Shape::Value(v @ (Raw::Int(_) | Raw::Str(_))) = c.shape() {
            let v = doc::At {
                span: c.span(),
                value: v.clone(),
            };
            return Ok((
                Generator::Constant(self.run_value(&v, class, f, "count")?),
                Vec::new(),
            ));
        }
        let mut keys = COUNTS.to_vec();
        keys.push("when");
        let ct = self.params(&c.at, f, "`count`", &keys)?;
        let count = self
            .generator(ct.into(), &c.span(), class, f)?
            .ok_or_else(|| self.err(c.span(), f, "`count` needs a generator"))?;
        let mut cases = Vec::new();
        if let Some(w) = &ct.when {
            let items = self.items(w, false, f, |_| {
                "`count`'s `when` is an array of cases ({ condition = \"...\", uniform = { ... } })"
                    .into()
            })?;
            for item in &items {
                let it = self.item_table(item, f, "a `count` case")?;
                let mut keys = COUNTS.to_vec();
                keys.push("condition");
                self.check_keys(&item.0, &keys, f, "a `count` case")?;
                let Some(cond) = &it.condition else {
                    return Err(self.err(
                        item.0.clone(),
                        f,
                        "a `count` case needs a `condition` (an SQL test of the parent row's fields)",
                    ));
                };
                let condition = Expression::pending(self.string(cond, f, "condition")?);
                let count = self
                    .generator(it.into(), &item.0, class, f)?
                    .ok_or_else(|| {
                        self.err(item.0.clone(), f, "a `count` case needs a generator")
                    })?;
                cases.push(CountCase {
                    line: self.line(item.0.start),
                    condition,
                    count,
                });
            }
            if cases.len() > MAX_CASES {
                return Err(self.err(
                    w.span(),
                    f,
                    format!("`count` takes at most {MAX_CASES} `when` cases"),
                ));
            }
        }
        Ok((count, cases))
    }

    pub(super) fn length(
        &self,
        l: Option<&Tab<doc::Draw, doc::Length>>,
        f: Option<&str>,
        at: std::ops::Range<usize>,
    ) -> Result<Generator, SpecError> {
        let class = Class::Int {
            min: 0,
            max: MAX_LENGTH,
        };
        let Some(l) = l else {
            return Err(self.err(
                at,
                f,
                "needs a `length` (elements per value): an integer or a generator table",
            ));
        };
        if let Shape::Value(v @ Raw::Int(_)) = l.shape() {
            let v = doc::At {
                span: l.span(),
                value: v.clone(),
            };
            return Ok(Generator::Constant(self.value(&v, class, f, "length")?));
        }
        let lt = self.params(
            &l.at,
            f,
            "`length`",
            &["constant", "uniform", "normal", "zipf", "weighted"],
        )?;
        // Lengths are clamped to 0..=MAX_LENGTH by the engine.
        self.generator(lt.into(), &l.span(), class, f)?
            .ok_or_else(|| self.err(l.span(), f, "`length` needs a generator"))
    }

    /// An array of field tables: the children of a struct or the top level.
    pub(super) fn fields(
        &self,
        v: &Items<doc::Field>,
        parent: &str,
    ) -> Result<Vec<Field>, SpecError> {
        let f = (!parent.is_empty()).then_some(parent);
        let items = self.items(v, false, f, |_| {
            "`fields` must be an array of tables ([[fields]])".into()
        })?;
        if items.is_empty() {
            return Err(self.err(v.span(), f, "`fields` is empty"));
        }
        let mut fields: Vec<Field> = Vec::new();
        let mut whens = Vec::new();
        // Name -> its field's line.
        let mut lines = std::collections::HashMap::new();
        for item in &items {
            let (field, when) = self.field(item, parent, None)?;
            if let Some(line) = lines.insert(field.name.clone(), field.line) {
                return Err(self.err(
                    item.0.clone(),
                    Some(&field.path),
                    format!("a field of this name is already on line {line}"),
                ));
            }
            fields.push(field);
            whens.push(when);
        }
        // Which fields have cases that replace their generator: known
        // before any case is resolved, so that the answer does not depend on
        // the order of the fields.
        let gen_cases: Vec<bool> = whens
            .iter()
            .map(|ws| {
                ws.iter().any(|w| {
                    w.1.is_ok()
                        && self
                            .keys(&w.0)
                            .iter()
                            .any(|(k, _)| GENERATORS.contains(&k.as_str()))
                })
            })
            .collect();
        // `when` cases: resolved against the siblings now that all exist.
        for i in 0..fields.len() {
            let mut cases: Vec<When> = Vec::new();
            for w in &whens[i] {
                let case = self.when(w, &fields, i, &gen_cases)?;
                if let Some(first) = cases.first()
                    && (first.field.is_empty() || case.field.is_empty())
                    && first.field != case.field
                {
                    return Err(self.err(
                        w.0.clone(),
                        Some(&fields[i].path),
                        "a field's `when` cases are all `condition`s, or all read one sibling with `is` or `is_null`",
                    ));
                }
                if let Some(first) = cases.first()
                    && first.field != case.field
                {
                    return Err(self.err(
                        w.0.clone(),
                        Some(&fields[i].path),
                        format!(
                            "all `when` cases of a field must read the same sibling (`{}`, not `{}`)",
                            first.field, case.field
                        ),
                    ));
                }
                cases.push(case);
            }
            if cases.len() > MAX_CASES {
                return Err(self.err_at(
                    fields[i].line,
                    Some(&fields[i].path),
                    format!("a field takes at most {MAX_CASES} `when` cases"),
                ));
            }
            let f = &mut fields[i];
            if cases.iter().any(|c| c.null_rate.is_some_and(|r| r > 0.0)) {
                f.nullable = true;
            }
            f.when = cases;
        }
        if fields.iter().all(|f| f.hidden) {
            return Err(self.err(
                v.span(),
                f,
                "every field is `hidden`: a table writes at least one",
            ));
        }
        self.resolve_draws(&mut fields)?;
        self.resolve_expressions(&mut fields, None)?;
        check_cycles(self, &fields)?;
        Ok(fields)
    }

    pub(super) fn when(
        &self,
        w: &Item<'_, doc::When>,
        siblings: &[Field],
        me: usize,
        gen_cases: &[bool],
    ) -> Result<When, SpecError> {
        let field = &siblings[me];
        let f = Some(field.path.as_str());
        let t = self.item_table(w, f, "a `when` case")?;
        let span = &w.0;
        let mut allowed = vec!["field", "is", "is_null", "condition", "null_rate"];
        allowed.extend(GENERATORS);
        self.check_keys(span, &allowed, f, "a `when` case")?;
        let line = self.line(span.start);
        let (target_name, condition) = match &t.condition {
            Some(c) => {
                if let Some((_, at)) = self
                    .keys(span)
                    .iter()
                    .find(|(k, _)| matches!(k.as_str(), "field" | "is" | "is_null"))
                {
                    return Err(self.err(
                        at.clone(),
                        f,
                        "a `when` case takes `condition` (an SQL test of the siblings) or `field` with `is` or `is_null`, not both",
                    ));
                }
                let source = self.string(c, f, "condition")?;
                (String::new(), Condition::Expr(Expression::pending(source)))
            }
            None => self.when_sibling(t, span, siblings, me, gen_cases)?,
        };
        let null_rate = t
            .null_rate
            .as_ref()
            .map(|r| self.rate(r, f, "null_rate"))
            .transpose()?;
        let generator = match &field.kind {
            Kind::Scalar { data_type, .. } => {
                let class = Class::of(data_type);
                let g = self.generator(t.into(), span, class, f)?;
                // These draw from the row's place among its table's rows,
                // not from a stream a case can switch to.
                let own = match &g {
                    Some(Generator::Position(_)) => Some("`position` (or a `per_parent` sequence)"),
                    Some(Generator::Aggregate(_)) => Some("`aggregate`"),
                    _ => None,
                };
                if let Some(own) = own {
                    return Err(self.err(
                        span.clone(),
                        f,
                        format!("a `when` case cannot give {own}: it is a field's own generator"),
                    ));
                }
                if let (Some(g), Class::Dict) = (&g, class) {
                    let Kind::Scalar { generator, .. } = &field.kind else {
                        unreachable!()
                    };
                    if category_values(g) != category_values(generator) {
                        return Err(self.err(
                            span.clone(),
                            f,
                            "a dictionary field's cases must draw from the same values (only weights may change)",
                        ));
                    }
                }
                g
            }
            _ => {
                if let Some((_, at)) = self
                    .keys(span)
                    .iter()
                    .find(|(k, _)| GENERATORS.contains(&k.as_str()))
                {
                    return Err(self.err(
                        at.clone(),
                        f,
                        "only scalar fields take a generator in `when`",
                    ));
                }
                None
            }
        };
        if null_rate.is_none() && generator.is_none() {
            return Err(self.err(
                span.clone(),
                f,
                "a `when` case needs `null_rate` or a generator",
            ));
        }
        Ok(When {
            field: target_name,
            line,
            condition,
            null_rate,
            generator,
        })
    }

    /// The sibling a `when` case reads and its test (`is`, `is_null`).
    pub(super) fn when_sibling(
        &self,
        t: &doc::When,
        span: &std::ops::Range<usize>,
        siblings: &[Field],
        me: usize,
        gen_cases: &[bool],
    ) -> Result<(String, Condition), SpecError> {
        let field = &siblings[me];
        let f = Some(field.path.as_str());
        let Some(target) = &t.field else {
            return Err(self.err(
                span.clone(),
                f,
                "a `when` case needs `field` (a sibling's name)",
            ));
        };
        let target_name = self.string(target, f, "field")?;
        let Some(sibling) = siblings.iter().position(|s| s.name == target_name) else {
            return Err(self.err(
                target.span(),
                f,
                format!(
                    "`when` refers to `{target_name}`, which is not a sibling; the siblings are {}",
                    siblings
                        .iter()
                        .filter(|s| s.name != field.name)
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        if sibling == me {
            return Err(self.err(target.span(), f, "`when` cannot refer to the field itself"));
        }
        let sib = &siblings[sibling];
        let condition = match (&t.is, &t.is_null) {
            (Some(is), None) => {
                let (class, categorical) = match &sib.kind {
                    Kind::Scalar {
                        data_type,
                        generator,
                    } => (
                        Class::of(data_type),
                        categories(generator).is_some() && !gen_cases[sibling],
                    ),
                    _ => (Class::Str, false),
                };
                if !categorical {
                    return Err(self.err(
                        is.span(),
                        f,
                        format!(
                            "`is` needs `{target_name}` to be categorical (weighted, zipf with values, \
                             probability or constant, at most 255 values) with no `when` case that \
                             replaces its generator; use `is_null` for any field"
                        ),
                    ));
                }
                let vals = match is.raw() {
                    Raw::Array(_) => self.values(is, class, f, "is")?,
                    _ => vec![self.value(is, class, f, "is")?],
                };
                let Kind::Scalar { generator, .. } = &sib.kind else {
                    unreachable!("checked above")
                };
                let known = categories(generator).unwrap_or_default();
                if let Some(missing) = vals.iter().find(|v| !known.contains(v)) {
                    return Err(self.err(
                        is.span(),
                        f,
                        format!("`{target_name}` never takes the value {missing}"),
                    ));
                }
                Condition::Is(vals)
            }
            (None, Some(n)) => Condition::IsNull(self.boolean(n, f, "is_null")?),
            _ => {
                return Err(self.err(
                    span.clone(),
                    f,
                    "a `when` case needs exactly one of `is` and `is_null`",
                ));
            }
        };
        Ok((target_name, condition))
    }
}
