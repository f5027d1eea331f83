//! checks a pending user's legacy password at their first sign-in.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::migrate_user, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::MIGRATE_USER) }).await?;
    run(service_fn(|event| app.metered(migrate_user::handle, event))).await
}
