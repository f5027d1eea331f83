//! RFC 9457 problem responses: the body, its stable codes and how each is
//! written. The one place store errors become problems is `http::lambda::problems`.

use lambda_http::http::{StatusCode, header};
use lambda_http::{Body, Response};
use serde::Serialize;

/// A failed request as the client sees it. Its `code` is stable; clients branch on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The HTTP status answered; a code always comes with the same one.
    pub status: StatusCode,
    /// The stable reason, one of [`CODES`]: what clients branch on.
    pub code: &'static str,
    /// A short summary of the code for people, the same every time it is sent.
    pub title: &'static str,
    /// What went wrong in this request, for people; clients should not parse it.
    pub detail: String,
    /// The request field at fault, for validation failures.
    pub field: Option<String>,
    /// After a wrong verification code: how many more tries the code allows.
    pub attempts_left: Option<u32>,
    /// Why an address or a domain is not accepted (`ADDRESS_NOT_ALLOWED`:
    /// `subaddress`, `disposable_domain` or `domain_not_allowed`;
    /// `DOMAIN_NOT_ALLOWED`: `consumer_domain` or `disposable_domain`).
    pub reason: Option<Reason>,
    /// Seconds the client should wait before retrying, sent as `Retry-After`.
    pub retry_after_secs: Option<u64>,
    /// `REAUTHENTICATION_REQUIRED`: how recent a sign-in must be, in seconds,
    /// sent as RFC 9470's `max_age` in `WWW-Authenticate` and as `maxAge`.
    pub max_age_secs: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body9457<'a> {
    #[serde(rename = "type")]
    kind: String,
    title: &'a str,
    status: u16,
    detail: &'a str,
    code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempts_left: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_age: Option<u32>,
}

/// The media type of every problem response (RFC 9457).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Every stable `code` a problem response can carry, in one place: clients
/// branch on them, and openapi.yaml's `Problem.code` enum is this list
/// (tests/contract checks it; the tests below check the code emits no other).
pub const CODES: &[&str] = &[
    "UNAUTHENTICATED",
    "REAUTHENTICATION_REQUIRED",
    "SESSION_REVOKED",
    "FORBIDDEN",
    "ACCOUNT_INACTIVE",
    "NOT_FOUND",
    "RECOVERY_LINK_INVALID",
    "VALIDATION_FAILED",
    "PAYLOAD_TOO_LARGE",
    "UNSUPPORTED_MEDIA_TYPE",
    "PRECONDITION_REQUIRED",
    "VERSION_MISMATCH",
    "EMAIL_TAKEN",
    "EMAIL_ALREADY_ADDED",
    "ADDRESS_NOT_ALLOWED",
    "EMAIL_LIMIT_REACHED",
    "EMAIL_NOT_VERIFIED",
    "EMAIL_ALREADY_VERIFIED",
    "PRIMARY_EMAIL",
    "SIGN_IN_ADDRESS_PENDING",
    "ORGANIZATION_NOT_FOUND",
    "MEMBER_NOT_FOUND",
    "ROLE_REQUIRED",
    "LAST_OWNER",
    "MEMBER_SUSPENDED",
    "SLUG_TAKEN",
    "ORGANIZATION_LIMIT_REACHED",
    "ORGANIZATION_FULL",
    "INVITATION_NOT_FOUND",
    "INVITATION_EXPIRED",
    "INVITATION_ADDRESS_NOT_HELD",
    "DOMAIN_TAKEN",
    "DOMAIN_NOT_ALLOWED",
    "DOMAIN_NOT_FOUND",
    "DOMAIN_NOT_PROVEN",
    "DOMAIN_NOT_VERIFIED",
    "DOMAIN_LIMIT_REACHED",
    "ENROLLMENT_NOT_OPEN",
    "SCIM_TOKEN_NOT_FOUND",
    "SCIM_TOKEN_LIMIT_REACHED",
    "DIRECTORY_NAME_TAKEN",
    "SCIM_TOKEN_INVALID",
    "VERIFICATION_FAILED",
    "VERIFICATION_EXPIRED",
    "TOO_MANY_ATTEMPTS",
    "TOO_MANY_REQUESTS",
    "SERVICE_UNAVAILABLE",
    "INTERNAL",
];

/// Why an address or a domain is refused: a byte, not the code's text, so
/// every `Result<_, Problem>` stays small.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The deployment's or an organization's address rules refuse an address.
    Address(crate::address_policy::Refusal),
    /// A domain cannot be an organization's.
    Domain(crate::org_policy::DomainRefusal),
}

impl Reason {
    /// The stable reason code of the body.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Address(refusal) => refusal.code(),
            Self::Domain(refusal) => refusal.code(),
        }
    }
}

impl Problem {
    /// A problem with no field, attempts or retry hint; `code` must be one of [`CODES`].
    pub fn new(status: StatusCode, code: &'static str, title: &'static str, detail: impl Into<String>) -> Self {
        // A code outside CODES would reach clients undocumented.
        debug_assert!(CODES.contains(&code), "problem code {code} is not in CODES");
        Self {
            status,
            code,
            title,
            detail: detail.into(),
            field: None,
            attempts_left: None,
            reason: None,
            retry_after_secs: None,
            max_age_secs: None,
        }
    }

    /// 401: the request carries no verified caller (no claims, not an access token, or a bad `sub`).
    pub fn unauthenticated() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "UNAUTHENTICATED",
            "Authentication required",
            "The request carries no verified identity.",
        )
    }

    /// 401: a change that hands over an account (switching the primary
    /// address, removing one, deleting the account) needs a sign-in within
    /// `max_age_secs`, and the token's is older. RFC 9470's step-up challenge
    /// tells the client what to do: sign in again, then retry.
    pub fn reauthentication_required(max_age_secs: u32) -> Self {
        let mut problem = Self::new(
            StatusCode::UNAUTHORIZED,
            "REAUTHENTICATION_REQUIRED",
            "Recent sign-in required",
            format!("This change needs a sign-in within the last {max_age_secs} seconds. Sign in again, then retry."),
        );
        problem.max_age_secs = Some(max_age_secs);
        problem
    }

    /// 403: an admin route called by someone outside the admin group.
    pub fn forbidden() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "Forbidden",
            "This route is for administrators.",
        )
    }

    /// 403: an admin route called by an admin whose own account is not active.
    pub fn forbidden_inactive_admin() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "Forbidden",
            "This route is for administrators whose own account is active.",
        )
    }

    /// An admin suspending or deleting themselves would lock the account out of
    /// the admin routes; closing one's own account is `DELETE /me` (If-Match).
    pub fn own_status() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "Forbidden",
            "Admins do not set their own status; close your own account with DELETE /me.",
        )
    }

    /// 400: `field` of the request is invalid, for `reason`; the problem names the field.
    pub fn validation(field: &str, reason: impl std::fmt::Display) -> Self {
        let mut problem = Self::new(
            StatusCode::BAD_REQUEST,
            "VALIDATION_FAILED",
            "Invalid request",
            format!("{field}: {reason}"),
        );
        problem.field = Some(field.to_owned());
        problem
    }

    /// 413: the body is longer than `limit` bytes.
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
            "Payload too large",
            format!("The body must be at most {limit} bytes."),
        )
    }

    /// 415: the body is not sent as JSON.
    pub fn unsupported_media_type() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
            "Unsupported media type",
            "Send the body as application/json.",
        )
    }

    /// 428: a change to the profile came without If-Match.
    pub fn precondition_required() -> Self {
        Self::new(
            StatusCode::PRECONDITION_REQUIRED,
            "PRECONDITION_REQUIRED",
            "Precondition required",
            "Send If-Match with the ETag of the profile you are changing.",
        )
    }

    /// A weak ETag in If-Match: strong comparison never matches it (RFC 9110).
    pub fn weak_etag() -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "VERSION_MISMATCH",
            "Version mismatch",
            "If-Match compares strongly: send the profile's ETag as it was given, without W/.",
        )
    }

    /// 500: a failure on our side; its cause goes to the log, never to the client.
    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            "Internal error",
            "Something went wrong on our side.",
        )
    }

    /// 503: DynamoDB throttled or writes kept conflicting; the same request may work after a second.
    pub fn unavailable() -> Self {
        let mut problem = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "SERVICE_UNAVAILABLE",
            "Service unavailable",
            "The service is busy. Retry shortly.",
        );
        problem.retry_after_secs = Some(1);
        problem
    }

    /// With a `Retry-After` of `secs`.
    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after_secs = Some(secs);
        self
    }

    /// The RFC 9457 JSON response, with `Retry-After` when the problem has one.
    pub fn into_response(self) -> Response<Body> {
        let body = Body9457 {
            kind: format!(
                "urn:user-service:problem:{}",
                self.code.to_lowercase().replace('_', "-")
            ),
            title: self.title,
            status: self.status.as_u16(),
            detail: &self.detail,
            code: self.code,
            field: self.field.as_deref(),
            attempts_left: self.attempts_left,
            reason: self.reason.map(Reason::code),
            max_age: self.max_age_secs,
        };
        let json = serde_json::to_string(&body).unwrap_or_default();
        let mut builder = Response::builder()
            .status(self.status)
            .header(header::CONTENT_TYPE, PROBLEM_JSON);
        if let Some(secs) = self.retry_after_secs {
            builder = builder.header(header::RETRY_AFTER, secs.to_string());
        }
        if let Some(secs) = self.max_age_secs {
            builder = builder.header(
                header::WWW_AUTHENTICATE,
                format!(
                    r#"Bearer error="insufficient_user_authentication", error_description="A more recent sign-in is required", max_age="{secs}""#
                ),
            );
        }
        builder.body(Body::Text(json)).unwrap_or_else(|_| {
            let mut fallback = Response::new(Body::Empty);
            *fallback.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            fallback
        })
    }
}

/// The error of a handler: the problem to answer with and, for failures on our
/// side, the cause, which goes to the log and never to the client.
#[derive(Debug, thiserror::Error)]
#[error("{} {}", problem.status, problem.code)]
pub struct Failure {
    /// What the client is answered.
    pub problem: Box<Problem>,
    /// For failures on our side, the error behind them, logged in full and never sent.
    #[source]
    pub cause: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl From<Problem> for Failure {
    fn from(problem: Problem) -> Self {
        Self {
            problem: Box::new(problem),
            cause: None,
        }
    }
}

#[cfg(test)]
/// Every problem the HTTP layer builds itself.
pub(crate) fn edge_problems() -> Vec<Problem> {
    vec![
        Problem::unauthenticated(),
        Problem::reauthentication_required(600),
        Problem::forbidden(),
        Problem::forbidden_inactive_admin(),
        Problem::validation("field", "reason"),
        Problem::payload_too_large(1),
        Problem::unsupported_media_type(),
        Problem::precondition_required(),
        Problem::weak_etag(),
        Problem::internal(),
        Problem::unavailable(),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// One of every store error. The match fails to compile when StoreError
    /// gains a variant, so a new outcome cannot skip this test.
    #[test]
    fn codes_are_exactly_what_the_code_emits() {
        let listed: BTreeSet<&str> = CODES.iter().copied().collect();
        assert_eq!(listed.len(), CODES.len(), "CODES has a duplicate");
        // Store errors' problems are checked with their mapping (`http::lambda::problems`).
        let emitted: BTreeSet<&str> = edge_problems().into_iter().map(|p| p.code).collect();
        for code in &emitted {
            assert!(listed.contains(code), "{code} is emitted but not in CODES");
        }
    }

    #[test]
    fn a_code_always_has_the_same_status() {
        let mut seen = std::collections::BTreeMap::new();
        for problem in edge_problems() {
            let status = *seen.entry(problem.code).or_insert(problem.status);
            assert_eq!(status, problem.status, "{} answers two statuses", problem.code);
        }
    }
}
