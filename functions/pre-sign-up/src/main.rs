//! checks the address against the table.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::pre_sign_up, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::PRE_SIGN_UP) }).await?;
    run(service_fn(|event| app.metered(pre_sign_up::handle, event))).await
}
