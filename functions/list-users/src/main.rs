//! GET /admin/user-list: Admins only: lists users oldest first, by status, a page at a time.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::list_users, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::LIST_USERS) }).await?;
    run(service_fn(|req| app.metered(list_users::handle, req))).await
}
