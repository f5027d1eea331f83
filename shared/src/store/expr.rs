//! A small builder for the expression parts of a request. Every attribute is
//! referenced by `#name` (several are DynamoDB reserved words, `status` among them).

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::domain::Timestamp;

#[derive(Debug, Default, Clone)]
pub struct Expr {
    pub names: HashMap<String, String>,
    pub values: HashMap<String, AttributeValue>,
}

impl Expr {
    /// Names every attribute in `attributes` as `#attribute`.
    pub fn names(attributes: &[&str]) -> Self {
        let names = attributes.iter().map(|a| (format!("#{a}"), (*a).to_owned())).collect();
        Self {
            names,
            values: HashMap::new(),
        }
    }

    /// Adds `#pk` for the partition key, for `attribute_exists(#pk)` conditions.
    pub fn with_pk(mut self) -> Self {
        self.names.insert("#pk".to_owned(), crate::keys::PK.to_owned());
        self
    }

    pub fn s(mut self, placeholder: &str, value: impl Into<String>) -> Self {
        self.values
            .insert(placeholder.to_owned(), AttributeValue::S(value.into()));
        self
    }

    pub fn n(mut self, placeholder: &str, value: impl ToString) -> Self {
        self.values
            .insert(placeholder.to_owned(), AttributeValue::N(value.to_string()));
        self
    }

    pub fn b(mut self, placeholder: &str, value: bool) -> Self {
        self.values.insert(placeholder.to_owned(), AttributeValue::Bool(value));
        self
    }

    pub fn t(self, placeholder: &str, value: Timestamp) -> Self {
        self.s(placeholder, value.to_string())
    }

    pub fn value(mut self, placeholder: &str, value: AttributeValue) -> Self {
        self.values.insert(placeholder.to_owned(), value);
        self
    }

    /// `None` when empty: DynamoDB rejects an empty ExpressionAttributeValues map.
    pub fn values_or_none(&self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }

    pub fn names_or_none(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }
}
