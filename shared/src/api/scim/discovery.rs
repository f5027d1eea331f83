//! `ANY /scim/v2/{proxy+}`: the discovery documents (RFC 7644 section 4),
//! and the protocol's answer to everything else under the base URL that no
//! other SCIM route takes: 405 for another method on a document, 501 for
//! what the RFC names and this service does not do (bulk, search by POST),
//! 404 for the rest (Groups among them: docs/scim.md says why).

use lambda_http::http::{Method, StatusCode, header};
use lambda_http::{Body, Request, Response};

use super::{Answer, base_url, scim_json};
use crate::scim::ScimError;
use crate::scim::discovery::{list_response, service_provider_config, user_resource_type, user_schema};
use crate::scim::path::USER_SCHEMA;

/// What a path under `/scim/v2` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// `/ServiceProviderConfig`.
    ServiceProviderConfig,
    /// `/ResourceTypes`.
    ResourceTypes,
    /// `/ResourceTypes/User`.
    UserResourceType,
    /// `/Schemas`.
    Schemas,
    /// `/Schemas/urn:ietf:params:scim:schemas:core:2.0:User`.
    UserSchema,
    /// Something the RFC defines and this service does not do.
    NotImplemented(&'static str),
    /// Nothing here.
    Unknown,
}

impl Document {
    /// What `path` (after `/scim/v2/`) names. Names are matched as the RFC
    /// spells them, and the User schema's URN without regard to case.
    pub fn of(path: &str) -> Self {
        let path = path.trim_matches('/');
        let (first, rest) = path.split_once('/').map_or((path, None), |(a, b)| (a, Some(b)));
        match (first, rest) {
            ("ServiceProviderConfig", None) => Self::ServiceProviderConfig,
            ("ResourceTypes", None) => Self::ResourceTypes,
            ("ResourceTypes", Some("User")) => Self::UserResourceType,
            ("Schemas", None) => Self::Schemas,
            ("Schemas", Some(urn)) if urn.eq_ignore_ascii_case(USER_SCHEMA) => Self::UserSchema,
            ("Bulk", None) => Self::NotImplemented("bulk operations are not supported (/ServiceProviderConfig)"),
            (".search", None) | ("Users", Some(".search")) => {
                Self::NotImplemented("searching by POST is not supported; filter with GET /Users")
            }
            _ => Self::Unknown,
        }
    }
}

/// The answer to `method` on `path` (after `/scim/v2/`), for a proven client.
pub fn answer(req: &Request, method: &Method, path: &str) -> Answer {
    let document = Document::of(path);
    let base = base_url(req);
    let body = match document {
        Document::Unknown => return Err(ScimError::status(404, "no such resource or endpoint").into()),
        Document::NotImplemented(why) => return Err(ScimError::status(501, why).into()),
        _ if method != Method::GET => return Ok(not_allowed()),
        Document::ServiceProviderConfig => service_provider_config(&base),
        Document::ResourceTypes => list_response(vec![user_resource_type(&base)], 1, 1),
        Document::UserResourceType => user_resource_type(&base),
        Document::Schemas => list_response(vec![user_schema(&base)], 1, 1),
        Document::UserSchema => user_schema(&base),
    };
    Ok(scim_json(StatusCode::OK, &body))
}

/// 405 with `Allow`: the documents are read-only (RFC 7644 section 4).
fn not_allowed() -> Response<Body> {
    let mut response = super::refusal(&ScimError::status(405, "the discovery documents are read-only").into());
    response
        .headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static("GET"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_documents() {
        assert_eq!(Document::of("ServiceProviderConfig"), Document::ServiceProviderConfig);
        assert_eq!(Document::of("/ResourceTypes/"), Document::ResourceTypes);
        assert_eq!(Document::of("ResourceTypes/User"), Document::UserResourceType);
        assert_eq!(Document::of("ResourceTypes/Group"), Document::Unknown);
        assert_eq!(
            Document::of("Schemas/URN:ietf:params:scim:schemas:core:2.0:User"),
            Document::UserSchema
        );
        assert_eq!(Document::of("Schemas/urn:x"), Document::Unknown);
        assert!(matches!(Document::of("Bulk"), Document::NotImplemented(_)));
        assert!(matches!(Document::of(".search"), Document::NotImplemented(_)));
        assert!(matches!(Document::of("Users/.search"), Document::NotImplemented(_)));
        assert_eq!(Document::of("Groups"), Document::Unknown);
        assert_eq!(Document::of("0f8fad5b-d9cb-469f-a165-70867728950e"), Document::Unknown);
    }
}
