//! the repair path; a profile for a confirmed user who has none.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::post_authentication, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::POST_AUTHENTICATION) }).await?;
    run(service_fn(|event| app.metered(post_authentication::handle, event))).await
}
