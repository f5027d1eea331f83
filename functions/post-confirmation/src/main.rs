//! records the confirmed user in the table.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::post_confirmation, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::POST_CONFIRMATION) }).await?;
    run(service_fn(|event| app.metered(post_confirmation::handle, event))).await
}
