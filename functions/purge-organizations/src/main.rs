//! removes deleted organizations' members, a page at a time, then the organizations.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::purge_organizations, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::PURGE_ORGANIZATIONS) }).await?;
    run(service_fn(|event| app.metered(purge_organizations::handle, event))).await
}
