//! GET /me/export: Exports everything the service holds about the caller (a per-user daily limit).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::export_account, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::EXPORT_ACCOUNT) }).await?;
    run(service_fn(|req| app.metered(export_account::handle, req))).await
}
