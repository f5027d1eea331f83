//! PUT /me/primary-email: Makes a verified address the caller's primary address.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::set_primary_email, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SET_PRIMARY_EMAIL) }).await?;
    run(service_fn(|req| app.metered(set_primary_email::handle, req))).await
}
