//! Accounts whose powers end with them: active-only admins, access tokens only,
//! erasure on delete, self-service delete, and the address route add-email points at.

use integration_tests::http::{Event, Reply};
use serde_json::json;
use user_service::api::{delete_account, find_user_by_email, get_email, get_profile, set_user_status};
use user_service::domain::{UserId, UserStatus};

use crate::handler_support::*;

/// No item holds Ada's addresses, and nothing in her partition holds her names or phone.
async fn assert_erased(app: &user_service::App, addresses: &[&str]) {
    let items = integration_tests::invariants::scan(app.store.client(), &app.store.config().table_name).await;
    let everything = format!("{items:?}");
    for address in addresses {
        assert!(!everything.contains(address), "{address} is still stored");
    }
    let partition = format!("USER#{ADA}");
    let hers: Vec<_> = items
        .iter()
        .filter(|i| user_service::keys::key_string(i, "PK") == Some(partition.as_str()))
        .collect();
    assert_eq!(hers.len(), 1, "only the erased profile stays: {hers:?}");
    let profile = format!("{hers:?}");
    for personal in ["Ada", "Lovelace", "+14155550100", "@"] {
        assert!(!profile.contains(personal), "{personal} is still in the profile");
    }
    assert_invariants(app).await;
}

#[tokio::test]
async fn get_email_is_where_add_email_points() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    sign_up(&app, ADMIN, "grace@example.com").await;
    let id = add(&app, ADA, "ada.work@example.com").await;
    let get = |sub: &str, id: &str| Event::load("get-email").caller(sub).path_param("emailId", id);
    let reply = Reply::from(get_email::handle(&app, get(ADA, &id).request()).await.unwrap());
    reply.assert_status(200);
    assert_eq!(
        (reply.body["emailId"].as_str(), reply.body["email"].as_str()),
        (Some(id.as_str()), Some("ada.work@example.com"))
    );
    // Another user's id, an unknown id, a malformed one, no identity.
    Reply::from(get_email::handle(&app, get(ADMIN, &id).request()).await.unwrap()).assert_problem(404, "NOT_FOUND");
    let unknown = user_service::domain::EmailId::new().to_string();
    Reply::from(get_email::handle(&app, get(ADA, &unknown).request()).await.unwrap()).assert_problem(404, "NOT_FOUND");
    Reply::from(get_email::handle(&app, get(ADA, "USER#x").request()).await.unwrap())
        .assert_problem(400, "VALIDATION_FAILED");
    Reply::from(
        get_email::handle(&app, get(ADA, &id).anonymous().request())
            .await
            .unwrap(),
    )
    .assert_problem(401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn users_delete_their_own_account_with_if_match() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    add(&app, ADA, "ada.pending@example.com").await;
    let before = item_count(&app).await;
    let delete = |if_match: Option<&str>| {
        let event = Event::load("delete-account").without_header("if-match");
        match if_match {
            Some(tag) => event.header("if-match", tag),
            None => event,
        }
    };
    let call = |event: Event| {
        let app = &app;
        async move { Reply::from(delete_account::handle(app, event.request()).await.unwrap()) }
    };
    call(delete(None)).await.assert_problem(428, "PRECONDITION_REQUIRED");
    call(delete(Some("\"7\"")))
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    call(delete(Some("W/\"1\"")))
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    assert_eq!(item_count(&app).await, before, "a refused delete writes nothing");

    // A suspended account cannot close itself.
    let ada = UserId::parse(ADA).unwrap();
    app.store
        .set_status(&ada, UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    call(delete(Some("\"2\"")))
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.store
        .set_status(&ada, UserStatus::Active, app.clock.now())
        .await
        .unwrap();

    call(delete(Some("\"3\""))).await.assert_status(204);
    Reply::from(
        get_profile::handle(&app, Event::load("get-profile").request())
            .await
            .unwrap(),
    )
    .assert_problem(404, "NOT_FOUND");
    call(delete(Some("\"4\""))).await.assert_problem(404, "NOT_FOUND");
    assert_erased(&app, &["ada@example.com", "ada.pending@example.com"]).await;
    // The addresses are free again.
    sign_up(&app, ADMIN, "ada@example.com").await;
    assert_invariants(&app).await;
}

#[tokio::test]
async fn an_admin_delete_erases_the_profile() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    sign_up(&app, ADMIN, "grace@example.com").await;
    let event = Event::load("set-user-status").body(json!({ "status": "deleted" }));
    let reply = Reply::from(set_user_status::handle(&app, event.request()).await.unwrap());
    reply.assert_status(200);
    assert_eq!(reply.body["status"], "deleted");
    for erased in ["email", "firstName", "lastName", "phone"] {
        assert!(reply.body[erased].is_null(), "{erased}: {}", reply.body);
    }
    assert_erased(&app, &["ada@example.com"]).await;
}

#[tokio::test]
async fn admin_powers_end_with_the_admins_account() {
    let app = app().await;
    sign_up(&app, ADA, "ada@example.com").await;
    sign_up(&app, ADMIN, "grace@example.com").await;
    let find = |event: Event| {
        let app = &app;
        async move { Reply::from(find_user_by_email::handle(app, event.request()).await.unwrap()) }
    };
    let ask = || Event::load("find-user-by-email");
    find(ask()).await.assert_status(200);

    // Groups split on whitespace only: `ops,admin` is one group, not admin.
    find(ask().groups("[ops,admin]")).await.assert_problem(403, "FORBIDDEN");
    find(ask().groups("ops,admin")).await.assert_problem(403, "FORBIDDEN");
    find(ask().groups("[ops admin]")).await.assert_status(200);
    // ID tokens (and claims without a token_use) are refused.
    let mut id_token = ask();
    id_token.0["requestContext"]["authorizer"]["jwt"]["claims"]["token_use"] = json!("id");
    find(id_token).await.assert_problem(401, "UNAUTHENTICATED");
    let mut unknown = ask();
    unknown.0["requestContext"]["authorizer"]["jwt"]["claims"]
        .as_object_mut()
        .unwrap()
        .remove("token_use");
    find(unknown).await.assert_problem(401, "UNAUTHENTICATED");

    // A suspended admin can neither look users up nor re-activate itself.
    let admin = UserId::parse(ADMIN).unwrap();
    app.store
        .set_status(&admin, UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    find(ask()).await.assert_problem(403, "FORBIDDEN");
    let reactivate = Event::load("set-user-status")
        .path_param("userId", ADMIN)
        .body(json!({ "status": "active" }));
    Reply::from(set_user_status::handle(&app, reactivate.request()).await.unwrap()).assert_problem(403, "FORBIDDEN");
    let suspend_ada = Event::load("set-user-status").body(json!({ "status": "suspended" }));
    Reply::from(set_user_status::handle(&app, suspend_ada.request()).await.unwrap()).assert_problem(403, "FORBIDDEN");
    assert_eq!(
        app.store
            .get_profile(&UserId::parse(ADA).unwrap())
            .await
            .unwrap()
            .status,
        UserStatus::Active
    );
    // A deleted admin neither.
    app.store
        .set_status(&admin, UserStatus::Deleted, app.clock.now())
        .await
        .unwrap();
    find(ask()).await.assert_problem(403, "FORBIDDEN");
}
