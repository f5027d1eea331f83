//! POST /organizations/{orgId}/invitations: Invites an address to an organization in a role, by mail (owners and admins; owners alone invite owners; inviting again resends).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::create_invitation, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::CREATE_INVITATION) }).await?;
    run(service_fn(|req| app.metered(create_invitation::handle, req))).await
}
