//! openapi.yaml is a well-formed OpenAPI 3.1 document: every reference
//! resolves, every operation is named once, every path template's parameters
//! are declared, and only the parts of 3.1 this service uses appear.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::{deref, operations, resolve, spec};

fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("$ref", Value::String(r)) => out.push(r),
                    _ => refs(inner, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| refs(i, out)),
        _ => {}
    }
}

#[test]
fn it_is_an_openapi_3_1_document() {
    let spec = spec();
    let version = spec["openapi"].as_str().expect("openapi: <version>");
    assert!(version.starts_with("3.1."), "OpenAPI 3.1, not {version}");
    assert!(spec["info"]["title"].is_string() && spec["info"]["version"].is_string());
    let allowed: BTreeSet<&str> = [
        "openapi",
        "info",
        "servers",
        "paths",
        "components",
        "security",
        "tags",
        "jsonSchemaDialect",
        "webhooks",
        "externalDocs",
    ]
    .into();
    for key in spec.as_object().unwrap().keys() {
        assert!(
            allowed.contains(key.as_str()) || key.starts_with("x-"),
            "unknown top-level field {key}"
        );
    }
    let mut all = Vec::new();
    refs(&spec, &mut all);
    assert!(!all.is_empty());
    for reference in all {
        resolve(&spec, reference);
    }
}

#[test]
fn operations_are_named_once_and_answer_something() {
    let spec = spec();
    let mut ids = BTreeSet::new();
    for (method, path, op) in operations(&spec) {
        let id = op["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has an operationId"));
        assert!(ids.insert(id.to_owned()), "operationId {id} twice");
        let responses = op["responses"].as_object().expect("responses");
        assert!(
            responses.keys().any(|s| s.starts_with('2')),
            "{method} {path} documents its success"
        );
        for (status, response) in responses {
            let status: u16 = status
                .parse()
                .unwrap_or_else(|_| panic!("{method} {path}: status {status}"));
            assert!((100..600).contains(&status));
            assert!(
                deref(&spec, response)["description"].is_string(),
                "{method} {path} {status}"
            );
        }
    }
}

#[test]
fn path_templates_declare_their_parameters() {
    let spec = spec();
    for (path, item) in spec["paths"].as_object().unwrap() {
        let in_template: BTreeSet<String> = path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(str::to_owned)
            .collect();
        for (method, p, op) in operations(&spec).into_iter().filter(|(_, p, _)| p == path) {
            let declared: BTreeSet<String> = item["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .chain(op["parameters"].as_array().into_iter().flatten())
                .map(|param| deref(&spec, param))
                .filter(|param| param["in"] == "path")
                .inspect(|param| assert_eq!(param["required"], true, "{method} {p}: path parameters are required"))
                .map(|param| param["name"].as_str().unwrap().to_owned())
                .collect();
            assert_eq!(declared, in_template, "{method} {p}");
        }
    }
}

#[test]
fn links_name_operations_that_exist() {
    let spec = spec();
    let ids: BTreeSet<&str> = operations(&spec)
        .into_iter()
        .filter_map(|(_, _, op)| op["operationId"].as_str())
        .collect();
    let mut links = 0;
    for (_, _, op) in operations(&spec) {
        for response in op["responses"].as_object().unwrap().values() {
            for link in deref(&spec, response)["links"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(_, l)| l)
            {
                let target = link["operationId"].as_str().expect("links name an operationId");
                assert!(ids.contains(target), "link to {target}");
                links += 1;
            }
        }
    }
    assert!(links > 0, "POST /me/emails links to what its emailId opens");
}
