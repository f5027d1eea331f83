//! DELETE /me: Closes the caller's account (If-Match), releasing and erasing everything.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::delete_account, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::DELETE_ACCOUNT) }).await?;
    run(service_fn(|req| app.metered(delete_account::handle, req))).await
}
