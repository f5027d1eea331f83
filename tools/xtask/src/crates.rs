//! What a function needs besides its handler, written from the catalog: its
//! crate (`functions/<name>/`, the few lines every function has), and its line
//! in the handlers' lists (`api::routes`' modules and `ROUTES`, `api::events`'
//! modules). Adding a function is then its handler, its catalog entry and its
//! event; `cargo xtask template` writes these.

use std::fmt::Write as _;

use user_service::catalog::{Function, Trigger};

/// `add-email` → `add_email`.
pub(crate) fn module(function: &Function) -> String {
    function.name.replace('-', "_")
}

/// `add-email` → `AddEmail`: a route module's unit struct.
pub(crate) fn route_type(function: &Function) -> String {
    function
        .name
        .split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// An HTTP route of this API: a module of `api::routes`.
fn is_route(function: &Function) -> bool {
    is_http(function) && !function.is_scim()
}

/// Any HTTP route, a SCIM one (`api::scim`) included.
fn is_http(function: &Function) -> bool {
    matches!(function.trigger, Trigger::Http { .. })
}

/// The migration trigger checks legacy password hashes; no other function builds their code.
fn features(function: &Function) -> &'static [&'static str] {
    match function.trigger {
        Trigger::CognitoUserMigration => &["legacy-passwords"],
        _ => &[],
    }
}

/// `api::routes`' module lines and `ROUTES`, in the catalog's order.
pub(crate) fn routes(catalog: &[Function]) -> String {
    let routes: Vec<&Function> = catalog.iter().filter(|f| is_route(f)).collect();
    let mut modules: Vec<String> = routes.iter().map(|f| module(f)).collect();
    // rustfmt orders consecutive module lines by name.
    modules.sort();
    let mut out = String::new();
    for m in &modules {
        let _ = writeln!(out, "pub mod {m};");
    }
    out.push_str("\n/// Every HTTP route, in the catalog's order.\npub static ROUTES: &[&dyn Route] = &[\n");
    for f in &routes {
        let _ = writeln!(out, "    &{}::{},", module(f), route_type(f));
    }
    out.push_str("];\n");
    out
}

/// `api::events`' module lines: every function that is not an HTTP route.
pub(crate) fn events(catalog: &[Function]) -> String {
    let mut modules: Vec<(String, &Function)> =
        catalog.iter().filter(|f| !is_http(f)).map(|f| (module(f), f)).collect();
    modules.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::new();
    for (m, f) in modules {
        for feature in features(f) {
            let _ = writeln!(out, "#[cfg(feature = \"{feature}\")]");
        }
        let _ = writeln!(out, "pub mod {m};");
    }
    out
}

/// Every function's crate: its `Cargo.toml` and `src/main.rs`.
pub(crate) fn function_crates(catalog: &[Function]) -> Vec<(String, String)> {
    catalog
        .iter()
        .flat_map(|f| {
            [
                (format!("functions/{}/Cargo.toml", f.name), manifest(f)),
                (format!("functions/{}/src/main.rs", f.name), main(f)),
            ]
        })
        .collect()
}

fn manifest(f: &Function) -> String {
    let user_service = match features(f) {
        [] => "user-service.workspace = true".to_owned(),
        features => format!(
            "user-service = {{ workspace = true, features = [{}] }}",
            features
                .iter()
                .map(|f| format!("\"{f}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let runtime = if is_http(f) { "lambda_http" } else { "lambda_runtime" };
    format!(
        "# Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
[package]
name = \"{name}\"
version.workspace = true
edition.workspace = true
rust-version.workspace = true
license.workspace = true
publish.workspace = true

[[bin]]
name = \"{name}\"
test = false

[dependencies]
{user_service}
workspace-hack.workspace = true
{runtime}.workspace = true
tokio.workspace = true

[lints]
workspace = true
",
        name = f.name
    )
}

fn main(f: &Function) -> String {
    let constant = module(f).to_uppercase();
    let handler = module(f);
    let about = match f.trigger {
        Trigger::Http { method, path, .. } => format!("{method} {path}: {}", f.summary),
        _ => f.summary.to_owned(),
    };
    let (uses, serve) = if f.is_scim() {
        let entry = handler.trim_start_matches("scim_");
        (
            "use lambda_http::{Error, service_fn};\nuse user_service::{App, Clients, api::scim, catalog, http::lambda::run};".to_owned(),
            format!("run(service_fn(|req| app.metered(scim::{entry}, req))).await"),
        )
    } else if is_route(f) {
        (
            format!(
                "use lambda_http::{{Error, service_fn}};\nuse user_service::{{App, Clients, api::routes::{handler}, catalog, http::lambda::run}};"
            ),
            format!("run(service_fn(|req| app.metered({handler}::handle, req))).await"),
        )
    } else {
        (
            format!(
                "use lambda_runtime::{{Error, run, service_fn}};\nuse user_service::{{App, Clients, api::events::{handler}, catalog}};"
            ),
            format!("run(service_fn(|event| app.metered({handler}::handle, event))).await"),
        )
    };
    format!(
        "//! {about}
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
{uses}

#[tokio::main(flavor = \"current_thread\")]
async fn main() -> Result<(), Error> {{
    let app = App::from_env(const {{ Clients::of(&catalog::{constant}) }}).await?;
    {serve}
}}
"
    )
}

#[cfg(test)]
mod tests {
    use user_service::catalog::{ADD_EMAIL, FUNCTIONS, MIGRATE_USER, SCIM_GET_USER};

    use super::*;

    #[test]
    fn names_follow_the_function() {
        assert_eq!(module(&ADD_EMAIL), "add_email");
        assert_eq!(route_type(&ADD_EMAIL), "AddEmail");
        assert!(manifest(&MIGRATE_USER).contains("features = [\"legacy-passwords\"]"));
        assert!(main(&ADD_EMAIL).contains("api::routes::add_email"));
        assert!(main(&SCIM_GET_USER).contains("app.metered(scim::get_user, req)"));
        assert_eq!(function_crates(FUNCTIONS).len(), 2 * FUNCTIONS.len());
    }
}
