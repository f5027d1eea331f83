//! The docs' tables that follow from the code: the route table of docs/api.md
//! (from the catalog), and docs/configuration.md's environment variables (from
//! `config::VARIABLES`) and stack parameters (from template.yaml's
//! `Parameters`). `cargo xtask docs --check` fails when one is stale.

use std::fmt::Write as _;

use serde::Deserialize;
use user_service::catalog::{Access, Function, Trigger};
use user_service::config::{Setting, VARIABLES};

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
        let access = match access {
            Access::User => "any user",
            Access::Admin => "admins",
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

/// The functions' environment variables: default, range and purpose.
pub(crate) fn variables() -> String {
    let mut out = String::from("| variable | default | range | what it is for |\n|---|---|---|---|\n");
    for v in VARIABLES {
        let (default, range) = match v.setting {
            Setting::Number(n) => (n.default.to_string(), format!("{} to {}", n.min, n.max)),
            Setting::Text(default) => (default.to_owned(), String::new()),
        };
        let _ = writeln!(out, "| `{}` | {default} | {range} | {} |", v.name, cell(v.about));
    }
    out
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Parameter {
    #[serde(default)]
    default: Option<serde_norway::Value>,
    #[serde(default)]
    allowed_values: Vec<serde_norway::Value>,
    #[serde(default)]
    min_value: Option<serde_norway::Value>,
    #[serde(default)]
    max_value: Option<serde_norway::Value>,
    #[serde(default)]
    allowed_pattern: Option<String>,
    #[serde(default)]
    description: String,
}

fn scalar(value: &serde_norway::Value) -> String {
    match value {
        serde_norway::Value::String(s) if s.is_empty() => "(empty)".to_owned(),
        serde_norway::Value::String(s) => s.clone(),
        other => serde_norway::to_string(other).unwrap_or_default().trim().to_owned(),
    }
}

/// The block of template.yaml under `Parameters:`, up to the next top-level key:
/// plain YAML (the rest of the template has CloudFormation's tags).
fn parameters_block(template: &str) -> Result<&str, String> {
    let start = template
        .find("\nParameters:\n")
        .ok_or("template.yaml has no Parameters")?
        + 1;
    let body = &template[start..];
    // The block ends where the next line starts a top-level key.
    let end = body
        .match_indices('\n')
        .map(|(at, _)| at + 1)
        .find(|&at| body[at..].starts_with(|c: char| c.is_ascii_alphabetic()))
        .unwrap_or(body.len());
    Ok(&body[..end])
}

/// The stack's parameters: default, allowed values and purpose, in template order.
pub(crate) fn parameters(template: &str) -> Result<String, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Block {
        parameters: serde_norway::Mapping,
    }
    let block: Block = serde_norway::from_str(parameters_block(template)?).map_err(|e| e.to_string())?;
    let mut out = String::from("| parameter | default | allowed | what it is for |\n|---|---|---|---|\n");
    for (name, value) in block.parameters {
        let name = scalar(&name);
        let p: Parameter = serde_norway::from_value(value).map_err(|e| format!("{name}: {e}"))?;
        let default = p.default.as_ref().map_or("(required)".to_owned(), scalar);
        let allowed = if !p.allowed_values.is_empty() {
            p.allowed_values.iter().map(scalar).collect::<Vec<_>>().join(", ")
        } else if p.min_value.is_some() || p.max_value.is_some() {
            let bound = |v: &Option<serde_norway::Value>| v.as_ref().map_or("…".to_owned(), scalar);
            format!("{} to {}", bound(&p.min_value), bound(&p.max_value))
        } else if p.allowed_pattern.is_some() {
            "see the template's pattern".to_owned()
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "| `{name}` | {} | {} | {} |",
            cell(&default),
            cell(&allowed),
            cell(&p.description)
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameters_block_ends_at_the_next_top_level_key() {
        let template = "AWSTemplateFormatVersion: x\nParameters:\n  A:\n    Type: String\n    Default: a\nConditions:\n  C: !Equals [1, 1]\n";
        let table = parameters(template).unwrap();
        assert!(table.contains("| `A` | a |"), "{table}");
        assert!(!table.contains("Conditions"));
    }

    #[test]
    fn every_http_route_and_variable_has_a_row() {
        let routes = routes(user_service::catalog::FUNCTIONS);
        assert!(routes.contains("| `GET /me` | get-profile | any user |"), "{routes}");
        assert_eq!(routes.lines().count(), 2 + 16);
        let variables = variables();
        assert!(
            variables.contains("| `MAX_EMAILS_PER_USER` | 10 | 1 to 49 |"),
            "{variables}"
        );
    }
}
