//! POST /recovery: Takes an account back from a switch of its primary address, with the link mailed to the former address.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::recover_account, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::RECOVER_ACCOUNT) }).await?;
    run(service_fn(|req| app.metered(recover_account::handle, req))).await
}
