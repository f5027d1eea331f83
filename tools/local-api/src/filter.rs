//! Lambda's event filtering, for the equality patterns the template uses: a
//! pattern is an object whose leaves are arrays of accepted values. Anything
//! else (prefix, numeric, exists, …) is refused loudly rather than guessed at.

use serde_json::Value;

/// A pattern this reading of Lambda's filters does not cover.
#[derive(Debug, thiserror::Error)]
#[error("unsupported filter rule {0}: extend tools/local-api/src/filter.rs")]
pub struct Unsupported(String);

/// Parses a pattern and checks it uses only what [`matches`] reads: objects
/// whose leaves are arrays of plain values.
pub fn parse(pattern: &str) -> Result<Value, Unsupported> {
    let value: Value = serde_json::from_str(pattern).map_err(|e| Unsupported(format!("{pattern} ({e})")))?;
    check(&value)?;
    Ok(value)
}

fn check(pattern: &Value) -> Result<(), Unsupported> {
    let Some(fields) = pattern.as_object() else {
        return Err(Unsupported(pattern.to_string()));
    };
    for rule in fields.values() {
        match rule {
            Value::Object(_) => check(rule)?,
            Value::Array(accepted) if accepted.iter().all(|c| !c.is_object() && !c.is_array()) => {}
            other => return Err(Unsupported(other.to_string())),
        }
    }
    Ok(())
}

/// Whether `event` passes `pattern` (one [`parse`] accepted).
pub fn matches(pattern: &Value, event: &Value) -> bool {
    let Some(fields) = pattern.as_object() else {
        return false;
    };
    fields.iter().all(|(name, rule)| {
        let Some(value) = event.get(name) else {
            return false;
        };
        match rule {
            Value::Object(_) => matches(rule, value),
            Value::Array(accepted) => accepted.iter().any(|candidate| candidate == value),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_are_alternatives_and_objects_nest() {
        let pattern = json!({"eventName": ["MODIFY"], "dynamodb": {"NewImage": {"entityType": {"S": ["User"]}}}});
        let record =
            |name: &str, kind: &str| json!({"eventName": name, "dynamodb": {"NewImage": {"entityType": {"S": kind}}}});
        assert!(matches(&pattern, &record("MODIFY", "User")));
        assert!(!matches(&pattern, &record("INSERT", "User")));
        assert!(!matches(&pattern, &record("MODIFY", "Email")));
        assert!(!matches(
            &pattern,
            &json!({"eventName": "REMOVE", "dynamodb": {"OldImage": {}}})
        ));
    }

    #[test]
    fn what_it_cannot_read_is_refused_not_guessed() {
        assert!(parse(r#"{"eventName": ["MODIFY"], "dynamodb": {"Keys": {"SK": {"S": ["PROFILE"]}}}}"#).is_ok());
        assert!(parse(r#"{"dynamodb": {"Keys": {"SK": {"S": [{"prefix": "EMAIL#"}]}}}}"#).is_err());
        assert!(parse(r#"{"eventName": "MODIFY"}"#).is_err());
        assert!(parse("[]").is_err());
    }
}
