//! GET /admin/users: Admins only: finds a user by email address.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::find_user_by_email, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::FIND_USER_BY_EMAIL) }).await?;
    run(service_fn(|req| app.metered(find_user_by_email::handle, req))).await
}
