//! Row filters of the form `column OP literal`.

/// A row filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {}
