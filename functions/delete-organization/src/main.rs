//! DELETE /organizations/{orgId}: Deletes an organization (owners; If-Match): gone at once to readers, its members removed after.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::delete_organization, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::DELETE_ORGANIZATION) }).await?;
    run(service_fn(|req| app.metered(delete_organization::handle, req))).await
}
