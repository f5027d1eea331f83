//! PUT /organizations/{orgId}/members/{userId}/role: Changes a member's role (owners and admins; owners alone make or unmake owners; an organization keeps one).
//! Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this file.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::set_member_role, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::SET_MEMBER_ROLE) }).await?;
    run(service_fn(|req| app.metered(set_member_role::handle, req))).await
}
