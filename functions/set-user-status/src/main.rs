//! PUT /admin/users/{userId}/status: Admins only: sets a user's status.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::set_user_status, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SET_USER_STATUS) }).await?;
    run(service_fn(|req| app.metered(set_user_status::handle, req))).await
}
