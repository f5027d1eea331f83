//! GET /organizations/{orgId}: Returns an organization to its members, with the caller's role.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::get_organization, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::GET_ORGANIZATION) }).await?;
    run(service_fn(|req| app.metered(get_organization::handle, req))).await
}
