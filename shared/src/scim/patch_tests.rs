use serde_json::json;

use super::*;
use crate::domain::EmailAddress;

fn ada() -> ScimUser {
    ScimUser::from_json(&json!({
        "userName": "ada@acme.example",
        "externalId": "e-1",
        "name": { "givenName": "Ada", "familyName": "Byron" },
        "emails": [{ "value": "ada@acme.example", "type": "work", "primary": true }],
        "active": true,
    }))
    .unwrap()
}

fn patched(operations: Value) -> Result<ScimUser, ScimError> {
    Patch::parse(&json!({ "schemas": [PATCH_SCHEMA], "Operations": operations }))?.apply(&ada())
}

fn addresses(user: &ScimUser) -> Vec<(&str, bool)> {
    user.emails.iter().map(|e| (e.value.as_str(), e.primary)).collect()
}

#[test]
fn entra_ids_default_shape() {
    // Capitalised operations, a filtered path, and "False" as a string.
    let user = patched(json!([
        { "op": "Replace", "path": "emails[type eq \"work\"].value", "value": "ada.lovelace@acme.example" },
        { "op": "Replace", "path": "name.familyName", "value": "Lovelace" },
        { "op": "Add", "path": "phoneNumbers[type eq \"mobile\"].value", "value": "+14155550100" },
        { "op": "Replace", "path": "active", "value": "False" },
        { "op": "Add", "path": "title", "value": "Countess" },
        { "op": "Replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "value": "Engines" },
    ]))
    .unwrap();
    assert_eq!(addresses(&user), [("ada.lovelace@acme.example", true)]);
    assert_eq!(user.family_name.unwrap().as_str(), "Lovelace");
    assert_eq!(user.phone.unwrap().as_str(), "+14155550100");
    assert!(!user.active);
}

#[test]
fn entra_ids_aad_opt_scim_062020_shape() {
    // Lowercase operations, booleans, and a path-less replace with dotted keys.
    let user = patched(json!([
        { "op": "replace", "value": { "active": false, "name.givenName": "Augusta", "emails[type eq \"work\"].value": "augusta@acme.example" } },
    ]))
    .unwrap();
    assert_eq!(user.given_name.as_ref().unwrap().as_str(), "Augusta");
    assert_eq!(addresses(&user), [("augusta@acme.example", true)]);
    assert!(!user.active);
    // And back.
    let user = patched(json!([{ "op": "replace", "value": { "active": true } }])).unwrap();
    assert!(user.active);
}

#[test]
fn oktas_deactivation() {
    let user = patched(json!([{ "op": "replace", "value": { "active": false } }])).unwrap();
    assert!(!user.active);
    assert_eq!(user.user_name, ada().user_name);
}

#[test]
fn addresses_are_added_switched_and_removed() {
    let user = patched(json!([
        { "op": "add", "path": "emails", "value": [{ "value": "second@acme.example", "type": "work" }] },
    ]))
    .unwrap();
    assert_eq!(
        addresses(&user),
        [("ada@acme.example", true), ("second@acme.example", false)]
    );
    // Made primary: the former primary is not any more.
    let user = patched(json!([
        { "op": "add", "path": "emails", "value": [{ "value": "second@acme.example", "primary": true }] },
    ]))
    .unwrap();
    assert_eq!(
        addresses(&user),
        [("ada@acme.example", false), ("second@acme.example", true)]
    );
    let user = patched(json!([
        { "op": "add", "path": "emails", "value": [{ "value": "second@acme.example" }] },
        { "op": "remove", "path": "emails[value eq \"ADA@acme.example\"]" },
    ]))
    .unwrap();
    assert_eq!(addresses(&user), [("second@acme.example", false)]);
    assert_eq!(
        user.primary_email(),
        Some(&EmailAddress::parse("second@acme.example").unwrap())
    );
    // A remove that names values.
    let user = patched(json!([
        { "op": "add", "path": "emails", "value": [{ "value": "second@acme.example" }] },
        { "op": "Remove", "path": "emails", "value": [{ "value": "second@acme.example" }] },
    ]))
    .unwrap();
    assert_eq!(addresses(&user), [("ada@acme.example", true)]);
}

#[test]
fn removals() {
    let user = patched(json!([{ "op": "remove", "path": "name.givenName" }, { "op": "remove", "path": "externalId" }]))
        .unwrap();
    assert_eq!(user.given_name, None);
    assert_eq!(user.external_id, None);
    assert!(user.family_name.is_some());
    let err = patched(json!([{ "op": "remove", "path": "emails[value eq \"nobody@acme.example\"]" }])).unwrap_err();
    assert_eq!(err.scim_type, Some(ScimType::NoTarget));
    let err = patched(json!([{ "op": "remove", "path": "userName" }])).unwrap_err();
    assert_eq!(err.detail, "`userName` is required: replace it, never remove it");
    let err = patched(json!([{ "op": "remove" }])).unwrap_err();
    assert_eq!(err.scim_type, Some(ScimType::NoTarget));
}

#[test]
fn malformed_requests_are_refused_with_their_type() {
    let cases = [
        (json!({ "Operations": [] }), ScimType::InvalidSyntax),
        (
            json!({ "schemas": ["urn:x"], "Operations": [{ "op": "add", "path": "title", "value": "x" }] }),
            ScimType::InvalidSyntax,
        ),
        (
            json!({ "Operations": [{ "op": "move", "path": "title", "value": "x" }] }),
            ScimType::InvalidSyntax,
        ),
        (
            json!({ "Operations": [{ "op": "add", "path": "nonsense", "value": "x" }] }),
            ScimType::InvalidPath,
        ),
        (
            json!({ "Operations": [{ "op": "add", "path": "emails[type co \"w\"].value", "value": "x" }] }),
            ScimType::InvalidPath,
        ),
        (
            json!({ "Operations": [{ "op": "add", "path": "userName" }] }),
            ScimType::InvalidValue,
        ),
        (
            json!({ "Operations": [{ "op": "add", "path": "active", "value": "perhaps" }] }),
            ScimType::InvalidValue,
        ),
        (
            json!({ "Operations": [{ "op": "add", "path": "urn:example:other:x", "value": 1 }] }),
            ScimType::InvalidPath,
        ),
        (
            json!({ "Operations": [{ "op": "replace", "value": "not an object" }] }),
            ScimType::InvalidValue,
        ),
        (
            json!({ "Operations": [{ "op": "replace", "path": "userName[type eq \"x\"]", "value": "a" }] }),
            ScimType::InvalidPath,
        ),
    ];
    for (body, expected) in cases {
        let err = Patch::parse(&body)
            .and_then(|patch| patch.apply(&ada()))
            .expect_err(&body.to_string());
        assert_eq!((err.status, err.scim_type), (400, Some(expected)), "{body}: {err}");
    }
    let many: Vec<Value> = (0..=MAX_OPERATIONS)
        .map(|_| json!({ "op": "add", "path": "title", "value": "x" }))
        .collect();
    assert!(Patch::parse(&json!({ "Operations": many })).is_err());
}

#[test]
fn a_required_attribute_is_replaced_never_removed() {
    // `emails` too, where the account has no other address: the update's plan says (provision).
    for path in ["active", "userName"] {
        let refused = patched(json!([{ "op": "remove", "path": path }])).unwrap_err();
        assert_eq!(refused.scim_type, Some(ScimType::Mutability), "{path}");
        assert_eq!(refused.status, 400);
    }
    // One address of two may go; the last may go only as another comes.
    let two = patched(json!([{ "op": "add", "path": "emails", "value": [{ "value": "al@acme.example" }] }])).unwrap();
    assert_eq!(two.emails.len(), 2);
    let moved = patched(json!([
        { "op": "remove", "path": "emails[value eq \"ada@acme.example\"]" },
        { "op": "add", "path": "emails", "value": [{ "value": "al@acme.example", "primary": true }] },
    ]))
    .unwrap();
    assert_eq!(addresses(&moved), [("al@acme.example", true)]);
    // The names are not required: removed, they are unassigned.
    assert!(
        patched(json!([{ "op": "remove", "path": "name" }]))
            .unwrap()
            .given_name
            .is_none()
    );
}
