//! POST /organizations/{orgId}/invitations/{invitationId}/resend: Sends a pending invitation again with a new link, which ends the one before (owners and admins; counted).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::resend_invitation, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::RESEND_INVITATION) }).await?;
    run(service_fn(|req| app.metered(resend_invitation::handle, req))).await
}
