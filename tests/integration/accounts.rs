//! Accounts whose powers end with them: active-only admins, access tokens only,
//! erasure on delete, self-service delete, and the address route add-email points at.

use serde_json::json;
use user_service::domain::{UserId, UserStatus};

use crate::handler_support::*;

/// No item holds Ada's addresses, and nothing in her partition holds her names or phone.
async fn assert_erased(app: &TestApp, addresses: &[&str]) {
    let items = integration_tests::invariants::scan(app.store.client(), &app.store.config().table_name).await;
    let everything = format!("{items:?}");
    for address in addresses {
        assert!(!everything.contains(address), "{address} is still stored");
    }
    let partition = format!("USER#{ADA}");
    let hers: Vec<_> = items
        .iter()
        .filter(|i| user_service::store::keys::key_string(i, "PK") == Some(partition.as_str()))
        .collect();
    assert_eq!(hers.len(), 1, "only the erased profile stays: {hers:?}");
    let profile = format!("{hers:?}");
    for personal in ["Ada", "Lovelace", "+14155550100", "@"] {
        assert!(!profile.contains(personal), "{personal} is still in the profile");
    }
    app.assert_invariants().await;
}

#[tokio::test]
async fn get_email_is_where_add_email_points() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let id = app.add_address(ADA, "ada.work@example.com").await;
    let reply = app.get_email(ADA, &id).await;
    reply.assert_status(200);
    assert_eq!(
        (reply.body["emailId"].as_str(), reply.body["email"].as_str()),
        (Some(id.as_str()), Some("ada.work@example.com"))
    );
    // Another user's id, an unknown id, a malformed one, no identity.
    app.get_email(ADMIN, &id).await.assert_problem(404, "NOT_FOUND");
    let unknown = user_service::domain::EmailId::new().to_string();
    app.get_email(ADA, &unknown).await.assert_problem(404, "NOT_FOUND");
    app.get_email(ADA, "USER#x")
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    let anonymous = Event::of(&GET_EMAIL).path_param("emailId", &id).anonymous();
    app.send(&GET_EMAIL, anonymous)
        .await
        .assert_problem(401, "UNAUTHENTICATED");
}

#[tokio::test]
async fn users_delete_their_own_account_with_if_match() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.add_address(ADA, "ada.pending@example.com").await;
    let before = app.item_count().await;
    let without_if_match = Event::of(&DELETE_ACCOUNT).caller(ADA).without_header("if-match");
    app.send(&DELETE_ACCOUNT, without_if_match)
        .await
        .assert_problem(428, "PRECONDITION_REQUIRED");
    app.delete_account(ADA, "\"7\"")
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    app.delete_account(ADA, "W/\"1\"")
        .await
        .assert_problem(412, "VERSION_MISMATCH");
    assert_eq!(app.item_count().await, before, "a refused delete writes nothing");

    // A suspended account cannot close itself.
    let ada = UserId::parse(ADA).unwrap();
    app.store
        .set_status(&ada, UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    app.delete_account(ADA, "\"2\"")
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.store
        .set_status(&ada, UserStatus::Active, app.clock.now())
        .await
        .unwrap();

    app.delete_account(ADA, "\"3\"").await.assert_status(204);
    app.get_profile(ADA).await.assert_problem(404, "NOT_FOUND");
    app.delete_account(ADA, "\"4\"").await.assert_problem(404, "NOT_FOUND");
    assert_erased(&app, &["ada@example.com", "ada.pending@example.com"]).await;
    // The addresses are free again.
    app.sign_up(ADMIN, "ada@example.com").await;
    app.assert_invariants().await;
}

#[tokio::test]
async fn an_admin_delete_erases_the_profile() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let reply = app.set_user_status(ADMIN, ADA, "deleted").await;
    reply.assert_status(200);
    assert_eq!(reply.body["status"], "deleted");
    for erased in ["email", "firstName", "lastName", "phone"] {
        assert!(reply.body[erased].is_null(), "{erased}: {}", reply.body);
    }
    assert_erased(&app, &["ada@example.com"]).await;
}

#[tokio::test]
async fn admin_powers_end_with_the_admins_account() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let find = |event: Event| app.send(&FIND_USER_BY_EMAIL, event);
    let ask = || Event::of(&FIND_USER_BY_EMAIL);
    app.find_user_by_email(ADMIN, "ada@example.com")
        .await
        .assert_status(200);

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
    app.find_user_by_email(ADMIN, "ada@example.com")
        .await
        .assert_problem(403, "FORBIDDEN");
    app.set_user_status(ADMIN, ADMIN, "active")
        .await
        .assert_problem(403, "FORBIDDEN");
    app.set_user_status(ADMIN, ADA, "suspended")
        .await
        .assert_problem(403, "FORBIDDEN");
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
    app.find_user_by_email(ADMIN, "ada@example.com")
        .await
        .assert_problem(403, "FORBIDDEN");
}

#[tokio::test]
async fn an_admin_delete_of_a_user_with_the_most_addresses_fits_one_transaction() {
    // 1 profile + 49 records + 49 claims + the acting admin's check: 100 items,
    // DynamoDB's limit for one TransactWriteItems.
    let cap = user_service::config::StoreConfig::MAX_EMAILS_CAP;
    let app = TestApp::spawn_with(|c| {
        c.max_emails_per_user = cap;
        // 48 adds in a day: past the default 30 codes a user may have sent.
        c.max_codes_per_user = cap;
    })
    .await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    for i in 1..cap {
        let code = user_service::verification::VerificationCode::parse("123456").unwrap();
        let email = user_service::domain::EmailAddress::parse(&format!("ada{i}@example.com")).unwrap();
        app.store.add_email(&ada, &email, &code, app.clock.now()).await.unwrap();
    }
    assert_eq!(app.store.list_emails(&ada).await.unwrap().len(), cap as usize);
    let reply = app.set_user_status(ADMIN, ADA, "deleted").await;
    reply.assert_status(200);
    assert_eq!(reply.body["status"], "deleted");
    app.assert_invariants().await;
    // Every address is free again.
    let reply = app.check_email(ADMIN, &format!("ada{}@example.com", cap - 1)).await;
    assert_eq!(reply.body["available"], true);
}
