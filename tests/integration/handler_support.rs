//! Shared set-up for the handler tests: an App on a fresh table, users signed
//! up through the real post-confirmation handler, and requests from events/.

use integration_tests::ddb;
use integration_tests::events;
use integration_tests::http::{Event, Reply};
use lambda_runtime::{Context, LambdaEvent};
use serde_json::{Value, json};
use user_service::App;
use user_service::api::{add_email, post_confirmation};
use user_service::clock::Clock;

pub const ADA: &str = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";
pub const ADMIN: &str = "9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c";

pub async fn app() -> App {
    with_manual_clock(App::new(ddb::store().await))
}

pub async fn app_with(adjust: impl FnOnce(&mut user_service::config::StoreConfig)) -> App {
    with_manual_clock(App::new(ddb::store_with(adjust).await))
}

/// Handlers read the time from the App: a manual clock makes it move only when a
/// test says so (`app.clock.advance(seconds)`).
pub fn with_manual_clock(app: App) -> App {
    App {
        clock: Clock::manual(integration_tests::start_time()),
        ..app
    }
}

pub fn cognito_event(name: &str, sub: &str, email: &str) -> LambdaEvent<Value> {
    let mut event = events::load(name);
    event["userName"] = json!(sub);
    if event["request"]["userAttributes"].get("sub").is_some() {
        event["request"]["userAttributes"]["sub"] = json!(sub);
    }
    event["request"]["userAttributes"]["email"] = json!(email);
    LambdaEvent::new(event, Context::default())
}

/// Signs a user up the way Cognito would: a PostConfirmation delivery.
pub async fn sign_up(app: &App, sub: &str, email: &str) {
    post_confirmation::handle(app, cognito_event("post-confirmation", sub, email))
        .await
        .expect("sign-up succeeds");
}

/// Adds an address for `sub` and returns its emailId.
pub async fn add(app: &App, sub: &str, email: &str) -> String {
    let reply = Reply::from(
        add_email::handle(
            app,
            Event::load("add-email")
                .caller(sub)
                .body(json!({ "email": email }))
                .request(),
        )
        .await
        .unwrap(),
    );
    reply.assert_status(201);
    reply.body["emailId"].as_str().unwrap().to_owned()
}

pub async fn item_count(app: &App) -> usize {
    crate::common::item_count(&app.store).await
}

pub async fn assert_invariants(app: &App) {
    crate::common::assert_invariants(&app.store).await;
}

/// POST /me/emails/{emailId}/verify as `sub`.
pub async fn verify(app: &App, sub: &str, email_id: &str, code: &str) -> Reply {
    let event = Event::load("verify-email")
        .caller(sub)
        .path_param("emailId", email_id)
        .body(json!({ "code": code }));
    Reply::from(
        user_service::api::verify_email::handle(app, event.request())
            .await
            .unwrap(),
    )
}

/// POST /me/emails/{emailId}/verification as `sub`.
pub async fn resend(app: &App, sub: &str, email_id: &str) -> Reply {
    let event = Event::load("send-verification")
        .caller(sub)
        .path_param("emailId", email_id);
    Reply::from(
        user_service::api::send_verification::handle(app, event.request())
            .await
            .unwrap(),
    )
}
