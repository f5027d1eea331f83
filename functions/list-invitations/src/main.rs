//! GET /organizations/{orgId}/invitations: Lists an organization's pending invitations, a page at a time (owners and admins).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::list_invitations, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::LIST_INVITATIONS) }).await?;
    run(service_fn(|req| app.metered(list_invitations::handle, req))).await
}
