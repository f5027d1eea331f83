//! A SCIM error as RFC 7644 section 3.12 gives it: the HTTP status, and for a
//! 400 the `scimType` naming what was wrong, in the error message schema.

use serde_json::{Value, json};

/// The URN of the error message schema (RFC 7644 section 3.12).
pub const ERROR_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:Error";

/// The `scimType` of a 400 or 409 (RFC 7644 section 3.12, table 9), for what
/// this service provider can find wrong in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScimType {
    /// The filter's syntax is invalid, or it compares an attribute this service
    /// provider does not filter on, or with an operator it does not support.
    InvalidFilter,
    /// A value is not what its attribute takes (a name, an address, a number).
    InvalidValue,
    /// The request's JSON is not a SCIM message of the expected schema.
    InvalidSyntax,
    /// A PATCH path is malformed, or names an attribute the schema lacks.
    InvalidPath,
    /// A PATCH path's filter matched nothing to change or remove.
    NoTarget,
    /// A read-only or immutable attribute was asked to change.
    Mutability,
    /// A value must be unique and is taken (a `userName`, an `externalId`, an address).
    Uniqueness,
    /// Too many results for the service provider to return.
    TooMany,
    /// The `If-Match` version does not parse.
    InvalidVers,
}

impl ScimType {
    /// The keyword as RFC 7644 spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidFilter => "invalidFilter",
            Self::InvalidValue => "invalidValue",
            Self::InvalidSyntax => "invalidSyntax",
            Self::InvalidPath => "invalidPath",
            Self::NoTarget => "noTarget",
            Self::Mutability => "mutability",
            Self::Uniqueness => "uniqueness",
            Self::TooMany => "tooMany",
            Self::InvalidVers => "invalidVers",
        }
    }
}

/// A refused SCIM request: its status, its `scimType` when the RFC gives one,
/// and a `detail` for the directory's administrator. The detail names the
/// attribute and the rule, never a value: a value may be personal data, and
/// identity providers keep their error messages in their logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status} {}: {detail}", scim_type.map_or("-", ScimType::as_str))]
pub struct ScimError {
    /// The HTTP status.
    pub status: u16,
    /// What was wrong, for a 400 or a 409.
    pub scim_type: Option<ScimType>,
    /// Why, for a person reading the directory's provisioning log.
    pub detail: String,
}

impl ScimError {
    /// A 400 with its `scimType`.
    pub fn bad_request(scim_type: ScimType, detail: impl Into<String>) -> Self {
        Self {
            status: 400,
            scim_type: Some(scim_type),
            detail: detail.into(),
        }
    }

    /// A 400 `invalidFilter`.
    pub fn invalid_filter(detail: impl Into<String>) -> Self {
        Self::bad_request(ScimType::InvalidFilter, detail)
    }

    /// A 400 `invalidValue` naming the attribute.
    pub fn invalid_value(attribute: &str, why: &str) -> Self {
        Self::bad_request(ScimType::InvalidValue, format!("{attribute}: {why}"))
    }

    /// A 400 `invalidPath`.
    pub fn invalid_path(detail: impl Into<String>) -> Self {
        Self::bad_request(ScimType::InvalidPath, detail)
    }

    /// A 400 `invalidSyntax`.
    pub fn invalid_syntax(detail: impl Into<String>) -> Self {
        Self::bad_request(ScimType::InvalidSyntax, detail)
    }

    /// A 409 `uniqueness`: the value is taken.
    pub fn uniqueness(detail: impl Into<String>) -> Self {
        Self {
            status: 409,
            scim_type: Some(ScimType::Uniqueness),
            detail: detail.into(),
        }
    }

    /// A status without a `scimType` (401, 404, 412, 429, 500, 501, 503).
    pub fn status(status: u16, detail: impl Into<String>) -> Self {
        Self {
            status,
            scim_type: None,
            detail: detail.into(),
        }
    }

    /// The response body. RFC 7644 section 3.12 gives `status` as a string.
    pub fn body(&self) -> Value {
        let mut body = json!({
            "schemas": [ERROR_SCHEMA],
            "status": self.status.to_string(),
            "detail": self.detail,
        });
        if let Some(scim_type) = self.scim_type {
            body["scimType"] = json!(scim_type.as_str());
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_the_rfc_error_message() {
        let body = ScimError::invalid_filter("unsupported operator `co`").body();
        assert_eq!(
            body,
            json!({
                "schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
                "status": "400",
                "scimType": "invalidFilter",
                "detail": "unsupported operator `co`",
            })
        );
        let body = ScimError::status(404, "no such user").body();
        assert_eq!(body["status"], "404");
        assert!(body.get("scimType").is_none());
    }
}
