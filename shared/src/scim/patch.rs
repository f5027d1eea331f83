//! PATCH (RFC 7644 section 3.5.2) on a User: the operations read as Entra ID
//! and Okta write them, then applied to the User as shown, whose result is
//! read again as a whole User. A PATCH so ends in what a PUT of that result
//! would do, by the same rules.
//!
//! Both shapes of Entra ID are read: by default `Replace`, `Add` and `Remove`
//! capitalised, `"False"` for false, and paths with value filters
//! (`emails[type eq "work"].value`); with its `aadOptscim062020` flag,
//! lowercase operations, booleans, and a path-less `replace` whose value has
//! dotted keys (`"name.givenName"`). Okta's catalogue integrations send a
//! path-less `replace` of `{"active": false}`.

use serde_json::{Map, Value};

use super::error::{ScimError, ScimType};
use super::path::{AttrPath, CompValue, ENTERPRISE_SCHEMA};
use super::user::{ScimUser, boolean, canonical_keys};

/// The URN of a PATCH request's message schema.
pub const PATCH_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/// The most operations one PATCH may carry.
pub const MAX_OPERATIONS: usize = 50;

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `add`
    Add,
    /// `replace`
    Replace,
    /// `remove`
    Remove,
}

/// One operation of a PATCH.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// Add, replace or remove.
    pub op: Op,
    /// What it targets; `None` for the whole User.
    pub path: Option<AttrPath>,
    /// What it adds or replaces with, in the schema's spelling.
    pub value: Option<Value>,
}

/// A PATCH request's operations.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch(pub Vec<Operation>);

/// The attributes kept, and whether each is multi-valued.
const KEPT: &[(&str, bool)] = &[
    ("userName", false),
    ("externalId", false),
    ("name", false),
    ("emails", true),
    ("phoneNumbers", true),
    ("active", false),
];

/// Attributes of the User schema that are accepted and not kept.
const NOT_KEPT: &[&str] = &[
    "displayName",
    "nickName",
    "profileUrl",
    "title",
    "userType",
    "preferredLanguage",
    "locale",
    "timezone",
    "password",
    "ims",
    "photos",
    "addresses",
    "entitlements",
    "roles",
    "x509Certificates",
];

impl Patch {
    /// Reads a PATCH request's body.
    pub fn parse(body: &Value) -> Result<Self, ScimError> {
        let body = canonical_operations(body);
        let Some(Value::Object(message)) = Some(&body) else {
            return Err(ScimError::invalid_syntax("a PATCH request is a JSON object"));
        };
        if let Some(schemas) = message.get("schemas") {
            let listed = schemas.as_array().is_some_and(|s| {
                s.iter()
                    .any(|v| v.as_str().is_some_and(|v| v.eq_ignore_ascii_case(PATCH_SCHEMA)))
            });
            if !listed {
                return Err(ScimError::invalid_syntax(format!("`schemas` must list {PATCH_SCHEMA}")));
            }
        }
        let Some(Value::Array(operations)) = message.get("Operations") else {
            return Err(ScimError::invalid_syntax("`Operations` must be an array"));
        };
        if operations.is_empty() || operations.len() > MAX_OPERATIONS {
            return Err(ScimError::invalid_syntax("`Operations` holds 1 to 50 operations"));
        }
        operations.iter().map(operation).collect::<Result<_, _>>().map(Self)
    }

    /// The User after every operation, in order, applied to `current`.
    pub fn apply(&self, current: &ScimUser) -> Result<ScimUser, ScimError> {
        let before = current.attributes();
        let mut user = before.clone();
        for operation in &self.0 {
            apply(&mut user, operation)?;
        }
        // RFC 7644 section 3.5.2.2: a required attribute removed, or left
        // unassigned, is `mutability`. `/Schemas` declares which are.
        for required in REQUIRED {
            if assigned(&before, required) && !assigned(&user, required) {
                return Err(ScimError::bad_request(
                    ScimType::Mutability,
                    format!("`{required}` is required: replace it, never remove it"),
                ));
            }
        }
        ScimUser::from_json(&Value::Object(user))
    }
}

/// The body's keys for the message (`Operations`, `op`, `path`, `value`) in
/// the RFC's spelling, whatever the client's.
fn canonical_operations(body: &Value) -> Value {
    let Value::Object(message) = body else {
        return body.clone();
    };
    let mut out = Map::new();
    for (key, value) in message {
        if key.eq_ignore_ascii_case("Operations") {
            let operations = match value {
                Value::Array(items) => Value::Array(
                    items
                        .iter()
                        .map(|item| match item {
                            Value::Object(fields) => Value::Object(
                                fields
                                    .iter()
                                    .map(|(k, v)| {
                                        let known =
                                            ["op", "path", "value"].into_iter().find(|f| f.eq_ignore_ascii_case(k));
                                        (known.map_or_else(|| k.clone(), str::to_owned), v.clone())
                                    })
                                    .collect(),
                            ),
                            other => other.clone(),
                        })
                        .collect(),
                ),
                other => other.clone(),
            };
            out.insert("Operations".to_owned(), operations);
        } else {
            out.insert(
                if key.eq_ignore_ascii_case("schemas") {
                    "schemas".to_owned()
                } else {
                    key.clone()
                },
                value.clone(),
            );
        }
    }
    Value::Object(out)
}

fn operation(item: &Value) -> Result<Operation, ScimError> {
    let Value::Object(fields) = item else {
        return Err(ScimError::invalid_syntax("each operation is a JSON object"));
    };
    let op = match fields.get("op").and_then(Value::as_str) {
        Some(op) if op.eq_ignore_ascii_case("add") => Op::Add,
        Some(op) if op.eq_ignore_ascii_case("replace") => Op::Replace,
        Some(op) if op.eq_ignore_ascii_case("remove") => Op::Remove,
        _ => return Err(ScimError::invalid_syntax("`op` is add, replace or remove")),
    };
    let path = match fields.get("path") {
        None | Some(Value::Null) => None,
        Some(Value::String(path)) if path.trim().is_empty() => None,
        Some(Value::String(path)) => Some(AttrPath::parse(path)?),
        Some(_) => return Err(ScimError::invalid_path("`path` must be a string")),
    };
    let value = fields.get("value").map(canonical_keys);
    match (op, &path, &value) {
        (Op::Remove, None, _) => Err(ScimError::bad_request(ScimType::NoTarget, "`remove` needs a `path`")),
        (Op::Add | Op::Replace, _, None) => Err(ScimError::invalid_value("value", "`add` and `replace` need a value")),
        _ => Ok(Operation { op, path, value }),
    }
}

/// Whether the core attribute `name` is kept, and if so whether it is multi-valued.
fn kept(name: &str) -> Result<Option<bool>, ScimError> {
    if let Some((_, multi)) = KEPT.iter().find(|(kept, _)| *kept == name) {
        return Ok(Some(*multi));
    }
    if NOT_KEPT.contains(&name) || name == "groups" {
        return Ok(None);
    }
    Err(ScimError::invalid_path(format!(
        "the User has no attribute `{}`",
        super::path::shorten(name)
    )))
}

/// The User's attributes that always hold a value (`/Schemas` says
/// `required`): its name and `active` (a membership is suspended or not).
/// `emails` too, but a person's own account may lose its last work
/// address: the update's plan decides (`plan_update`).
const REQUIRED: &[&str] = &["userName", "active"];

fn assigned(user: &Map<String, Value>, name: &str) -> bool {
    match user.get(name) {
        None | Some(Value::Null) => false,
        Some(Value::Array(items)) => !items.is_empty(),
        Some(_) => true,
    }
}

fn apply(user: &mut Map<String, Value>, operation: &Operation) -> Result<(), ScimError> {
    let Some(path) = &operation.path else {
        // Path-less: each key of the value is a path of its own (Entra ID's
        // `"name.givenName"`, or a whole attribute).
        let Some(Value::Object(values)) = &operation.value else {
            return Err(ScimError::invalid_value(
                "value",
                "a path-less operation's value is an object",
            ));
        };
        for (key, value) in values {
            if key == ENTERPRISE_SCHEMA || key.starts_with(&format!("{ENTERPRISE_SCHEMA}:")) || key == "schemas" {
                continue;
            }
            let path = AttrPath::parse(key)?;
            apply_at(user, operation.op, &path, Some(value))?;
        }
        return Ok(());
    };
    apply_at(user, operation.op, path, operation.value.as_ref())
}

fn apply_at(user: &mut Map<String, Value>, op: Op, path: &AttrPath, value: Option<&Value>) -> Result<(), ScimError> {
    if let Some(extension) = &path.extension {
        // The enterprise extension is accepted and not kept; another schema is unknown.
        return if extension.eq_ignore_ascii_case(ENTERPRISE_SCHEMA) {
            Ok(())
        } else {
            Err(ScimError::invalid_path("the User has no such schema extension"))
        };
    }
    let Some(multi) = kept(&path.name)? else { return Ok(()) };
    if multi {
        return apply_multi(user, op, path, value);
    }
    if path.filter.is_some() {
        return Err(ScimError::invalid_path(format!(
            "`{}` is single-valued: it takes no filter",
            path.name
        )));
    }
    match (op, &path.sub) {
        (Op::Remove, None) => {
            user.remove(&path.name);
        }
        (Op::Remove, Some(sub)) => {
            if let Some(Value::Object(complex)) = user.get_mut(&path.name) {
                complex.remove(sub);
            }
        }
        (Op::Add | Op::Replace, None) => {
            let value = value.cloned().unwrap_or(Value::Null);
            match (user.get_mut(&path.name), value) {
                // A complex attribute's sub-attributes replace theirs; the others stay (RFC 7644 3.5.2.3).
                (Some(Value::Object(existing)), Value::Object(new)) => existing.extend(new),
                (_, value) => {
                    user.insert(path.name.clone(), normalise(&path.name, value));
                }
            }
        }
        (Op::Add | Op::Replace, Some(sub)) => {
            let entry = user
                .entry(path.name.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(complex) = entry else {
                return Err(ScimError::invalid_path(format!(
                    "`{}` has no sub-attributes",
                    path.name
                )));
            };
            complex.insert(sub.clone(), value.cloned().unwrap_or(Value::Null));
        }
    }
    Ok(())
}

/// `active` as Entra ID sends it (`"False"`) becomes a boolean here, so a
/// later operation's comparison sees one.
fn normalise(name: &str, value: Value) -> Value {
    match (name, boolean(&value)) {
        ("active", Some(b)) => Value::Bool(b),
        _ => value,
    }
}

/// Whether `item` satisfies every comparison of a value filter. Strings are
/// compared without regard to case: `type`, `value` of an address.
fn matches(item: &Value, filter: &[(String, CompValue)]) -> bool {
    filter.iter().all(|(sub, expected)| match (item.get(sub), expected) {
        (Some(Value::String(actual)), CompValue::Str(expected)) => actual.eq_ignore_ascii_case(expected),
        (Some(actual), CompValue::Bool(expected)) => boolean(actual) == Some(*expected),
        (None | Some(Value::Null), CompValue::Null) => true,
        // Every address and number is shown as `work`: a missing type is work.
        (None, CompValue::Str(expected)) => sub == "type" && expected.eq_ignore_ascii_case("work"),
        (None, CompValue::Bool(false)) => sub == "primary",
        _ => false,
    })
}

fn apply_multi(user: &mut Map<String, Value>, op: Op, path: &AttrPath, value: Option<&Value>) -> Result<(), ScimError> {
    let items = match user.remove(&path.name) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let mut items = items;
    let mut new_primary = None;
    match (op, &path.filter, &path.sub) {
        (Op::Remove, None, None) => match value {
            // Remove the listed values only (`"value": [{"value": "…"}]`), or all.
            Some(Value::Array(listed)) => {
                items.retain(|item| {
                    !listed
                        .iter()
                        .any(|l| l.get("value").is_some_and(|v| same_value(item.get("value"), v)))
                });
            }
            _ => items.clear(),
        },
        (Op::Remove, Some(filter), _) => {
            let before = items.len();
            items.retain(|item| !matches(item, filter));
            if items.len() == before {
                return Err(ScimError::bad_request(
                    ScimType::NoTarget,
                    format!("no `{}` value matches the filter", path.name),
                ));
            }
        }
        (Op::Remove, None, Some(_)) => items.clear(),
        (Op::Add | Op::Replace, None, None) => {
            let listed = match value {
                Some(Value::Array(listed)) => listed.clone(),
                Some(one @ Value::Object(_)) => vec![one.clone()],
                _ => return Err(ScimError::invalid_value(&path.name, "takes an array of objects")),
            };
            if op == Op::Replace {
                items.clear();
            }
            for new in listed {
                // An address or number already listed is updated, not listed twice.
                match items
                    .iter_mut()
                    .position(|item| new.get("value").is_some_and(|v| same_value(item.get("value"), v)))
                {
                    Some(at) => merge(&mut items[at], new),
                    None => items.push(new),
                }
                let at = items.len() - 1;
                if items[at].get("primary").and_then(boolean) == Some(true) {
                    new_primary = Some(at);
                }
            }
        }
        (Op::Add | Op::Replace, filter, sub) => {
            let filter = filter.clone().unwrap_or_default();
            let new = match sub {
                Some(sub) => Value::Object(Map::from_iter([(sub.clone(), value.cloned().unwrap_or(Value::Null))])),
                None => value.cloned().unwrap_or(Value::Null),
            };
            if !new.is_object() {
                return Err(ScimError::invalid_value(
                    &path.name,
                    "a filtered path without a sub-attribute takes an object",
                ));
            }
            let mut matched = false;
            for (at, item) in items.iter_mut().enumerate() {
                if matches(item, &filter) {
                    merge(item, new.clone());
                    matched = true;
                    if item.get("primary").and_then(boolean) == Some(true) {
                        new_primary = Some(at);
                    }
                }
            }
            // Nothing matched: Entra ID sets a work address a user lacks this
            // way, so the value is added with what the filter asked for.
            if !matched {
                let mut item = Map::new();
                for (sub, expected) in &filter {
                    item.insert(sub.clone(), comp_json(expected));
                }
                let mut item = Value::Object(item);
                merge(&mut item, new);
                if item.get("primary").and_then(boolean) == Some(true) {
                    new_primary = Some(items.len());
                }
                items.push(item);
            }
        }
    }
    // One primary: the one this operation made primary wins.
    if let Some(primary) = new_primary {
        for (at, item) in items.iter_mut().enumerate() {
            if at != primary
                && let Value::Object(item) = item
            {
                item.insert("primary".to_owned(), Value::Bool(false));
            }
        }
    }
    if !items.is_empty() {
        user.insert(path.name.clone(), Value::Array(items));
    }
    Ok(())
}

fn same_value(existing: Option<&Value>, new: &Value) -> bool {
    match (existing.and_then(Value::as_str), new.as_str()) {
        (Some(a), Some(b)) => a.trim().eq_ignore_ascii_case(b.trim()),
        _ => false,
    }
}

fn merge(item: &mut Value, new: Value) {
    match (item, new) {
        (Value::Object(item), Value::Object(new)) => item.extend(new),
        (item, new) => *item = new,
    }
}

fn comp_json(value: &CompValue) -> Value {
    match value {
        CompValue::Str(s) => Value::String(s.clone()),
        CompValue::Bool(b) => Value::Bool(*b),
        CompValue::Null => Value::Null,
        CompValue::Number(n) => n
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
    }
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
