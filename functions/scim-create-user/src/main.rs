//! POST /scim/v2/Users: SCIM: makes a member: a new account (Cognito and the table) or an existing one linked by its address.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::scim, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SCIM_CREATE_USER) }).await?;
    run(service_fn(|req| app.metered(scim::create_user, req))).await
}
