//! template.yaml, parsed with CloudFormation's tags (`!Ref`, `!GetAtt`, `!Sub`)
//! kept. The routes the local API serves come from here, never from a second list.

use std::path::Path;

use serde_norway::Value;

#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("reading {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("parsing {path}")]
    Parse {
        path: String,
        #[source]
        source: serde_norway::Error,
    },
}

pub fn load(path: &Path) -> Result<Value, TemplateError> {
    let text = std::fs::read_to_string(path).map_err(|source| TemplateError::Read {
        path: path.display().to_string(),
        source,
    })?;
    serde_norway::from_str(&text).map_err(|source| TemplateError::Parse {
        path: path.display().to_string(),
        source,
    })
}

pub fn resources(template: &Value) -> Vec<(String, &Value)> {
    template["Resources"]
        .as_mapping()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str().unwrap_or_default().to_owned(), v))
        .collect()
}

pub fn of_type<'a>(template: &'a Value, kind: &str) -> Vec<(String, &'a Value)> {
    resources(template)
        .into_iter()
        .filter(|(_, r)| r["Type"].as_str() == Some(kind))
        .collect()
}

/// A tagged value's tag and inner value (`!GetAtt Table.Arn` → ("GetAtt", "Table.Arn")).
pub fn tagged(value: &Value) -> Option<(String, &Value)> {
    match value {
        Value::Tagged(t) => Some((t.tag.to_string().trim_start_matches('!').to_owned(), &t.value)),
        _ => None,
    }
}

/// The string in a scalar or in a tagged scalar (`!Sub "…"`).
pub fn text(value: &Value) -> String {
    match tagged(value) {
        Some((_, inner)) => text(inner),
        None => value
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("{value:?}")),
    }
}

/// The HTTP routes template.yaml declares: (function binary, method, path).
/// The routes the template opens to anyone (`Auth: Authorizer: NONE`): method and path.
pub fn public_routes(template: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (_, function) in of_type(template, "AWS::Serverless::Function") {
        if let Some(events) = function["Properties"]["Events"].as_mapping() {
            for event in events.values().filter(|e| e["Type"].as_str() == Some("HttpApi")) {
                let p = &event["Properties"];
                if p["Auth"]["Authorizer"].as_str() == Some("NONE") {
                    out.push((text(&p["Method"]).to_uppercase(), text(&p["Path"])));
                }
            }
        }
    }
    out
}

pub fn http_routes(template: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (_, function) in of_type(template, "AWS::Serverless::Function") {
        let binary = text(&function["Metadata"]["BuildProperties"]["Binary"]);
        if let Some(events) = function["Properties"]["Events"].as_mapping() {
            for event in events.values().filter(|e| e["Type"].as_str() == Some("HttpApi")) {
                let p = &event["Properties"];
                out.push((binary.clone(), text(&p["Method"]).to_uppercase(), text(&p["Path"])));
            }
        }
    }
    out.sort();
    out
}
