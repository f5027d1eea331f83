//! GET /organizations/{orgId}/scim-tokens: Lists an organization's live SCIM tokens: names, makers, creation and last-use times (owners and admins).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::list_scim_tokens, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::LIST_SCIM_TOKENS) }).await?;
    run(service_fn(|req| app.metered(list_scim_tokens::handle, req))).await
}
