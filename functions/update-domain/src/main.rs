//! PATCH /organizations/{orgId}/domains/{domain}: Sets how users at a verified domain meet the organization: none, suggest or invite (owners and admins).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::update_domain, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::UPDATE_DOMAIN) }).await?;
    run(service_fn(|req| app.metered(update_domain::handle, req))).await
}
