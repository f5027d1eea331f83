//! `If-Match` as RFC 9110 (section 13.1.1) defines it, on every route that
//! reads it (PATCH /me and DELETE /me): a well-formed tag that matches nothing
//! is 412 with nothing written, `*` matches any current profile and none when
//! there is none, a list matches if any member does, and only a header that is
//! no entity tag at all is 400.

use serde_json::{Value, json};
use user_service::domain::UserId;

use crate::handler_support::*;

fn edit() -> Value {
    json!({"firstName": "Augusta"})
}

fn ada() -> UserId {
    UserId::parse(ADA).unwrap()
}

#[tokio::test]
async fn a_tag_that_names_no_version_fails_the_precondition_and_writes_nothing() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let before = app.item_count().await;
    for tag in [
        "\"0\"",
        "\"03\"",
        "\"\"",
        "\"abc\"",
        "\"99999999999999999999\"",
        "\"2\"",
        "W/\"1\"",
    ] {
        app.update_profile(ADA, tag, edit())
            .await
            .assert_problem(412, "VERSION_MISMATCH");
        app.delete_account(ADA, tag)
            .await
            .assert_problem(412, "VERSION_MISMATCH");
    }
    let profile = app.store.get_profile(&ada()).await.unwrap();
    assert_eq!((profile.version, profile.first_name.unwrap().as_str()), (1, "Ada"));
    assert_eq!(app.item_count().await, before);
}

#[tokio::test]
async fn a_list_matches_when_any_member_does() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    // A weak member never matches, even the current version's.
    let reply = app
        .send(
            &UPDATE_PROFILE,
            Event::of(&UPDATE_PROFILE)
                .caller(ADA)
                .header("if-match", "\"7\", W/\"1\"")
                .body(edit()),
        )
        .await;
    reply.assert_problem(412, "VERSION_MISMATCH");
    let reply = app.update_profile(ADA, "\"7\", \"1\"", edit()).await;
    reply.assert_status(200);
    assert_eq!(reply.header("etag"), Some("\"2\""));
    // Stale members do not matter while one matches; none matching is 412.
    app.update_profile(ADA, "\"1\", \"2\", \"3\"", json!({"lastName": "King"}))
        .await
        .assert_status(200);
    app.update_profile(ADA, "\"1\", \"2\"", edit())
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    app.delete_account(ADA, "\"1\", \"2\"")
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    app.delete_account(ADA, "\"9\", \"3\"").await.assert_status(204);
}

#[tokio::test]
async fn a_star_matches_any_current_profile_and_none_when_there_is_none() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let reply = app.update_profile(ADA, "*", edit()).await;
    reply.assert_status(200);
    assert_eq!(reply.header("etag"), Some("\"2\""));
    assert_eq!(reply.body["firstName"], "Augusta");
    // A suspended profile is current, and refuses the change as always.
    app.store
        .set_status(&ada(), user_service::domain::UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    app.update_profile(ADA, "*", edit())
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.delete_account(ADA, "*")
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.store
        .set_status(&ada(), user_service::domain::UserStatus::Active, app.clock.now())
        .await
        .unwrap();
    app.delete_account(ADA, "*").await.assert_status(204);
    // Deleted: no current profile, so `*` fails (412); a tag names a version
    // of nothing, and the caller is not found, as GET /me says.
    let before = app.item_count().await;
    app.update_profile(ADA, "*", edit())
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    app.delete_account(ADA, "*")
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    app.update_profile(ADA, "\"5\"", edit())
        .await
        .assert_problem(404, "NOT_FOUND");
    app.delete_account(ADA, "\"5\"").await.assert_problem(404, "NOT_FOUND");
    assert_eq!(app.item_count().await, before);
    // Nobody at all: the same.
    let nobody = uuid::Uuid::new_v4().to_string();
    app.update_profile(&nobody, "*", edit())
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    app.delete_account(&nobody, "*")
        .await
        .assert_problem(412, "VERSION_MISMATCH");
}

#[tokio::test]
async fn only_a_header_that_is_no_entity_tag_is_a_bad_request() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    for garbage in [
        "garbage",
        "1",
        "\"1",
        "1\"",
        "\"1\"x",
        "\"1\" \"2\"",
        "*, \"1\"",
        "W/1",
        "\"a b\"",
    ] {
        let reply = app.update_profile(ADA, garbage, edit()).await;
        reply.assert_problem(400, "VALIDATION_FAILED");
        assert_eq!(reply.body["field"], "If-Match", "{garbage}");
        app.delete_account(ADA, garbage)
            .await
            .assert_problem(400, "VALIDATION_FAILED");
    }
    let many = ["\"1\""; user_service::http::request::MAX_IF_MATCH_TAGS + 1].join(", ");
    app.update_profile(ADA, &many, edit())
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    // None of it wrote anything.
    assert_eq!(app.store.get_profile(&ada()).await.unwrap().version, 1);
}

#[tokio::test]
async fn a_star_edit_repeated_is_two_edits_and_a_stale_list_is_refused_after_it() {
    // Undo and redo: `*` opts out of the lost-update check, so each applies;
    // the tag read before them is stale after.
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.update_profile(ADA, "*", json!({"firstName": "B"}))
        .await
        .assert_status(200);
    app.update_profile(ADA, "*", json!({"firstName": "Ada"}))
        .await
        .assert_status(200);
    let reply = app.update_profile(ADA, "\"1\"", json!({"firstName": "C"})).await;
    reply.assert_problem(412, "VERSION_MISMATCH");
    assert_eq!(app.store.get_profile(&ada()).await.unwrap().version, 3);
}
