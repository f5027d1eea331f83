//! ANY /scim/v2/{proxy+}: SCIM: /ServiceProviderConfig, /ResourceTypes and /Schemas; 404, 405 or 501 for anything else under /scim/v2.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::scim, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SCIM_DISCOVERY) }).await?;
    run(service_fn(|req| app.metered(scim::discovery, req))).await
}
