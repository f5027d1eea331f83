//! profile changes reach Cognito (email follows the primary; suspend, re-activate, delete; a recovery signs out and asks for a new password); notifies the old primary with its recovery link.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::sync_cognito_email, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SYNC_COGNITO_EMAIL) }).await?;
    run(service_fn(|event| app.metered(sync_cognito_email::handle, event))).await
}
