//! POST /organizations/{orgId}/domains: Claims a mail domain for an organization, pending until proved (owners and admins; one organization per domain; no consumer or disposable domain).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::claim_domain, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::CLAIM_DOMAIN) }).await?;
    run(service_fn(|req| app.metered(claim_domain::handle, req))).await
}
