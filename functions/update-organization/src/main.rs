//! PATCH /organizations/{orgId}: Renames an organization (owners and admins; optimistic concurrency through If-Match).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::update_organization, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::UPDATE_ORGANIZATION) }).await?;
    run(service_fn(|req| app.metered(update_organization::handle, req))).await
}
