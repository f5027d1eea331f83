//! PUT /scim/v2/Users/{userId}: SCIM: replaces a member's names, phone, addresses and active (If-Match honoured).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::scim, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SCIM_REPLACE_USER) }).await?;
    run(service_fn(|req| app.metered(scim::replace_user, req))).await
}
