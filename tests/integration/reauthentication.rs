//! The changes that can hand an account to someone else (switching the
//! primary address, removing an address, deleting the account) need a recent
//! sign-in: the access token's `auth_time` within the window. A stolen token,
//! or one refreshed from a stolen refresh token, is refused with RFC 9470's
//! challenge, and nothing is written.

use integration_tests::logs::LogCapture;
use serde_json::json;
use user_service::App;
use user_service::clock::Clock;
use user_service::config::{ConfigError, REAUTHENTICATION_WINDOW_SECONDS};
use user_service::domain::{Timestamp, UserId};

use crate::handler_support::*;

/// The default window, as the problem and the challenge state it.
const WINDOW: i64 = 600;

/// Ada with a second, verified address; the app's clock stands still.
async fn ada_with_two_addresses() -> (TestApp, String, Timestamp) {
    let mut app = TestApp::spawn().await;
    let now = Timestamp::now();
    app.clock = Clock::manual(now);
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(ADA, "ada@example.com").await;
    let id = app.add_address(ADA, "ada.work@example.com").await;
    app.verify_email(ADA, &id, &logs.code_for(&id)).await.assert_status(200);
    (app, id, now)
}

/// `function`'s event as ADA, whose sign-in was `age` seconds before `now`;
/// the token itself was issued just now, as a refresh issues it.
fn signed_in_ago(function: &Function, now: Timestamp, age: i64) -> Event {
    Event::of(function).caller(ADA).signed_in_at(now.unix_seconds() - age)
}

fn assert_challenge(reply: &Reply) {
    reply.assert_problem(401, "REAUTHENTICATION_REQUIRED");
    assert_eq!(
        reply.header("www-authenticate"),
        Some(
            r#"Bearer error="insufficient_user_authentication", error_description="A more recent sign-in is required", max_age="600""#
        )
    );
    assert_eq!(reply.body["maxAge"], WINDOW);
}

#[tokio::test]
async fn an_old_sign_in_cannot_switch_remove_or_delete_and_nothing_is_written() {
    let (app, id, now) = ada_with_two_addresses().await;
    let ada = UserId::parse(ADA).unwrap();
    let before = app.store.get_account(&ada).await.unwrap();
    let items = app.item_count().await;

    let switch = signed_in_ago(&SET_PRIMARY_EMAIL, now, WINDOW + 1).body(json!({ "emailId": id }));
    assert_challenge(&app.send(&SET_PRIMARY_EMAIL, switch).await);
    let remove = signed_in_ago(&REMOVE_EMAIL, now, WINDOW + 1).path_param("emailId", &id);
    assert_challenge(&app.send(&REMOVE_EMAIL, remove).await);
    let delete = signed_in_ago(&DELETE_ACCOUNT, now, WINDOW + 1).header("if-match", "\"1\"");
    assert_challenge(&app.send(&DELETE_ACCOUNT, delete).await);
    // A token with no auth_time at all proves no sign-in.
    let bare = Event::of(&SET_PRIMARY_EMAIL)
        .caller(ADA)
        .without_auth_time()
        .body(json!({ "emailId": id }));
    assert_challenge(&app.send(&SET_PRIMARY_EMAIL, bare).await);

    assert_eq!(app.store.get_account(&ada).await.unwrap(), before);
    assert_eq!(app.item_count().await, items);
    app.assert_invariants().await;
}

#[tokio::test]
async fn the_window_holds_to_the_second_and_a_fresh_sign_in_goes_through() {
    let (app, id, now) = ada_with_two_addresses().await;
    let at_the_edge = signed_in_ago(&SET_PRIMARY_EMAIL, now, WINDOW).body(json!({ "emailId": id }));
    app.send(&SET_PRIMARY_EMAIL, at_the_edge).await.assert_status(200);

    // The same token a second later no longer may: the clock moved, not the token.
    app.clock.advance(1);
    let old = app.store.list_emails(&UserId::parse(ADA).unwrap()).await.unwrap();
    let former = old.iter().find(|e| !e.is_primary).unwrap().email_id.to_string();
    app.cognito_holds_primary(ADA).await;
    let late = Event::of(&REMOVE_EMAIL)
        .caller(ADA)
        .signed_in_at(now.unix_seconds() - WINDOW)
        .path_param("emailId", &former);
    assert_challenge(&app.send(&REMOVE_EMAIL, late).await);
    let fresh = signed_in_ago(&REMOVE_EMAIL, app.clock.now(), 0).path_param("emailId", &former);
    app.send(&REMOVE_EMAIL, fresh).await.assert_status(204);
    app.assert_invariants().await;
}

#[tokio::test]
async fn the_other_routes_take_an_old_sign_in() {
    let (app, _, now) = ada_with_two_addresses().await;
    let day_old = |f: &Function| signed_in_ago(f, now, 86_400);
    app.send(&GET_PROFILE, day_old(&GET_PROFILE)).await.assert_status(200);
    app.send(&GET_ACCOUNT, day_old(&GET_ACCOUNT)).await.assert_status(200);
    app.send(&EXPORT_ACCOUNT, day_old(&EXPORT_ACCOUNT))
        .await
        .assert_status(200);
    let add = day_old(&ADD_EMAIL).body(json!({ "email": "ada.home@example.com" }));
    app.send(&ADD_EMAIL, add).await.assert_status(201);
    let update = day_old(&UPDATE_PROFILE)
        .header("if-match", "\"1\"")
        .body(json!({ "firstName": "Augusta" }));
    app.send(&UPDATE_PROFILE, update).await.assert_status(200);
}

/// Who may not call a route learns that before being asked to sign in again:
/// an anonymous request is UNAUTHENTICATED, whatever its sign-in.
#[tokio::test]
async fn no_caller_is_unauthenticated_before_any_sign_in_is_weighed() {
    let (app, id, now) = ada_with_two_addresses().await;
    let anonymous = signed_in_ago(&SET_PRIMARY_EMAIL, now, WINDOW + 1)
        .anonymous()
        .body(json!({ "emailId": id }));
    app.send(&SET_PRIMARY_EMAIL, anonymous)
        .await
        .assert_problem(401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn the_window_is_a_setting_read_by_the_functions_that_need_it() {
    let deployed = |window: &'static str| {
        move |var: &str| match var {
            "TABLE_NAME" => Some("t".to_owned()),
            _ if var == REAUTHENTICATION_WINDOW_SECONDS.name() => Some(window.to_owned()),
            _ => None,
        }
    };
    let app = App::from_lookup(&SET_PRIMARY_EMAIL, deployed("120")).await.unwrap();
    assert_eq!(app.reauthentication_window.as_secs(), 120);
    for refused in ["59", "86401", "ten minutes"] {
        let err = App::from_lookup(&DELETE_ACCOUNT, deployed(refused))
            .await
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(&err, ConfigError::Invalid { name, .. } if *name == REAUTHENTICATION_WINDOW_SECONDS.name()),
            "{err}"
        );
    }
    // A function that needs no recent sign-in never reads it, so cannot fail on it.
    let app = App::from_lookup(&GET_PROFILE, deployed("ten minutes")).await.unwrap();
    assert_eq!(app.reauthentication_window.as_secs(), 600);
    let needing: Vec<&str> = FUNCTIONS
        .iter()
        .filter(|f| f.needs_recent_sign_in)
        .map(|f| f.name)
        .collect();
    assert_eq!(needing, ["set-primary-email", "remove-email", "delete-account"]);
}

/// The catalog is the one list: every HTTP route it marks asks an old sign-in
/// to sign in again, and no other route does, whoever calls it.
#[tokio::test]
async fn every_route_that_hands_over_an_account_and_only_those_asks_for_a_recent_sign_in() {
    let (app, _, now) = ada_with_two_addresses().await;
    for function in FUNCTIONS {
        let Trigger::Http { access, .. } = function.trigger else {
            continue;
        };
        let caller = if access == Access::Admin { ADMIN } else { ADA };
        let event = Event::of(function)
            .caller(caller)
            .signed_in_at(now.unix_seconds() - 86_400);
        let reply = app.send(function, event).await;
        let asked = reply.body["code"] == "REAUTHENTICATION_REQUIRED";
        assert_eq!(
            asked, function.needs_recent_sign_in,
            "{}: {}",
            function.name, reply.body
        );
        if asked {
            assert_challenge(&reply);
        }
    }
    app.assert_invariants().await;
}
