//! The daily sweep: profiles of users who deleted themselves in Cognito are erased.
use lambda_runtime::{Error, run, service_fn};
use user_service::{App, Clients, api::events::reconcile_users, catalog};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let app = App::from_env(const { Clients::of(&catalog::RECONCILE_USERS) }).await?;
    run(service_fn(|event| app.metered(reconcile_users::handle, event))).await
}
