//! puts a domain event on the stack's event bus for every change of a profile, an address, an organization or a membership.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::publish_events, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::PUBLISH_EVENTS) }).await?;
    run(service_fn(|event| app.metered(publish_events::handle, event))).await
}
