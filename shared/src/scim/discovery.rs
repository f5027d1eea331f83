//! What this service provider declares about itself (RFC 7644 section 4):
//! `/ServiceProviderConfig`, `/ResourceTypes` and `/Schemas`. Exactly what is
//! supported, so a client (and `scim2-tester`) tests nothing else: PATCH,
//! filtering (`eq` and `and`, at most [`MAX_RESULTS`] a page), ETags; no
//! bulk, no sorting, no password change, no Groups.

use serde_json::{Value, json};

use super::path::USER_SCHEMA;

/// The most Users one page returns, whatever `count` asks.
pub const MAX_RESULTS: u32 = 100;

/// The URNs of the discovery resources' schemas (RFC 7643 sections 5 to 7).
pub const SERVICE_PROVIDER_CONFIG_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
/// A ResourceType's schema.
pub const RESOURCE_TYPE_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
/// A Schema's schema.
pub const SCHEMA_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Schema";
/// A list's message schema.
pub const LIST_RESPONSE_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

/// `/ServiceProviderConfig`. `base` is the SCIM base URL (`…/scim/v2`).
pub fn service_provider_config(base: &str) -> Value {
    json!({
        "schemas": [SERVICE_PROVIDER_CONFIG_SCHEMA],
        "documentationUri": "https://github.com/user-service/user-service/blob/main/docs/scim.md",
        "patch": { "supported": true },
        "bulk": { "supported": false, "maxOperations": 0, "maxPayloadSize": 0 },
        "filter": { "supported": true, "maxResults": MAX_RESULTS },
        "changePassword": { "supported": false },
        "sort": { "supported": false },
        "etag": { "supported": true },
        "authenticationSchemes": [{
            "type": "oauthbearertoken",
            "name": "SCIM token",
            "description": "A bearer token an organization's owner or admin makes (POST /organizations/{orgId}/scim-tokens).",
            "primary": true,
        }],
        "meta": { "resourceType": "ServiceProviderConfig", "location": format!("{base}/ServiceProviderConfig") },
    })
}

/// `/ResourceTypes`' one entry: User. Groups are not served (docs/scim.md says why).
pub fn user_resource_type(base: &str) -> Value {
    json!({
        "schemas": [RESOURCE_TYPE_SCHEMA],
        "id": "User",
        "name": "User",
        "endpoint": "/Users",
        "description": "A member of the organization",
        "schema": USER_SCHEMA,
        "schemaExtensions": [],
        "meta": { "resourceType": "ResourceType", "location": format!("{base}/ResourceTypes/User") },
    })
}

fn attribute(name: &str, kind: &str, required: bool, mutability: &str, uniqueness: &str) -> Value {
    json!({
        "name": name,
        "type": kind,
        "multiValued": false,
        "required": required,
        "caseExact": false,
        "mutability": mutability,
        "returned": "default",
        "uniqueness": uniqueness,
    })
}

fn multi_valued(name: &str, description: &str) -> Value {
    let mut value = attribute("value", "string", true, "readWrite", "none");
    value["description"] = json!(description);
    let mut kind = attribute("type", "string", false, "readWrite", "none");
    kind["canonicalValues"] = json!(["work"]);
    json!({
        "name": name,
        "type": "complex",
        "multiValued": true,
        "required": false,
        "mutability": "readWrite",
        "returned": "default",
        "uniqueness": "none",
        "subAttributes": [value, kind, attribute("primary", "boolean", false, "readWrite", "none")],
    })
}

fn required(mut attribute: Value) -> Value {
    attribute["required"] = json!(true);
    attribute
}

/// The User schema as this service keeps it: the attributes of RFC 7643
/// section 4.1 it stores, and no others. Others are accepted and not kept.
pub fn user_schema(base: &str) -> Value {
    let mut external_id = attribute("externalId", "string", false, "readWrite", "none");
    external_id["caseExact"] = json!(true);
    let mut id = attribute("id", "string", false, "readOnly", "server");
    id["caseExact"] = json!(true);
    id["returned"] = json!("always");
    json!({
        "schemas": [SCHEMA_SCHEMA],
        "id": USER_SCHEMA,
        "name": "User",
        "description": "A member of the organization",
        "attributes": [
            id,
            external_id,
            attribute("userName", "string", true, "readWrite", "server"),
            {
                "name": "name",
                "type": "complex",
                "multiValued": false,
                "required": false,
                "mutability": "readWrite",
                "returned": "default",
                "uniqueness": "none",
                "subAttributes": [
                    attribute("givenName", "string", false, "readWrite", "none"),
                    attribute("familyName", "string", false, "readWrite", "none"),
                ],
            },
            // Required: every user has a verified primary address, and a
            // membership is suspended or not. A create may leave them out
            // (the userName as the address, active true); a PATCH cannot
            // remove them (RFC 7644 section 3.5.2.2: `mutability`).
            required(multi_valued("emails", "An email address, kept normalised (lower-cased)")),
            multi_valued("phoneNumbers", "An E.164 phone number; one is kept"),
            required(attribute("active", "boolean", false, "readWrite", "none")),
        ],
        "meta": { "resourceType": "Schema", "location": format!("{base}/Schemas/{USER_SCHEMA}") },
    })
}

/// A list of resources (RFC 7644 section 3.4.2).
pub fn list_response(resources: Vec<Value>, total: u64, start_index: u64) -> Value {
    json!({
        "schemas": [LIST_RESPONSE_SCHEMA],
        "totalResults": total,
        "startIndex": start_index,
        "itemsPerPage": resources.len(),
        "Resources": resources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_lists_what_a_user_keeps() {
        let schema = user_schema("https://api.example/scim/v2");
        let names: Vec<&str> = schema["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "id",
                "externalId",
                "userName",
                "name",
                "emails",
                "phoneNumbers",
                "active"
            ]
        );
        let config = service_provider_config("https://api.example/scim/v2");
        assert_eq!(config["filter"]["maxResults"], 100);
        assert_eq!(config["bulk"]["supported"], false);
        assert_eq!(list_response(vec![], 0, 1)["itemsPerPage"], 0);
    }
}
