//! The contract, openapi.yaml, against the code: its routes are the catalog's
//! and the template's, its security is each route's access, its problem codes
//! are the code's list, every status a handler can answer is documented, its
//! schemas are what the handlers serialize, and the local API serves it.
//! Schemathesis runs it against the live local API in the e2e suite (dev.rs).

// Test helpers may panic: a failed set-up must fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod document;
mod schemas;

use std::collections::{BTreeMap, BTreeSet};

use integration_tests::workspace_root;
use serde_json::{Value, json};
use user_service::StoreError;
use user_service::api::routes::{self, Route};
use user_service::catalog::{Access, FUNCTIONS, Function, Trigger};
use user_service::http::problem::{CODES, Problem};

/// openapi.yaml as JSON, as the local API serves it.
pub(crate) fn spec() -> Value {
    let text = std::fs::read_to_string(workspace_root().join("openapi.yaml")).expect("openapi.yaml at the root");
    serde_norway::from_str(&text).expect("openapi.yaml parses")
}

/// What a JSON pointer (`#/components/...`) names in the document.
pub(crate) fn resolve<'a>(spec: &'a Value, reference: &str) -> &'a Value {
    let pointer = reference.strip_prefix('#').expect("local $ref");
    spec.pointer(pointer)
        .unwrap_or_else(|| panic!("$ref {reference} names nothing"))
}

/// `value`, or what its `$ref` names (one level at a time, until none is left).
pub(crate) fn deref<'a>(spec: &'a Value, mut value: &'a Value) -> &'a Value {
    while let Some(reference) = value.get("$ref").and_then(Value::as_str) {
        value = resolve(spec, reference);
    }
    value
}

pub(crate) const METHODS: &[&str] = &["get", "put", "post", "delete", "patch", "head", "options", "trace"];

/// Every operation: (METHOD, path, operation).
pub(crate) fn operations(spec: &Value) -> Vec<(String, String, &Value)> {
    let mut out = Vec::new();
    for (path, item) in spec["paths"].as_object().expect("paths") {
        for method in METHODS {
            if let Some(op) = item.get(*method) {
                out.push((method.to_uppercase(), path.clone(), op));
            }
        }
    }
    out
}

pub(crate) fn http_routes() -> Vec<(&'static Function, &'static str, &'static str, Access)> {
    FUNCTIONS
        .iter()
        .filter_map(|f| match f.trigger {
            Trigger::Http { method, path, access } => Some((f, method, path, access)),
            _ => None,
        })
        .collect()
}

/// The routes answering this API's problems: every HTTP route but the SCIM ones.
pub(crate) fn problem_routes() -> Vec<(&'static Function, &'static str, &'static str, Access)> {
    http_routes().into_iter().filter(|(f, ..)| !f.is_scim()).collect()
}

/// The prefix of a route with API Gateway's greedy parameter (`/scim/v2/`
/// of `/scim/v2/{proxy+}`): the contract documents the operations under it
/// the function serves, not the route.
fn greedy_prefix(path: &str) -> Option<&str> {
    path.strip_suffix("{proxy+}")
}

fn operation<'a>(spec: &'a Value, method: &str, path: &str) -> &'a Value {
    &spec["paths"][path][method.to_lowercase()]
}

#[test]
fn paths_and_methods_are_the_catalogs_and_the_templates() {
    let spec = spec();
    let documented: BTreeSet<(String, String, String)> = operations(&spec)
        .into_iter()
        .map(|(method, path, op)| {
            let function = op["x-function"].as_str().unwrap_or_default().to_owned();
            (method, path, function)
        })
        .collect();
    let catalog: BTreeSet<(String, String, String)> = http_routes()
        .into_iter()
        .map(|(f, method, path, _)| (method.to_owned(), path.to_owned(), f.name.to_owned()))
        .collect();
    // A greedy route's function documents the operations it serves under its
    // prefix, and each of them is that route's.
    let mut documented = documented;
    for (f, _, path, _) in http_routes() {
        let Some(prefix) = greedy_prefix(path) else { continue };
        let served: Vec<_> = documented
            .iter()
            .filter(|(_, _, name)| name == f.name)
            .cloned()
            .collect();
        assert!(!served.is_empty(), "{}: no operation documented under {prefix}", f.name);
        for (method, path, name) in served {
            assert!(
                path.starts_with(prefix),
                "{name} documents {method} {path}, outside {prefix}"
            );
            documented.remove(&(method, path, name.clone()));
        }
        documented.insert(("ANY".to_owned(), path.to_owned(), f.name.to_owned()));
    }
    let template = local_api::template::load(&workspace_root().join("template.yaml")).unwrap();
    let deployed: BTreeSet<(String, String, String)> = local_api::template::http_routes(&template)
        .into_iter()
        .map(|(function, method, path)| (method, path, function))
        .collect();
    assert_eq!(
        documented, catalog,
        "openapi.yaml's operations are the catalog's HTTP routes"
    );
    assert_eq!(deployed, catalog, "template.yaml's HttpApi routes are the catalog's");
}

#[test]
fn security_is_each_routes_access() {
    let spec = spec();
    let scheme = &spec["components"]["securitySchemes"]["cognito"];
    assert_eq!(
        (
            scheme["type"].as_str(),
            scheme["scheme"].as_str(),
            scheme["bearerFormat"].as_str()
        ),
        (Some("http"), Some("bearer"), Some("JWT"))
    );
    assert_eq!(
        spec["security"],
        json!([{ "cognito": [] }]),
        "every route needs a token"
    );
    let template = local_api::template::load(&workspace_root().join("template.yaml")).unwrap();
    let admin_group = template["Parameters"]["AdminGroupName"]["Default"]
        .as_str()
        .expect("AdminGroupName has a default")
        .to_owned();
    for (f, method, path, access) in problem_routes() {
        let op = operation(&spec, method, path);
        // OpenAPI 3.1: the roles of a non-OAuth scheme are what the operation needs.
        let effective = op.get("security").unwrap_or(&spec["security"]);
        let expected = match access {
            Access::User => json!([{ "cognito": [] }]),
            Access::Admin => json!([{ "cognito": [admin_group.clone()] }]),
            Access::Anyone => json!([]),
            Access::Directory => unreachable!("not a problem route"),
        };
        assert_eq!(effective, &expected, "security of {method} {path} ({})", f.name);
        let codes = documented_codes(op);
        assert_eq!(
            codes.contains("FORBIDDEN"),
            access == Access::Admin,
            "FORBIDDEN is documented on exactly the admin routes ({method} {path})"
        );
    }
}

#[test]
fn the_problem_code_enum_is_the_codes_list() {
    let spec = spec();
    let listed: Vec<&str> = spec["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
        .as_array()
        .expect("Problem.code has an enum")
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(
        listed, CODES,
        "openapi.yaml's Problem.code enum is problem::CODES, in order"
    );
}

fn documented_codes(op: &Value) -> BTreeSet<String> {
    op["x-problem-codes"]
        .as_array()
        .unwrap_or_else(|| panic!("operation {} lists x-problem-codes", op["operationId"]))
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect()
}

/// Every problem the given handler can answer.
fn possible_problems(name: &str, access: Access) -> Vec<Problem> {
    let route = route(name);
    let reads = route.reads();
    let mut problems = vec![
        // Any route: a body marked base64 that does not decode.
        Problem::validation("body", "is marked base64 but does not decode"),
        Problem::from(&StoreError::Contended),
        Problem::from(&StoreError::Inconsistent("a bug")),
    ];
    match access {
        Access::Admin => problems.extend([
            Problem::unauthenticated(),
            Problem::forbidden(),
            Problem::forbidden_inactive_admin(),
        ]),
        // A recovery since the session signed in ends it, on every route of the user's own.
        Access::User => problems.extend([Problem::unauthenticated(), Problem::from(&StoreError::SessionRevoked)]),
        Access::Anyone | Access::Directory => {}
    }
    if reads.json_body {
        problems.extend([
            Problem::validation("body", "bad"),
            Problem::payload_too_large(1),
            Problem::unsupported_media_type(),
        ]);
    }
    if reads.parameter() {
        problems.push(Problem::validation("emailId", "bad"));
    }
    if reads.if_match {
        problems.extend([
            Problem::validation("If-Match", "bad"),
            Problem::precondition_required(),
            Problem::weak_etag(),
        ]);
    }
    problems.extend(route.refusals().iter().map(Problem::from));
    problems
}

/// The route module of the catalog entry `name`: what its handler can answer
/// is the module's own account of it (`Route::reads`, `Route::refusals`).
fn route(name: &str) -> &'static dyn Route {
    let function = user_service::catalog::by_name(name).unwrap_or_else(|| panic!("{name} is in the catalog"));
    routes::route_of(function).unwrap_or_else(|| panic!("{name}: an HTTP function no route module describes"))
}

fn response<'a>(spec: &'a Value, op: &'a Value, status: u16) -> Option<&'a Value> {
    op["responses"].get(status.to_string()).map(|r| deref(spec, r))
}

#[test]
fn every_status_a_handler_can_answer_is_documented() {
    let spec = spec();
    for (f, method, path, access) in problem_routes() {
        let op = operation(&spec, method, path);
        let documented = documented_codes(op);
        for code in &documented {
            assert!(CODES.contains(&code.as_str()), "{method} {path}: {code} is not a code");
        }
        for problem in possible_problems(f.name, access) {
            let route = format!("{method} {path} ({})", f.name);
            assert!(
                documented.contains(problem.code),
                "{route} can answer {} but x-problem-codes lacks it",
                problem.code
            );
            let status = problem.status.as_u16();
            let response = response(&spec, op, status)
                .unwrap_or_else(|| panic!("{route} can answer {status} ({}), undocumented", problem.code));
            assert!(
                response["content"].get("application/problem+json").is_some(),
                "{route}: {status} is documented without application/problem+json"
            );
            if problem.retry_after_secs.is_some() {
                assert!(
                    response["headers"].get("Retry-After").is_some(),
                    "{route}: {status} carries Retry-After, undocumented"
                );
            }
        }
        // API Gateway's own answers, before or instead of the function; no
        // authorizer runs on a route anyone may call.
        let gateway: &[u16] = if access == Access::Anyone {
            &[404, 413, 429, 500, 503]
        } else {
            &[401, 404, 413, 429, 500, 503]
        };
        for &status in gateway {
            let response = response(&spec, op, status)
                .unwrap_or_else(|| panic!("{method} {path}: API Gateway's {status} is undocumented"));
            let schema = &response["content"]["application/json"]["schema"];
            assert_eq!(
                schema["$ref"], "#/components/schemas/GatewayMessage",
                "{method} {path}: API Gateway's {status} is {{\"message\"}}"
            );
        }
        // No documented status that nothing answers.
        let possible: BTreeSet<u16> = possible_problems(f.name, access)
            .iter()
            .map(|p| p.status.as_u16())
            .chain(gateway.iter().copied())
            .collect();
        for (status, _) in op["responses"].as_object().unwrap() {
            let status: u16 = status.parse().expect("explicit statuses only");
            assert!(
                status < 400 || possible.contains(&status),
                "{method} {path} documents {status}, which it never answers"
            );
        }
    }
}

#[test]
fn headers_are_documented_where_handlers_set_them() {
    let spec = spec();
    let header = |method: &str, path: &str, status: u16, name: &str| -> Value {
        let op = operation(&spec, method, path);
        let response = response(&spec, op, status).unwrap();
        deref(&spec, &response["headers"][name]).clone()
    };
    // response::profile sets the ETag: every route answering a Profile.
    for (method, path) in [
        ("GET", "/me"),
        ("PATCH", "/me"),
        ("PUT", "/me/primary-email"),
        ("PUT", "/admin/users/{userId}/status"),
    ] {
        assert_eq!(header(method, path, 200, "ETag")["required"], true, "{method} {path}");
    }
    assert_eq!(header("POST", "/me/emails", 201, "Location")["required"], true);
    // The export is personal data: export_account sets Cache-Control: no-store.
    let cache = header("GET", "/me/export", 200, "Cache-Control");
    assert_eq!(
        (&cache["required"], &cache["schema"]["const"]),
        (&json!(true), &json!("no-store"))
    );
    // If-Match is required where the handler reads it.
    for (f, method, path, _) in problem_routes() {
        let op = operation(&spec, method, path);
        let if_match = op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| deref(&spec, p))
            .find(|p| p["name"] == "If-Match" && p["in"] == "header");
        let reads = route(f.name).reads();
        assert_eq!(
            if_match.map(|p| p["required"] == true),
            reads.if_match.then_some(true),
            "If-Match of {method} {path}"
        );
        assert_eq!(
            op.get("requestBody").map(|b| deref(&spec, b)["required"] == true),
            reads.json_body.then_some(true),
            "request body of {method} {path}"
        );
    }
}

/// Every operation a SCIM function serves: (function, METHOD, path, operation).
fn scim_operations(spec: &Value) -> Vec<(&'static Function, String, String, &Value)> {
    operations(spec)
        .into_iter()
        .filter_map(|(method, path, op)| {
            let f = user_service::catalog::by_name(op["x-function"].as_str()?)?;
            f.is_scim().then_some((f, method, path, op))
        })
        .collect()
}

#[test]
fn scim_operations_speak_scim_json_under_the_scim_token() {
    let spec = spec();
    let scheme = &spec["components"]["securitySchemes"]["scimToken"];
    assert_eq!(
        (scheme["type"].as_str(), scheme["scheme"].as_str()),
        (Some("http"), Some("bearer"))
    );
    let operations = scim_operations(&spec);
    let functions: BTreeSet<&str> = operations.iter().map(|(f, ..)| f.name).collect();
    let scim: BTreeSet<&str> = FUNCTIONS.iter().filter(|f| f.is_scim()).map(|f| f.name).collect();
    assert_eq!(functions, scim, "every SCIM function documents its operations");
    for (f, method, path, op) in operations {
        let route = format!("{method} {path} ({})", f.name);
        assert_eq!(op["security"], json!([{ "scimToken": [] }]), "{route}");
        assert!(
            op.get("x-problem-codes").is_none(),
            "{route}: a SCIM route answers no problems"
        );
        // What serve() answers before any handler: 401, 429, 500 and 503.
        for status in [401, 429, 500, 503] {
            assert!(response(&spec, op, status).is_some(), "{route}: {status} undocumented");
        }
        for (status, response) in op["responses"].as_object().unwrap() {
            let status: u16 = status.parse().unwrap();
            let response = deref(&spec, response);
            let content = &response["content"];
            if status == 204 {
                assert!(content.is_null(), "{route}: 204 has no body");
            } else if status == 413 && content.get("application/scim+json").is_none() {
                // API Gateway's own, over 10 MB, on a route that reads no body.
                assert!(content.get("application/json").is_some(), "{route}");
            } else {
                let schema = deref(&spec, &content["application/scim+json"]["schema"]);
                assert!(!schema.is_null(), "{route}: {status} is not application/scim+json");
                assert!(
                    content.get("application/problem+json").is_none(),
                    "{route}: {status} documents a problem"
                );
            }
        }
        let reads_user = path.ends_with("{userId}");
        if reads_user {
            assert!(response(&spec, op, 404).is_some(), "{route}: 404 for no such User");
        }
        if matches!(method.as_str(), "PUT" | "PATCH" | "DELETE") {
            assert!(response(&spec, op, 412).is_some(), "{route}: If-Match's 412");
        }
        if matches!(method.as_str(), "POST" | "PUT" | "PATCH") {
            assert_eq!(op["requestBody"]["required"], true, "{route}");
            assert!(response(&spec, op, 400).is_some(), "{route}: a body's 400");
            assert!(
                deref(&spec, &response(&spec, op, 413).unwrap()["content"])
                    .get("application/scim+json")
                    .is_some(),
                "{route}: a body over 16 KiB is a SCIM 413"
            );
        }
    }
}

#[test]
fn every_status_has_a_reason_to_be_there() {
    // Responses are keyed by explicit statuses; a `default` would hide an undocumented one.
    let spec = spec();
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    for (method, path, op) in operations(&spec) {
        for (status, _) in op["responses"].as_object().unwrap() {
            assert_ne!(status, "default", "{method} {path}");
            *statuses.entry(status.clone()).or_default() += 1;
        }
    }
    assert!(statuses.contains_key("401"));
}

#[test]
fn the_local_api_serves_the_document_at_openapi_json() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.spawn(local_api::openapi::serve_docs(listener));
    let response = reqwest::blocking::get(format!("{base}{}", local_api::openapi::PATH)).unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let served: Value = response.json().unwrap();
    assert_eq!(served, spec(), "the JSON served is openapi.yaml");
}
