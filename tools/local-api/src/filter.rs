//! Lambda's event filtering, for the equality patterns the template uses: a
//! pattern is an object whose leaves are arrays of accepted values. Anything
//! else (prefix, numeric, exists, …) is refused loudly rather than guessed at.

use serde_json::Value;

/// Whether `event` passes `pattern`.
pub fn matches(pattern: &Value, event: &Value) -> bool {
    let Some(fields) = pattern.as_object() else {
        panic!("a filter pattern is an object: {pattern}")
    };
    fields.iter().all(|(name, rule)| {
        let Some(value) = event.get(name) else {
            return false;
        };
        match rule {
            Value::Object(_) => matches(rule, value),
            Value::Array(accepted) => accepted.iter().any(|candidate| {
                assert!(
                    !candidate.is_object() && !candidate.is_array(),
                    "unsupported filter rule {candidate}: extend tests/src/filter.rs"
                );
                candidate == value
            }),
            other => panic!("a filter leaf is an array of values, not {other}"),
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
}
