//! The document's schemas are what the handlers serialize: real domain values
//! and real problem responses, serialized by the code the handlers use, are
//! checked against them (types, required and unknown fields, enums, bounds).
//! Patterns and formats are checked live by schemathesis.

use serde_json::{Value, json};
use user_service::StoreError;
use user_service::domain::{
    Account, AccountExport, ClaimExport, DirectoryAttribute, DirectoryExport, DirectoryNameExport,
    EXPORT_FORMAT_VERSION, Email, EmailAddress, EmailExport, EmailId, LimitExport, LimitKind, PendingVerification,
    PersonName, Phone, Profile, ProfileExport, Timestamp, UserId, UserStatus,
};
use user_service::http::problem::Problem;

use crate::{deref, spec};

fn kind_matches(kind: &str, value: &Value) -> bool {
    match kind {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        other => panic!("unknown type {other}"),
    }
}

/// Why `value` does not match `schema`, if it does not.
fn check(spec: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let schema = deref(spec, schema);
    if let Some(options) = schema["oneOf"].as_array() {
        let matching = options.iter().filter(|o| check(spec, o, value, at).is_ok()).count();
        if matching != 1 {
            return Err(format!("{at}: {value} matches {matching} of oneOf"));
        }
    }
    let kinds: Vec<&str> = match &schema["type"] {
        Value::String(kind) => vec![kind],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if !kinds.is_empty() && !kinds.iter().any(|k| kind_matches(k, value)) {
        return Err(format!("{at}: {value} is not {kinds:?}"));
    }
    if let Some(options) = schema["enum"].as_array()
        && !options.contains(value)
    {
        return Err(format!("{at}: {value} is not one of {options:?}"));
    }
    if let Some(text) = value.as_str() {
        let chars = text.chars().count() as u64;
        if schema["minLength"].as_u64().is_some_and(|min| chars < min)
            || schema["maxLength"].as_u64().is_some_and(|max| chars > max)
        {
            return Err(format!("{at}: {text:?} breaks the length bounds"));
        }
    }
    if let Some(n) = value.as_i64()
        && (schema["minimum"].as_i64().is_some_and(|min| n < min)
            || schema["maximum"].as_i64().is_some_and(|max| n > max))
    {
        return Err(format!("{at}: {n} is out of bounds"));
    }
    if let Some(object) = value.as_object() {
        for required in schema["required"].as_array().into_iter().flatten() {
            let name = required.as_str().unwrap();
            if !object.contains_key(name) {
                return Err(format!("{at}: {name} is required"));
            }
        }
        for (name, inner) in object {
            match schema["properties"].get(name) {
                Some(property) => check(spec, property, inner, &format!("{at}.{name}"))?,
                None if schema["additionalProperties"] == false => {
                    return Err(format!("{at}: {name} is not in the schema"));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(schema)) = (value.as_array(), schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(spec, schema, item, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

fn assert_matches(schema_name: &str, value: &Value) {
    let spec = spec();
    let schema = &spec["components"]["schemas"][schema_name];
    assert!(schema.is_object(), "no schema {schema_name}");
    if let Err(why) = check(&spec, schema, value, schema_name) {
        panic!("{why}\n{value:#}");
    }
}

fn profile(deleted: bool) -> Profile {
    let now = Timestamp::now();
    Profile {
        user_id: UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap(),
        email: (!deleted).then(|| EmailAddress::parse("Ada@Example.com").unwrap()),
        first_name: (!deleted).then(|| PersonName::parse("Ada").unwrap()),
        last_name: (!deleted).then(|| PersonName::parse(&"é".repeat(100)).unwrap()),
        phone: (!deleted).then(|| Phone::parse("+14155550100").unwrap()),
        status: if deleted {
            UserStatus::Deleted
        } else {
            UserStatus::Active
        },
        version: 3,
        created_at: now,
        updated_at: now,
        email_count: 1,
    }
}

fn email(verified: bool) -> Email {
    let now = Timestamp::now();
    Email {
        email_id: EmailId::new(),
        email: EmailAddress::parse("ada@bücher.example").unwrap(),
        is_primary: verified,
        is_verified: verified,
        verified_at: verified.then_some(now),
        created_at: now,
    }
}

#[test]
fn profiles_as_the_handlers_serialize_them() {
    for deleted in [false, true] {
        assert_matches("Profile", &serde_json::to_value(profile(deleted)).unwrap());
    }
}

#[test]
fn emails_accounts_and_lists_as_the_handlers_serialize_them() {
    for verified in [false, true] {
        assert_matches("Email", &serde_json::to_value(email(verified)).unwrap());
    }
    let account = Account {
        profile: profile(false),
        emails: vec![email(true), email(false)],
    };
    assert_matches("Account", &serde_json::to_value(&account).unwrap());
    // list-emails and check-email build their bodies with json!: the same shapes here.
    assert_matches("EmailList", &json!({ "emails": account.emails }));
    let address = EmailAddress::parse("ada@example.com").unwrap();
    assert_matches("Availability", &json!({ "email": address, "available": true }));
}

/// An export with every field set, and one with every field that can be null null.
fn export(full: bool) -> AccountExport {
    let now = Timestamp::now();
    let p = profile(false);
    AccountExport {
        format_version: EXPORT_FORMAT_VERSION,
        exported_at: now,
        user_id: p.user_id.clone(),
        profile: ProfileExport {
            profile: Profile {
                first_name: p.first_name.clone().filter(|_| full),
                last_name: p.last_name.clone().filter(|_| full),
                phone: p.phone.clone().filter(|_| full),
                status: if full {
                    UserStatus::Active
                } else {
                    UserStatus::Suspended
                },
                ..p.clone()
            },
            email_count: 2,
            cognito_email: p.email.filter(|_| full),
            sync_requested_at: full.then_some(now),
        },
        emails: vec![EmailExport {
            email: email(full),
            canonical_email: full.then(|| "ada@example.com".to_owned()),
            primary_version: full.then_some(2),
            pending_verification: full.then_some(PendingVerification {
                code_sent_at: Some(now),
                code_expires_at: Some(now),
                wrong_attempts: 1,
                attempts_left: 4,
            }),
            claim: full.then_some(ClaimExport {
                expires_at: Some(now),
                held: true,
            }),
        }],
        limits: [
            LimitKind::CodesSent,
            LimitKind::CodesSentToAnAddress,
            LimitKind::WrongCodes,
            LimitKind::AnAddress,
            LimitKind::AvailabilityChecks,
            LimitKind::Exports,
        ]
        .into_iter()
        .map(|kind| LimitExport {
            kind,
            events: vec![now],
            in_window: 1,
            clears_at: full.then_some(now),
            first_added_at: full.then_some(now),
        })
        .collect(),
        switches: vec![user_service::domain::SwitchExport {
            version: 3,
            former_email: EmailAddress::parse("ada.old@example.com").unwrap(),
            changed_at: now,
            recoverable_until: now,
            links_mailed: 1,
        }]
        .into_iter()
        .filter(|_| full)
        .collect(),
        recoveries: vec![user_service::domain::RecoveryExport {
            undone_version: 3,
            version: 4,
            recovered_at: now,
        }]
        .into_iter()
        .filter(|_| full)
        .collect(),
        memberships: vec![user_service::domain::MembershipExport {
            org_id: user_service::domain::OrgId::new(),
            role: user_service::domain::Role::Admin,
            joined_at: now,
            suspended: full,
            directory: full.then(|| DirectoryExport {
                user_name: "Ada@Corp.example".to_owned(),
                external_id: Some("00u1".to_owned()),
                provisioned: true,
                claimed_names: vec![
                    DirectoryNameExport {
                        attribute: DirectoryAttribute::UserName,
                        value: "ada@corp.example".to_owned(),
                    },
                    DirectoryNameExport {
                        attribute: DirectoryAttribute::ExternalId,
                        value: "00u1".to_owned(),
                    },
                ],
            }),
        }],
        invitations: vec![user_service::domain::InvitationExport {
            invitation_id: user_service::domain::InvitationId::from_bytes([1; 16]),
            org_id: user_service::domain::OrgId::new(),
            email: EmailAddress::parse("ada@example.com").unwrap(),
            role: user_service::domain::Role::Member,
            sent_at: now,
            expires_at: now,
        }]
        .into_iter()
        .filter(|_| full)
        .collect(),
    }
}

#[test]
fn exports_as_the_handler_serializes_them() {
    let spec = spec();
    // The writer's side of the rule: the schema lets readers meet properties
    // they do not know, but the service writes none it does not declare.
    let closed = closed(&spec["components"]["schemas"]["AccountExport"]);
    for full in [true, false] {
        let value = serde_json::to_value(export(full)).unwrap();
        assert_matches("AccountExport", &value);
        if let Err(why) = check(&spec, &closed, &value, "AccountExport") {
            panic!("{why}\n{value:#}");
        }
    }
}

/// `schema` with every object closed to properties it does not declare.
fn closed(schema: &Value) -> Value {
    match schema {
        Value::Object(fields) => {
            let mut out: serde_json::Map<String, Value> = fields.iter().map(|(k, v)| (k.clone(), closed(v))).collect();
            if fields.contains_key("properties") {
                out.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(closed).collect()),
        other => other.clone(),
    }
}

/// The schema of the export's format `version`, as published in schemas/export/.
fn export_schema(version: u32) -> Value {
    let path = integration_tests::workspace_root().join(format!("schemas/export/account.v{version}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The document's export schema is the current version's file, the one
/// the export's readers are given.
#[test]
fn the_export_schema_is_the_published_one() {
    let mut published = export_schema(EXPORT_FORMAT_VERSION);
    let fields = published.as_object_mut().unwrap();
    for name in ["$id", "$schema", "title"] {
        fields.remove(name);
    }
    assert_eq!(spec()["components"]["schemas"]["AccountExport"], published);
}

/// Why `value` fails `schema` (JSON Schema 2020-12; formats are the
/// integration suite's, on real exports), if it does.
fn schema_errors(schema: &Value, value: &Value) -> Vec<String> {
    jsonschema::options()
        .build(schema)
        .unwrap()
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// Version 1's schema is the text published before `switches`,
/// `recoveries`, `memberships` and `invitations` were added (commit 59f0872,
/// git blob 1e82155), byte for byte: a reader who validates version 1
/// documents with it keeps working, whatever later versions do.
#[test]
fn version_1_of_the_export_stays_as_published() {
    use sha2::Digest;
    let path = integration_tests::workspace_root().join("schemas/export/account.v1.json");
    let bytes = std::fs::read(path).unwrap();
    let digest: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        digest, "d0aff2faf9b40e6d8f3ccff167b2c5b8e75afaa5092cc45ebd377d347823cb4d",
        "schemas/export/account.v1.json changed: a published version never does; make a new one"
    );
    let v1 = export_schema(1);
    assert_eq!(v1["properties"]["formatVersion"]["const"], 1);
    let fields: Vec<&str> = v1["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        fields,
        ["formatVersion", "exportedAt", "userId", "profile", "emails", "limits"]
    );
}

/// The rule the export's readers are given: a document names its version,
/// every version's schema stays published, and a reader ignores properties
/// it does not know, so a version may gain optional ones without breaking
/// anyone. What breaks a reader (v1's closed objects meeting v2's fields) is
/// a new version, which a v1 reader sees in `formatVersion`.
#[test]
fn the_export_names_its_version_and_readers_ignore_what_they_do_not_know() {
    let current = export_schema(EXPORT_FORMAT_VERSION);
    assert_eq!(current["properties"]["formatVersion"]["const"], EXPORT_FORMAT_VERSION);
    assert_eq!(
        current["$id"],
        format!("https://user-service.example/schemas/export/account.v{EXPORT_FORMAT_VERSION}.json")
    );
    // Every version stays published, and no other schema sits beside them.
    let mut files: Vec<String> = std::fs::read_dir(integration_tests::workspace_root().join("schemas/export"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let versions: Vec<String> = (1..=EXPORT_FORMAT_VERSION)
        .map(|v| format!("account.v{v}.json"))
        .collect();
    assert_eq!(files, versions);

    // No object of the current version forbids what it does not declare.
    fn forbids_unknown(schema: &Value, at: &str, found: &mut Vec<String>) {
        match schema {
            Value::Object(fields) => {
                for name in ["additionalProperties", "unevaluatedProperties"] {
                    if fields.get(name).is_some_and(|v| v != &Value::Bool(true)) {
                        found.push(format!("{at}.{name}"));
                    }
                }
                for (name, inner) in fields {
                    forbids_unknown(inner, &format!("{at}.{name}"), found);
                }
            }
            Value::Array(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, inner)| forbids_unknown(inner, &format!("{at}[{i}]"), found)),
            _ => {}
        }
    }
    let mut forbidding = Vec::new();
    forbids_unknown(&current, "", &mut forbidding);
    assert!(forbidding.is_empty(), "{forbidding:?}");

    let mut document = serde_json::to_value(export(true)).unwrap();
    let errors = schema_errors(&current, &document);
    assert!(errors.is_empty(), "{errors:?}");
    // A later release of this version adds properties, at every level: a
    // reader holding today's schema still accepts the document.
    document["addedLater"] = json!({ "any": "thing" });
    document["profile"]["addedLater"] = json!(1);
    document["emails"][0]["addedLater"] = json!(null);
    document["memberships"][0]["addedLater"] = json!([]);
    document["memberships"][0]["directory"]["addedLater"] = json!("x");
    document["memberships"][0]["directory"]["claimedNames"][0]["addedLater"] = json!(true);
    let errors = schema_errors(&current, &document);
    assert!(errors.is_empty(), "a reader ignores what it does not know: {errors:?}");
    // What would break a reader is not an addition: a required field gone.
    document.as_object_mut().unwrap().remove("memberships");
    assert!(!schema_errors(&current, &document).is_empty());

    // A reader of version 1 is told by the version, not by a stray field.
    let v1 = export_schema(1);
    let errors = schema_errors(&v1, &serde_json::to_value(export(true)).unwrap());
    assert!(
        errors.iter().any(|e| e.contains("/formatVersion")),
        "a v1 reader sees the version: {errors:?}"
    );
}

#[test]
fn problems_as_the_handlers_answer_them() {
    let mut problems = vec![
        Problem::unauthenticated(),
        Problem::forbidden(),
        Problem::validation("firstName", "must be 1 to 100 characters"),
        Problem::payload_too_large(16 * 1024),
        Problem::unsupported_media_type(),
        Problem::precondition_required(),
        Problem::weak_etag(),
        Problem::internal(),
        Problem::unavailable(),
    ];
    problems.extend(
        [
            StoreError::VerificationFailed { attempts_left: 0 },
            StoreError::TooManyAttempts { retry_after_secs: 10 },
            StoreError::VersionMismatch { current: 7 },
            StoreError::EmailTaken,
        ]
        .iter()
        .map(Problem::from),
    );
    for problem in problems {
        let response = problem.into_response();
        assert_eq!(response.headers()["content-type"], "application/problem+json");
        let body: Value = serde_json::from_slice(response.body().as_ref()).unwrap();
        assert_matches("Problem", &body);
        assert_eq!(body["status"], response.status().as_u16());
    }
}
