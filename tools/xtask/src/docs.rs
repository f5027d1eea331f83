//! The docs' tables that follow from the code: the route table of docs/api.md
//! (from the catalog) and the event catalogue of docs/events.md (the settings'
//! tables are `settings`'). `cargo xtask docs --check` fails when one is stale.

use std::fmt::Write as _;

use user_service::catalog::{Access, Function, Trigger};

/// One row a Markdown table cell may hold: no line breaks, no bare `|`.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The HTTP routes: method and path, the function, who may call it, what it does.
pub(crate) fn routes(functions: &[Function]) -> String {
    let mut out = String::from("| method and path | function | access | what it does |\n|---|---|---|---|\n");
    for f in functions {
        let Trigger::Http { method, path, access } = f.trigger else {
            continue;
        };
        let access = match (access, f.needs_recent_sign_in) {
            (Access::User, false) => "any user",
            (Access::User, true) => "any user, [signed in recently](#recent-sign-in)",
            (Access::Admin, false) => "admins",
            (Access::Admin, true) => "admins, [signed in recently](#recent-sign-in)",
            (Access::Anyone, _) => "anyone, no token: the request carries its own proof",
            (Access::Directory, _) => "an organization's directory, by its [SCIM token](scim.md)",
        };
        let _ = writeln!(
            out,
            "| `{method} {path}` | {} | {access} | {} |",
            f.name,
            cell(f.summary)
        );
    }
    out
}

/// The stored items: each kind, its `entityType` and its keys.
pub(crate) fn items() -> String {
    use user_service::store::keys::ITEMS;
    let code = |k: &str| if k.is_empty() { String::new() } else { format!("`{k}`") };
    let mut out = String::from(
        "| item | entityType | PK | SK | GSI1PK / GSI1SK | GSI2PK / GSI2SK |\n|---|---|---|---|---|---|\n",
    );
    for i in ITEMS {
        let index =
            |keys: Option<(&str, &str)>| keys.map_or(String::new(), |(pk, sk)| format!("{} / {}", code(pk), code(sk)));
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} | {} |",
            i.item,
            i.entity_type,
            code(i.pk),
            code(i.sk),
            index(i.gsi1),
            index(i.gsi2)
        );
    }
    out
}

/// The event catalogue: each type, when it is published, and its `data`.
pub(crate) fn events() -> String {
    use user_service::events::{EventType, FieldType};
    let mut out = String::from("| type | published when | `data` |\n|---|---|---|\n");
    for kind in EventType::ALL {
        let fields: Vec<String> = kind
            .fields()
            .iter()
            .map(|f| {
                let kind = match f.kind {
                    FieldType::Integer => "integer",
                    FieldType::Boolean => "boolean",
                    FieldType::Time => "time",
                    FieldType::Uuid => "uuid",
                    FieldType::Status => "status",
                    FieldType::FieldNames => "field names",
                    FieldType::Address => "address",
                    FieldType::Role => "role",
                };
                let optional = if f.required { "" } else { ", optional" };
                format!("`{}` ({kind}{optional}): {}", f.name, f.about)
            })
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            kind.name(),
            cell(kind.about()),
            cell(&fields.join("; "))
        );
    }
    out
}

/// The JSON Schema files of the events, `schemas/events/<type>.json`, with their content.
pub(crate) fn event_schemas() -> Vec<(String, String)> {
    user_service::events::EventType::ALL
        .iter()
        .map(|kind| {
            let schema = sorted(user_service::events::schema(*kind));
            let text = serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n";
            (format!("schemas/events/{}.json", kind.name()), text)
        })
        .collect()
}

/// `value` with every object's keys in order: the same file whether or not
/// another crate of the build turns on serde_json's `preserve_order`.
pub(crate) fn sorted(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<(String, serde_json::Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        serde_json::Value::Array(items) => serde_json::Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_http_route_has_a_row() {
        let routes = routes(user_service::catalog::FUNCTIONS);
        assert!(routes.contains("| `GET /me` | get-profile | any user |"), "{routes}");
        assert_eq!(routes.lines().count(), 2 + 48);
    }
}
