//! GET /scim/v2/Users: SCIM: finds members by userName, externalId, address or id, or lists the directory's members by startIndex.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::scim, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SCIM_LIST_USERS) }).await?;
    run(service_fn(|req| app.metered(scim::list_users, req))).await
}
