//! The document's schemas are what the handlers serialize: real domain values
//! and real problem responses, serialized by the code the handlers use, are
//! checked against them (types, required and unknown fields, enums, bounds).
//! Patterns and formats are checked live by schemathesis.

use serde_json::{Value, json};
use user_service::StoreError;
use user_service::domain::{
    Account, AccountExport, ClaimExport, Email, EmailAddress, EmailExport, EmailId, LimitExport, LimitKind,
    PendingVerification, PersonName, Phone, Profile, ProfileExport, Timestamp, UserId, UserStatus,
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
        format_version: user_service::domain::EXPORT_FORMAT_VERSION,
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
        }]
        .into_iter()
        .filter(|_| full)
        .collect(),
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
    for full in [true, false] {
        assert_matches("AccountExport", &serde_json::to_value(export(full)).unwrap());
    }
}

/// The document's export schema is schemas/export/account.json's, the one
/// the export's readers are given.
#[test]
fn the_export_schema_is_the_published_one() {
    let path = integration_tests::workspace_root().join("schemas/export/account.json");
    let mut published: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let fields = published.as_object_mut().unwrap();
    for name in ["$id", "$schema", "title"] {
        fields.remove(name);
    }
    assert_eq!(spec()["components"]["schemas"]["AccountExport"], published);
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
