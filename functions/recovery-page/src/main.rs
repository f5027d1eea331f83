//! GET /recovery: The page a recovery link opens: it asks, then posts the link's token.
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::recovery_page, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::RECOVERY_PAGE) }).await?;
    run(service_fn(|req| app.metered(recovery_page::handle, req))).await
}
