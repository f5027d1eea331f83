//! GET /emails/availability: Tells whether an address is free to add (a per-user daily limit).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::check_email, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::CHECK_EMAIL) }).await?;
    run(service_fn(|req| app.metered(check_email::handle, req))).await
}
