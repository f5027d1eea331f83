//! DELETE /organizations/{orgId}/domains/{domain}: Removes a domain from an organization; its claim is free at once (owners and admins).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::remove_domain, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::REMOVE_DOMAIN) }).await?;
    run(service_fn(|req| app.metered(remove_domain::handle, req))).await
}
