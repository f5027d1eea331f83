//! The JSON Schema of each event type, written from the catalogue
//! (`cargo xtask docs` writes them to `schemas/events/`).

use serde_json::{Map, Value, json};

use super::catalogue::{EventType, FieldType, PROFILE_FIELDS};

/// The JSON Schema (2020-12) of an event of `kind`, envelope and `data`.
pub fn schema(kind: EventType) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in kind.fields() {
        let mut spec = match field.kind {
            FieldType::Integer => json!({ "type": "integer", "minimum": 1 }),
            FieldType::Boolean => json!({ "type": "boolean" }),
            FieldType::Time => json!({ "type": "string", "format": "date-time" }),
            FieldType::Uuid => json!({ "type": "string", "format": "uuid" }),
            FieldType::Status => json!({ "enum": ["active", "suspended", "deleted"] }),
            FieldType::FieldNames => json!({
                "type": "array",
                "items": { "enum": PROFILE_FIELDS },
                "minItems": 1,
                "uniqueItems": true
            }),
            FieldType::Address => json!({ "type": "string", "format": "email" }),
            FieldType::Role => json!({ "enum": ["owner", "admin", "member"] }),
        };
        spec["description"] = json!(field.about.replace('`', ""));
        properties.insert(field.name.to_owned(), spec);
        if field.required {
            required.push(field.name);
        }
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://user-service.example/schemas/events/{}.json", kind.name()),
        "title": kind.name(),
        "description": kind.about().replace('`', ""),
        "type": "object",
        "additionalProperties": false,
        "required": ["specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data"],
        "properties": {
            "specversion": { "const": "1.0" },
            "id": { "type": "string", "format": "uuid" },
            "source": { "type": "string", "minLength": 1 },
            "type": { "const": kind.name() },
            "subject": {
                "type": "string",
                "description": kind.subject(),
                "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
            },
            "time": { "type": "string", "format": "date-time" },
            "datacontenttype": { "const": "application/json" },
            "data": {
                "type": "object",
                "additionalProperties": false,
                "required": required,
                "properties": properties
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Role;
    use crate::domain::{PersonName, UserStatus};
    use crate::events::catalogue::Personal;
    use crate::events::derive::derive;
    use crate::events::envelope::envelope;
    use crate::events::fixtures::{email, member, organization, profile, recovered, t, user};

    #[test]
    fn every_event_fits_its_schema_and_the_schema_lists_exactly_its_fields() {
        let active = profile(1, UserStatus::Active);
        let mut renamed = profile(2, UserStatus::Active);
        renamed.last_name = Some(PersonName::parse("Lovelace").unwrap());
        let mut erased = profile(3, UserStatus::Deleted);
        erased.first_name = None;
        let changes = [
            (None, Some(user(active.clone()))),
            (Some(user(active.clone())), Some(user(renamed))),
            (
                Some(user(active.clone())),
                Some(user(profile(2, UserStatus::Suspended))),
            ),
            (
                Some(user(profile(2, UserStatus::Suspended))),
                Some(user(active.clone())),
            ),
            (Some(user(active.clone())), Some(user(erased))),
            (Some(user(active)), Some(recovered(profile(7, UserStatus::Active)))),
            (None, Some(email(false, false))),
            (Some(email(false, false)), Some(email(true, false))),
            (Some(email(true, false)), Some(email(true, true))),
            (Some(email(true, true)), None),
            (None, Some(organization(1, false, "Acme"))),
            (
                Some(organization(1, false, "Acme")),
                Some(organization(2, false, "Acme EU")),
            ),
            (
                Some(organization(2, false, "Acme EU")),
                Some(organization(3, true, "Acme EU")),
            ),
            (None, Some(member(Role::Owner))),
            (Some(member(Role::Member)), Some(member(Role::Admin))),
            (Some(member(Role::Admin)), None),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for personal in [Personal::None, Personal::Addresses] {
            for (old, new) in &changes {
                for event in derive(old.as_ref(), new.as_ref(), personal) {
                    seen.insert(event.kind);
                    let envelope = envelope(&event, "urn:user-service:test", "rec-1", t("2026-11-25T12:00:00.000Z"));
                    let schema = schema(event.kind);
                    let validator = jsonschema::options()
                        .should_validate_formats(true)
                        .build(&schema)
                        .unwrap();
                    let errors: Vec<String> = validator.iter_errors(&envelope).map(|e| e.to_string()).collect();
                    assert!(errors.is_empty(), "{}: {errors:?}", event.kind.name());
                }
            }
        }
        assert_eq!(seen.len(), EventType::ALL.len(), "every type is made by some change");
        // The schemas refuse what the catalogue does not list: a name in an update, a bad id.
        let mut update = derive(
            Some(&user(profile(1, UserStatus::Active))),
            Some(&user(profile(2, UserStatus::Suspended))),
            Personal::None,
        )
        .remove(0);
        update.data.insert("firstName".to_owned(), json!("Ada"));
        let sent = envelope(&update, "urn:user-service:test", "rec-1", t("2026-11-25T12:00:00.000Z"));
        assert!(!jsonschema::is_valid(&schema(update.kind), &sent));
        let mut bad_id = envelope(&update, "urn:user-service:test", "rec-1", t("2026-11-25T12:00:00.000Z"));
        bad_id["subject"] = json!("admin");
        assert!(!jsonschema::is_valid(&schema(update.kind), &bad_id));
    }
}
