//! DELETE /organizations/{orgId}/invitations/{invitationId}: Revokes a pending invitation: its link works no more (owners and admins; owners alone revoke an owner's).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::revoke_invitation, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::REVOKE_INVITATION) }).await?;
    run(service_fn(|req| app.metered(revoke_invitation::handle, req))).await
}
