//! erases the profiles of users who deleted themselves in Cognito.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::reconcile_users, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::RECONCILE_USERS) }).await?;
    run(service_fn(|event| app.metered(reconcile_users::handle, event))).await
}
