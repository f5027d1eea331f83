//! POST /organizations: Creates an organization (its slug claimed deployment-wide); the caller is its owner.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::create_organization, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::CREATE_ORGANIZATION) }).await?;
    run(service_fn(|req| app.metered(create_organization::handle, req))).await
}
