//! GET /me/account: the caller's profile and addresses, from one Query.
use lambda_http::{Error, run, service_fn};
use user_service::{App, api::get_account, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(&catalog::GET_ACCOUNT).await?;
    run(service_fn(|req| get_account::handle(&app, req))).await
}
