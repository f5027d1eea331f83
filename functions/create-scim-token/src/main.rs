//! POST /organizations/{orgId}/scim-tokens: Makes a named SCIM token for an organization's identity provider, shown once (owners and admins).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::create_scim_token, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::CREATE_SCIM_TOKEN) }).await?;
    run(service_fn(|req| app.metered(create_scim_token::handle, req))).await
}
