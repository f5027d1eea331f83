//! DELETE /organizations/{orgId}/members/{userId}: Removes a member (owners and admins), or the caller leaves (their own userId); an organization keeps an owner.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::remove_member, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::REMOVE_MEMBER) }).await?;
    run(service_fn(|req| app.metered(remove_member::handle, req))).await
}
