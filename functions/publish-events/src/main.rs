//! The table's stream: every change of a profile or an address becomes its domain events on the stack's bus.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::publish_events, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::PUBLISH_EVENTS) }).await?;
    run(service_fn(|event| app.metered(publish_events::handle, event))).await
}
