//! GET /organizations/{orgId}/domains: Lists an organization's domains, their status and enrollment (owners and admins).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::list_domains, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::LIST_DOMAINS) }).await?;
    run(service_fn(|req| app.metered(list_domains::handle, req))).await
}
