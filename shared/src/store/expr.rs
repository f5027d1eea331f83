//! A typed builder for the expression parts of a request. Text is written only
//! through it: naming an attribute registers `#attribute`, giving a value
//! registers a `:placeholder` named after the attribute it meets, so an
//! expression cannot use a name or value it does not define, nor define one it
//! does not use. Every attribute is referenced by `#name` (several are DynamoDB
//! reserved words, `status` among them); attribute names are the constants of
//! `keys` and `items::attr`.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::domain::{EmailAddress, EmailId, Timestamp, UserId, UserStatus};

/// Something an expression compares an attribute with or sets it to.
pub(super) trait Value {
    fn into_value(self) -> AttributeValue;
}

impl Value for AttributeValue {
    fn into_value(self) -> AttributeValue {
        self
    }
}

impl Value for &str {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.to_owned())
    }
}

impl Value for String {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self)
    }
}

impl Value for bool {
    fn into_value(self) -> AttributeValue {
        AttributeValue::Bool(self)
    }
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn into_value(self) -> AttributeValue {
                AttributeValue::N(self.to_string())
            }
        }
    )*};
}
numbers!(u32, u64, i64);

impl Value for Timestamp {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.to_string())
    }
}

impl Value for UserStatus {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.as_str().to_owned())
    }
}

impl Value for crate::store::items::OrgStatus {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.as_str().to_owned())
    }
}

impl Value for crate::domain::Role {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.as_str().to_owned())
    }
}

impl Value for crate::domain::OrgId {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.to_string())
    }
}

impl Value for &UserId {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.as_str().to_owned())
    }
}

impl Value for EmailId {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.to_string())
    }
}

impl Value for &EmailAddress {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.as_str().to_owned())
    }
}

impl Value for &crate::address_policy::CanonicalEmail {
    fn into_value(self) -> AttributeValue {
        AttributeValue::S(self.as_str().to_owned())
    }
}

/// The names and values of one request's expressions, registered as their text
/// is written. Each method returns a piece of expression text.
#[derive(Debug, Default, Clone)]
pub(super) struct Expr {
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Expr {
    /// `#attribute`.
    pub(super) fn name(&mut self, attribute: &'static str) -> String {
        let placeholder = format!("#{attribute}");
        self.names.insert(placeholder.clone(), attribute.to_owned());
        placeholder
    }

    /// A placeholder for `value`, named after `attribute`: `:attribute`, or
    /// `:attribute2`, `:attribute3`… when that one holds another value.
    pub(super) fn value(&mut self, attribute: &'static str, value: impl Value) -> String {
        self.register(format!(":{attribute}"), value.into_value())
    }

    /// Registers `value` under `base`, or under `base2`, `base3`… when `base`
    /// holds another value.
    fn register(&mut self, base: String, value: AttributeValue) -> String {
        let mut placeholder = base.clone();
        let mut n = 1;
        while let Some(held) = self.values.get(&placeholder) {
            if *held == value {
                return placeholder;
            }
            n += 1;
            placeholder = format!("{base}{n}");
        }
        self.values.insert(placeholder.clone(), value);
        placeholder
    }

    fn compare(&mut self, attribute: &'static str, op: &str, value: impl Value) -> String {
        format!("{} {op} {}", self.name(attribute), self.value(attribute, value))
    }

    /// `#map.#a = :a`: an attribute of a map attribute equals `value`.
    pub(super) fn eq_in(&mut self, map: &'static str, attribute: &'static str, value: impl Value) -> String {
        let map = self.name(map);
        let name = self.name(attribute);
        let value = self.value(attribute, value);
        format!("{map}.{name} = {value}")
    }

    /// `#a = :a`; also the form of a SET clause.
    pub(super) fn eq(&mut self, attribute: &'static str, value: impl Value) -> String {
        self.compare(attribute, "=", value)
    }

    pub(super) fn ne(&mut self, attribute: &'static str, value: impl Value) -> String {
        self.compare(attribute, "<>", value)
    }

    pub(super) fn lt(&mut self, attribute: &'static str, value: impl Value) -> String {
        self.compare(attribute, "<", value)
    }

    pub(super) fn le(&mut self, attribute: &'static str, value: impl Value) -> String {
        self.compare(attribute, "<=", value)
    }

    pub(super) fn gt(&mut self, attribute: &'static str, value: impl Value) -> String {
        self.compare(attribute, ">", value)
    }

    /// `#a IN (:a, :a2, …)`: the attribute equals one of `values`.
    pub(super) fn is_in<V: Value>(&mut self, attribute: &'static str, values: impl IntoIterator<Item = V>) -> String {
        let name = self.name(attribute);
        let placeholders: Vec<String> = values.into_iter().map(|v| self.value(attribute, v)).collect();
        format!("{name} IN ({})", placeholders.join(", "))
    }

    pub(super) fn exists(&mut self, attribute: &'static str) -> String {
        format!("attribute_exists({})", self.name(attribute))
    }

    pub(super) fn not_exists(&mut self, attribute: &'static str) -> String {
        format!("attribute_not_exists({})", self.name(attribute))
    }

    /// `contains(#a, :a)`: a list or set attribute holds `value`.
    pub(super) fn contains(&mut self, attribute: &'static str, value: impl Value) -> String {
        format!("contains({}, {})", self.name(attribute), self.value(attribute, value))
    }

    /// `size(#a) < :aSize`: a list attribute holds fewer than `n` elements.
    pub(super) fn size_lt(&mut self, attribute: &'static str, n: u32) -> String {
        let name = self.name(attribute);
        let value = self.register(format!(":{attribute}Size"), n.into_value());
        format!("size({name}) < {value}")
    }

    pub(super) fn begins_with(&mut self, attribute: &'static str, prefix: impl Value) -> String {
        format!(
            "begins_with({}, {})",
            self.name(attribute),
            self.value(attribute, prefix)
        )
    }

    /// A SET clause `#a = #a + :aBy` (a negative `by` takes away).
    pub(super) fn add(&mut self, attribute: &'static str, by: i64) -> String {
        let name = self.name(attribute);
        let (op, by) = if by < 0 { ("-", -by) } else { ("+", by) };
        let value = self.register(format!(":{attribute}By"), by.into_value());
        format!("{name} = {name} {op} {value}")
    }

    /// A SET clause `#a = if_not_exists(#a, :aZero) + :aBy`: a count that
    /// items written before it was kept do not have yet.
    pub(super) fn add_from_zero(&mut self, attribute: &'static str, by: i64) -> String {
        let name = self.name(attribute);
        let zero = self.register(format!(":{attribute}Zero"), 0u32.into_value());
        let (op, by) = if by < 0 { ("-", -by) } else { ("+", by) };
        let value = self.register(format!(":{attribute}By"), by.into_value());
        format!("{name} = if_not_exists({name}, {zero}) {op} {value}")
    }

    /// `None` when empty: DynamoDB rejects an empty ExpressionAttributeValues map.
    pub(super) fn values_or_none(&self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }

    pub(super) fn names_or_none(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }
}

/// Conditions that must all hold.
pub(super) fn and<const N: usize>(conditions: [String; N]) -> String {
    conditions.join(" AND ")
}

/// Either condition, parenthesised for use inside an `and`.
pub(super) fn or(a: String, b: String) -> String {
    format!("({a} OR {b})")
}

/// An update expression: SET clauses, then attributes to REMOVE.
#[derive(Debug, Default, Clone)]
pub(super) struct Update {
    set: Vec<String>,
    remove: Vec<String>,
}

impl Update {
    /// A clause from `Expr::eq` or `Expr::add`.
    pub(super) fn set(mut self, clause: String) -> Self {
        self.set.push(clause);
        self
    }

    /// A name from `Expr::name`.
    pub(super) fn remove(mut self, name: String) -> Self {
        self.remove.push(name);
        self
    }

    pub(super) fn text(&self) -> String {
        let mut parts = Vec::new();
        if !self.set.is_empty() {
            parts.push(format!("SET {}", self.set.join(", ")));
        }
        if !self.remove.is_empty() {
            parts.push(format!("REMOVE {}", self.remove.join(", ")));
        }
        parts.join(" ")
    }
}

/// The `#name` and `:value` tokens of an expression's text, for tests that
/// check a request defines exactly what its expressions use.
#[cfg(test)]
pub(super) fn tokens(text: &str) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c != '#' && c != ':' {
            continue;
        }
        let mut end = start + 1;
        while let Some(&(i, next)) = chars.peek() {
            if !(next.is_ascii_alphanumeric() || next == '_') {
                break;
            }
            end = i + next.len_utf8();
            chars.next();
        }
        let token = text[start..end].to_owned();
        if c == '#' {
            names.push(token)
        } else {
            values.push(token)
        }
    }
    (names, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_registrations_come_together() {
        let mut x = Expr::default();
        let condition = and([
            x.exists(crate::store::keys::PK),
            x.ne("status", UserStatus::Deleted),
            x.ne("status", "other"),
            or(x.not_exists("sentAt"), x.le("sentAt", 5u32)),
        ]);
        assert_eq!(
            condition,
            "attribute_exists(#PK) AND #status <> :status AND #status <> :status2 \
             AND (attribute_not_exists(#sentAt) OR #sentAt <= :sentAt)"
        );
        let update = Update::default()
            .set(x.add("count", -1))
            .set(x.eq("status", UserStatus::Deleted))
            .remove(x.name("phone"))
            .text();
        assert_eq!(
            update,
            "SET #count = #count - :countBy, #status = :status REMOVE #phone"
        );
        let values = x.values_or_none().unwrap();
        assert_eq!(values[":status"], AttributeValue::S("deleted".into()));
        assert_eq!(values[":status2"], AttributeValue::S("other".into()));
        assert_eq!(values[":countBy"], AttributeValue::N("1".into()));
        assert_eq!(values.len(), 4);
        assert_eq!(x.names_or_none().unwrap().len(), 5);
        let (names, values) = tokens(&condition);
        assert_eq!(names, ["#PK", "#status", "#status", "#sentAt", "#sentAt"]);
        assert_eq!(values, [":status", ":status2", ":sentAt"]);
    }

    #[test]
    fn empty_maps_are_left_out() {
        let x = Expr::default();
        assert!(x.names_or_none().is_none() && x.values_or_none().is_none());
    }
}
