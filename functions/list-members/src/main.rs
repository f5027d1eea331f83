//! GET /organizations/{orgId}/members: Lists an organization's members and their roles, a page at a time (owners and admins).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::list_members, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::LIST_MEMBERS) }).await?;
    run(service_fn(|req| app.metered(list_members::handle, req))).await
}
