//! GET /me/account: the caller's profile and addresses, from one Query.
use lambda_http::{Error, service_fn};
use user_service::{App, Clients, api::routes::get_account, catalog, http::lambda::run};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::GET_ACCOUNT) }).await?;
    run(service_fn(|req| app.metered(get_account::handle, req))).await
}
