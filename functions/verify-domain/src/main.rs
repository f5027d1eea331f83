//! POST /organizations/{orgId}/domains/{domain}/verification: Verifies an organization's domain with one of the caller's own addresses at it, verified by code (owners and admins).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::verify_domain, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::VERIFY_DOMAIN) }).await?;
    run(service_fn(|req| app.metered(verify_domain::handle, req))).await
}
