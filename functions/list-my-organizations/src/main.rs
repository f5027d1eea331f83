//! GET /me/organizations: Lists the organizations the caller belongs to, with their role in each.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::list_my_organizations, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::LIST_MY_ORGANIZATIONS) }).await?;
    run(service_fn(|req| app.metered(list_my_organizations::handle, req))).await
}
