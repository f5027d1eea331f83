//! POST /organizations/{orgId}/enrollment: Joins an organization whose verified domain invites its users, by the caller's verified address there (idempotent).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::join_by_domain, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::JOIN_BY_DOMAIN) }).await?;
    run(service_fn(|req| app.metered(join_by_domain::handle, req))).await
}
