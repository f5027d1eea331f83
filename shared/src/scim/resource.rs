//! A User as a resource (RFC 7643 section 3: `id` and `meta` beside its
//! attributes), and the projection a request's `attributes` and
//! `excludedAttributes` ask for (RFC 7644 section 3.9).

use serde_json::{Map, Value, json};

use super::error::ScimError;
use super::path::{AttrPath, canonical};
use super::user::{ScimUser, ScimVersion};
use crate::domain::Timestamp;

/// What a resource is, beside the User's attributes.
#[derive(Debug, Clone, Copy)]
pub struct Meta<'a> {
    /// Its id (the account's `sub`).
    pub id: &'a str,
    /// Its version, as the ETag names it.
    pub version: ScimVersion,
    /// When the organization's directory first had it.
    pub created: Timestamp,
    /// When it last changed.
    pub last_modified: Timestamp,
}

/// The User resource, its `meta.location` under `base` (`…/scim/v2`).
pub fn user_resource(user: &ScimUser, meta: Meta<'_>, base: &str) -> Value {
    let mut out = user.attributes();
    out.insert("id".into(), json!(meta.id));
    out.insert(
        "meta".into(),
        json!({
            "resourceType": "User",
            "created": meta.created.to_string(),
            "lastModified": meta.last_modified.max(meta.created).to_string(),
            "location": format!("{base}/Users/{}", meta.id),
            "version": meta.version.etag(),
        }),
    );
    Value::Object(out)
}

/// Which attributes a response carries (RFC 7644 section 3.9).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Projection {
    /// `attributes`: only these (and those always returned).
    only: Vec<AttrPath>,
    /// `excludedAttributes`: all but these (those always returned stay).
    excluded: Vec<AttrPath>,
}

/// Returned whatever a request asks: `id` and `schemas` (RFC 7643 section 7,
/// `returned: always`), and `meta`, which clients read the ETag from.
const ALWAYS: &[&str] = &["id", "schemas", "meta"];

impl Projection {
    /// Reads `attributes` and `excludedAttributes` from a query's
    /// parameters (names in any case). A name the User lacks is no error
    /// (nothing has it, so nothing is returned); what is no attribute path
    /// at all (a filter, a stray character) is 400 `invalidPath`.
    pub fn parse<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self, ScimError> {
        let mut projection = Self::default();
        for (name, value) in params {
            let list = if name.eq_ignore_ascii_case("attributes") {
                &mut projection.only
            } else if name.eq_ignore_ascii_case("excludedAttributes") {
                &mut projection.excluded
            } else {
                continue;
            };
            for word in value.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                let path = AttrPath::from_word(word).map_err(ScimError::invalid_path)?;
                list.push(path);
            }
        }
        Ok(projection)
    }

    /// `resource` with only what was asked for.
    pub fn apply(&self, resource: Value) -> Value {
        let Value::Object(map) = resource else { return resource };
        if self.only.is_empty() && self.excluded.is_empty() {
            return Value::Object(map);
        }
        let mut out = Map::new();
        for (name, value) in map {
            if ALWAYS.contains(&name.as_str()) {
                out.insert(name, value);
                continue;
            }
            let kept = if self.only.is_empty() {
                Some(value)
            } else {
                keep_only(&self.only, &name, value)
            };
            if let Some(value) = kept.and_then(|v| drop_excluded(&self.excluded, &name, v)) {
                out.insert(name, value);
            }
        }
        Value::Object(out)
    }
}

/// The paths of `paths` that name `name` (its canonical spelling) or one of
/// its sub-attributes.
fn naming<'p>(paths: &'p [AttrPath], name: &str) -> impl Iterator<Item = &'p AttrPath> {
    let name = canonical(name);
    paths.iter().filter(move |p| p.extension.is_none() && p.name == name)
}

fn keep_only(only: &[AttrPath], name: &str, value: Value) -> Option<Value> {
    let asked: Vec<&AttrPath> = naming(only, name).collect();
    if asked.is_empty() {
        return None;
    }
    if asked.iter().any(|p| p.sub.is_none()) {
        return Some(value);
    }
    let subs: Vec<String> = asked.iter().filter_map(|p| p.sub.clone()).collect();
    Some(map_subs(value, |sub| subs.iter().any(|s| s == sub)))
}

fn drop_excluded(excluded: &[AttrPath], name: &str, value: Value) -> Option<Value> {
    let named: Vec<&AttrPath> = naming(excluded, name).collect();
    if named.iter().any(|p| p.sub.is_none()) {
        return None;
    }
    let subs: Vec<String> = named.iter().filter_map(|p| p.sub.clone()).collect();
    if subs.is_empty() {
        return Some(value);
    }
    Some(map_subs(value, |sub| !subs.iter().any(|s| s == sub)))
}

/// `value` (an object, or a list of objects) with only the sub-attributes `keep` admits.
fn map_subs(value: Value, keep: impl Fn(&str) -> bool + Copy) -> Value {
    let filter = |object: Map<String, Value>| -> Value {
        Value::Object(object.into_iter().filter(|(k, _)| keep(&canonical(k))).collect())
    };
    match value {
        Value::Object(object) => filter(object),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| match item {
                    Value::Object(object) => filter(object),
                    other => other,
                })
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scim::ScimUser;

    fn resource() -> Value {
        let user = ScimUser::from_json(&json!({
            "userName": "ada@acme.example",
            "externalId": "e-1",
            "name": { "givenName": "Ada", "familyName": "Lovelace" },
            "emails": [{ "value": "ada@acme.example", "primary": true }],
        }))
        .unwrap();
        let at = Timestamp::from_unix_millis(1_700_000_000_000);
        user_resource(
            &user,
            Meta {
                id: "0f8fad5b-d9cb-469f-a165-70867728950e",
                version: ScimVersion {
                    profile: 3,
                    membership: 1,
                    addresses: 0xab,
                },
                created: at,
                last_modified: at,
            },
            "https://api.example/scim/v2",
        )
    }

    #[test]
    fn the_resource_carries_its_id_location_and_version() {
        let r = resource();
        assert_eq!(r["id"], "0f8fad5b-d9cb-469f-a165-70867728950e");
        assert_eq!(
            r["meta"]["location"],
            "https://api.example/scim/v2/Users/0f8fad5b-d9cb-469f-a165-70867728950e"
        );
        assert_eq!(r["meta"]["version"], "W/\"3-1-000000ab\"");
        assert_eq!(r["meta"]["resourceType"], "User");
        assert_eq!(r["userName"], "ada@acme.example");
    }

    #[test]
    fn attributes_keep_only_what_is_asked_and_what_is_always_returned() {
        let p = Projection::parse([("attributes", "userName,name.givenName")]).unwrap();
        let r = p.apply(resource());
        let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["id", "meta", "name", "schemas", "userName"]);
        assert_eq!(r["name"], json!({ "givenName": "Ada" }));
        // Any case, and the core URN before the name.
        let p = Projection::parse([("ATTRIBUTES", "urn:ietf:params:scim:schemas:core:2.0:User:EMAILS.value")]).unwrap();
        let r = p.apply(resource());
        assert_eq!(r["emails"], json!([{ "value": "ada@acme.example" }]));
        assert!(r.get("userName").is_none());
    }

    #[test]
    fn excluded_attributes_drop_what_is_named_but_never_id() {
        let p = Projection::parse([("excludedAttributes", "emails,name.familyName,id")]).unwrap();
        let r = p.apply(resource());
        assert!(r.get("emails").is_none());
        assert_eq!(r["name"], json!({ "givenName": "Ada" }));
        assert_eq!(r["id"], "0f8fad5b-d9cb-469f-a165-70867728950e");
        assert_eq!(r["active"], true);
    }

    #[test]
    fn what_is_no_attribute_path_is_refused_and_an_unknown_name_returns_nothing() {
        let p = Projection::parse([("attributes", "manager.value")]).unwrap();
        let r = p.apply(resource());
        assert!(r.get("userName").is_none() && r.get("manager").is_none());
        assert_eq!(r["id"], "0f8fad5b-d9cb-469f-a165-70867728950e");
        let err = Projection::parse([("attributes", "emails[type eq \"work\"]")]).unwrap_err();
        assert_eq!(err.status, 400);
    }
}
