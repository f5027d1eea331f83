//! POST /me/emails/{emailId}/verification: Sends a new verification code for one of the caller's addresses.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::send_verification, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SEND_VERIFICATION) }).await?;
    run(service_fn(|req| app.metered(send_verification::handle, req))).await
}
