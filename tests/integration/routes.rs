//! Every HTTP route has all its pieces, and a test that names what is missing
//! when one does not: its module in the routes' list (`api::routes::ROUTES`,
//! which the test app, the fuzz target, the contract and the hostile suites
//! walk), its event file, its operation in openapi.yaml, and a contract and an
//! example that fit its path.

use std::collections::BTreeSet;

use integration_tests::events;
use integration_tests::workspace_root;
use user_service::api::routes::{self, ROUTES};
use user_service::catalog::{FUNCTIONS, Trigger};

/// Each `{name}` of a path.
fn path_parameters(path: &str) -> BTreeSet<&str> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .collect()
}

#[test]
fn every_http_route_has_its_module_its_event_its_operation_and_a_contract_that_fits() {
    let openapi: serde_json::Value =
        serde_norway::from_str(&std::fs::read_to_string(workspace_root().join("openapi.yaml")).expect("openapi.yaml"))
            .expect("openapi.yaml parses");
    let mut missing = Vec::new();
    for function in FUNCTIONS {
        let Trigger::Http { method, path, .. } = function.trigger else {
            continue;
        };
        let name = function.name;
        if function.is_scim() {
            missing.extend(scim_route_pieces(function, method, path, &openapi));
            continue;
        }
        let Some(route) = routes::route_of(function) else {
            missing.push(format!(
                "{name}: no module in api::routes::ROUTES (write shared/src/api/routes/{}.rs, then `cargo xtask template`)",
                name.replace('-', "_")
            ));
            continue;
        };
        let event_file = events::events_dir().join(format!("{name}.json"));
        match std::fs::read_to_string(&event_file) {
            Err(_) => missing.push(format!("{name}: no event file events/{name}.json")),
            Ok(text) => {
                let event: serde_json::Value = serde_json::from_str(&text).expect("an event file is JSON");
                if event["routeKey"] != format!("{method} {path}") {
                    missing.push(format!("{name}: events/{name}.json is not an event of {method} {path}"));
                }
            }
        }
        if openapi["paths"][path][method.to_lowercase()].is_null() {
            missing.push(format!("{name}: openapi.yaml has no operation {method} {path}"));
        }
        let reads = route.reads();
        let declared: BTreeSet<&str> = reads.path.iter().copied().collect();
        if declared != path_parameters(path) {
            missing.push(format!(
                "{name}: its contract reads the path parameters {declared:?}; {path} has {:?}",
                path_parameters(path)
            ));
        }
        let example = route.example();
        let example_path: BTreeSet<&str> = example.path.iter().map(|(name, _)| *name).collect();
        if example_path != path_parameters(path) {
            missing.push(format!("{name}: its example fills {example_path:?} of {path}"));
        }
        if example.if_match != reads.if_match || example.body.is_some() != reads.json_body {
            missing.push(format!("{name}: its example and what it reads disagree"));
        }
        if example.query.iter().any(|(q, _)| !reads.query.contains(q)) {
            missing.push(format!("{name}: its example sends a query parameter it does not read"));
        }
    }
    assert!(missing.is_empty(), "routes missing a piece:\n{}", missing.join("\n"));
    let http = FUNCTIONS
        .iter()
        .filter(|f| matches!(f.trigger, Trigger::Http { .. }) && !f.is_scim())
        .count();
    assert_eq!(
        ROUTES.len(),
        http,
        "the routes' list is the catalog's HTTP functions, the SCIM ones aside"
    );
}

/// What a SCIM route lacks: its entry in `api::scim::ScimRoute`, its event
/// file, and its operations in openapi.yaml (a greedy route's, under its prefix).
fn scim_route_pieces(
    function: &user_service::catalog::Function,
    method: &str,
    path: &str,
    openapi: &serde_json::Value,
) -> Vec<String> {
    let name = function.name;
    let mut missing = Vec::new();
    if user_service::api::scim::ScimRoute::of(function).is_none() {
        missing.push(format!("{name}: no entry in api::scim::ScimRoute"));
    }
    match std::fs::read_to_string(events::events_dir().join(format!("{name}.json"))) {
        Err(_) => missing.push(format!("{name}: no event file events/{name}.json")),
        Ok(text) => {
            let event: serde_json::Value = serde_json::from_str(&text).expect("an event file is JSON");
            if event["routeKey"] != format!("{method} {path}") {
                missing.push(format!("{name}: events/{name}.json is not an event of {method} {path}"));
            }
        }
    }
    let documented = match path.strip_suffix("{proxy+}") {
        Some(prefix) => openapi["paths"].as_object().into_iter().flatten().any(|(p, item)| {
            p.starts_with(prefix)
                && item
                    .as_object()
                    .into_iter()
                    .flatten()
                    .any(|(_, op)| op["x-function"] == name)
        }),
        None => !openapi["paths"][path][method.to_lowercase()].is_null(),
    };
    if !documented {
        missing.push(format!("{name}: openapi.yaml has no operation of {method} {path}"));
    }
    missing
}
