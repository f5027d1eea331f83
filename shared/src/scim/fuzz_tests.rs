//! Whatever a client sends, the SCIM readers answer with a value or a 400, never a panic.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{Filter, Patch, ScimUser};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-zA-Z .@\"\\[\\]]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("True"),
            Just("False"),
            Just("ada@acme.example"),
            Just("+14155550100")
        ]
        .prop_map(|s| json!(s)),
    ];
    let keys = prop_oneof![
        Just("userName"),
        Just("emails"),
        Just("value"),
        Just("primary"),
        Just("active"),
        Just("name"),
        Just("givenName"),
        Just("op"),
        Just("path"),
        Just("Operations"),
        Just("phoneNumbers"),
        Just("name.givenName"),
        Just("emails[type eq \"work\"].value"),
    ];
    leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..5)
                .prop_map(|fields| Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

proptest! {
    #[test]
    fn filters_never_panic(text in "[a-zA-Z0-9 .:\\[\\]()\"\\\\=']{0,80}") {
        if let Err(e) = Filter::parse(&text) {
            prop_assert_eq!(e.status, 400);
        }
    }

    #[test]
    fn users_and_patches_never_panic(user in json_value(), patch in json_value()) {
        if let Err(e) = ScimUser::from_json(&user) {
            prop_assert_eq!(e.status, 400);
        }
        let base = ScimUser::from_json(&json!({ "userName": "a", "emails": [{ "value": "a@acme.example", "primary": true }] })).unwrap();
        match Patch::parse(&patch).and_then(|p| p.apply(&base)) {
            Ok(_) => {}
            Err(e) => prop_assert_eq!(e.status, 400),
        }
        let wrapped = json!({ "Operations": [patch] });
        if let Err(e) = Patch::parse(&wrapped).and_then(|p| p.apply(&base)) {
            prop_assert_eq!(e.status, 400);
        }
    }
}
