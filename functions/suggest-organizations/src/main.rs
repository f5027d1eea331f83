//! GET /me/organization-suggestions: Lists the organizations the caller may join by the verified domain of one of their verified addresses.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::suggest_organizations, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SUGGEST_ORGANIZATIONS) }).await?;
    run(service_fn(|req| app.metered(suggest_organizations::handle, req))).await
}
