//! POST /invitations/accept: Accepts an invitation with its mailed token: the caller, holding the address verified, joins in its role (idempotent).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::accept_invitation, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::ACCEPT_INVITATION) }).await?;
    run(service_fn(|req| app.metered(accept_invitation::handle, req))).await
}
