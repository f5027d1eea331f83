//! Migration at sign-in: users the import left pending keep their passwords.
//! The migration trigger is invoked with Cognito's documented event shapes
//! (`events/migrate-user*.json`); what Cognito does between the trigger and
//! the user's first appearance (it creates the user with the attributes the
//! trigger returned, then fires PostAuthentication, or PostConfirmation after
//! a confirmed forgot-password) is played by the test with a fresh `sub`.

use integration_tests::events;
use serde_json::{Value, json};
use user_service::domain::{AdditionalEmail, EmailAddress, NewAccount, NewUser, PersonName, UserId, UserStatus};
use user_service::import::{HashAlgorithm, PasswordHash};
use user_service::store::items::LegacyPasswordItem;
use user_service::store::keys;
use user_service::store::{Deleter, MAX_WRONG_PASSWORDS};

use crate::handler_support::*;

const PASSWORD: &str = "correct horse battery staple";
/// A Cognito sub the migrated user gets (a v4 UUID, never a pending id).
const NEW_SUB: &str = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

/// Each format's hash of [`PASSWORD`], made by other implementations:
/// Python's `bcrypt`, `argon2-cffi`, hashlib's `scrypt` and `pbkdf2_hmac`.
fn hashes() -> Vec<PasswordHash> {
    [
        (
            HashAlgorithm::Bcrypt,
            "$2b$05$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG",
        ),
        (
            HashAlgorithm::Argon2id,
            "$argon2id$v=19$m=1024,t=1,p=1$ix66jRQPSm15Zm13MHCgmg$rWCsCsGRYFnSoTKqs6Jq8RUJjernZ7zW8KsHw+z79sI",
        ),
        (
            HashAlgorithm::Scrypt,
            "$scrypt$ln=10,r=8,p=1$bGVnYWN5LXNhbHQtMDAwMQ$a2OqTCFWthJhelfDUvfw5YddT/X5LMS5VAtRtLRK7/U",
        ),
        (
            HashAlgorithm::Pbkdf2Sha256,
            "$pbkdf2-sha256$i=1000,l=32$bGVnYWN5LXNhbHQtMDAwMQ$a0kZ4eid5Ymb9P5aXEoCN+0op94SVD22BrmQQ7j2EVw",
        ),
    ]
    .into_iter()
    .map(|(algorithm, hash)| PasswordHash::parse(algorithm, hash).unwrap())
    .collect()
}

fn address(raw: &str) -> EmailAddress {
    EmailAddress::parse(raw).unwrap()
}

/// Ada as the other system had her: a verified primary, a verified work
/// address, an unverified old one, her names.
fn ada() -> NewAccount {
    NewAccount {
        user: NewUser {
            user_id: UserId::new_pending(),
            email: address("ada@example.com"),
            first_name: Some(PersonName::parse("Ada").unwrap()),
            last_name: Some(PersonName::parse("Lovelace").unwrap()),
            phone: None,
        },
        status: UserStatus::Active,
        created_at: user_service::domain::Timestamp::parse("2019-05-06T07:08:09.000Z").unwrap(),
        more: vec![
            AdditionalEmail {
                email: address("ada@work.example.com"),
                verified: true,
            },
            AdditionalEmail {
                email: address("ada.old@example.org"),
                verified: false,
            },
        ],
        import_key: None,
    }
}

/// Imports Ada pending, with `hash`; returns her provisional id.
async fn import_pending(app: &TestApp, hash: &PasswordHash) -> UserId {
    let (pending, created) = app
        .store
        .create_pending_account(&ada(), hash, app.clock.now())
        .await
        .unwrap();
    assert_eq!(created, user_service::store::Created::New);
    assert!(pending.is_pending());
    pending
}

/// The trigger's event for a sign-in with `password` (Cognito's documented shape).
fn sign_in(user_name: &str, password: &str) -> Value {
    let mut event = events::load("migrate-user");
    event["userName"] = json!(user_name);
    event["request"]["password"] = json!(password);
    event
}

/// The trigger's event for a forgot-password (no password).
fn forgot_password(user_name: &str) -> Value {
    let mut event = events::load("migrate-user-forgot-password");
    event["userName"] = json!(user_name);
    event
}

/// What Cognito does once the trigger answered: the user exists with the
/// attributes it returned, under a new sub, and signs in (PostAuthentication).
async fn first_sign_in(app: &TestApp, sub: &str, attributes: &Value) -> Result<Value, lambda_runtime::Diagnostic> {
    let mut event = cognito_event(&POST_AUTHENTICATION, sub, attributes["email"].as_str().unwrap());
    event["request"]["userAttributes"]["email_verified"] = attributes["email_verified"].clone();
    event["request"]["userAttributes"]
        .as_object_mut()
        .unwrap()
        .retain(|k, _| ["sub", "email", "email_verified", "cognito:user_status"].contains(&k.as_str()));
    app.invoke(&POST_AUTHENTICATION, event).await
}

/// The stable code a trigger refused with (its message starts with it too);
/// panics on an answer.
fn refusal(outcome: Result<Value, lambda_runtime::Diagnostic>) -> String {
    let err = outcome.expect_err("a refusal");
    assert!(err.error_message.starts_with(&err.error_type), "{err:?}");
    err.error_type
}

/// A stream record of `item` written new (INSERT, new image only).
fn insert(item: &keys::Item) -> aws_lambda_events::event::dynamodb::EventRecord {
    let mut record = aws_lambda_events::event::dynamodb::EventRecord::default();
    record.event_id = "record-1".to_owned();
    let key: keys::Item = [keys::PK, keys::SK]
        .into_iter()
        .map(|k| (k.to_owned(), item[k].clone()))
        .collect();
    record.change.keys = serde_dynamo::Item::from(key);
    record.change.new_image = serde_dynamo::Item::from(item.clone());
    record
}

async fn legacy_item(app: &TestApp, user: &UserId) -> Option<LegacyPasswordItem> {
    let item = app
        .store
        .client()
        .get_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(keys::legacy_password_key(user)))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item?;
    Some(serde_dynamo::from_item(item).unwrap())
}

/// Ada is migrated to `sub`: her profile, names and creation time, her three
/// addresses with their flags, the claims hers; nothing of the pending user.
async fn assert_migrated(app: &TestApp, pending: &UserId, sub: &str) {
    let reply = app.get_account(sub).await;
    reply.assert_status(200);
    let profile = &reply.body["profile"];
    assert_eq!(profile["email"], "ada@example.com");
    assert_eq!(profile["firstName"], "Ada");
    assert_eq!(profile["status"], "active");
    assert_eq!(profile["createdAt"], "2019-05-06T07:08:09.000Z");
    let emails = reply.body["emails"].as_array().unwrap();
    let flags: Vec<(&str, bool, bool)> = emails
        .iter()
        .map(|e| {
            (
                e["email"].as_str().unwrap(),
                e["isPrimary"].as_bool().unwrap(),
                e["isVerified"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(flags.len(), 3, "{flags:?}");
    for expected in [
        ("ada@example.com", true, true),
        ("ada@work.example.com", false, true),
        ("ada.old@example.org", false, false),
    ] {
        assert!(flags.contains(&expected), "{expected:?} in {flags:?}");
    }
    assert_eq!(
        app.store.profile_status(pending).await.unwrap(),
        None,
        "the pending profile is gone"
    );
    assert!(legacy_item(app, pending).await.is_none(), "the legacy hash is gone");
    assert!(
        app.store
            .pending_user(&address("ada@example.com"))
            .await
            .unwrap()
            .is_none()
    );
    app.assert_invariants().await;
}

#[tokio::test]
async fn the_right_password_migrates_the_user_in_each_hash_format() {
    for hash in hashes() {
        let algorithm = hash.algorithm();
        let app = TestApp::spawn().await;
        let pending = import_pending(&app, &hash).await;

        let out = app
            .invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD))
            .await
            .unwrap_or_else(|e| panic!("{algorithm:?}: {e:?}"));
        let response = &out["response"];
        assert_eq!(response["userAttributes"]["email"], "ada@example.com", "{algorithm:?}");
        assert_eq!(response["userAttributes"]["email_verified"], "true");
        assert_eq!(response["finalUserStatus"], "CONFIRMED");
        assert_eq!(response["messageAction"], "SUPPRESS");
        // The rest of the event comes back as it was.
        assert_eq!(out["userName"], "ada@example.com");
        assert!(
            legacy_item(&app, &pending).await.is_some(),
            "nothing moves before Cognito's user exists"
        );

        first_sign_in(&app, NEW_SUB, &response["userAttributes"]).await.unwrap();
        assert_migrated(&app, &pending, NEW_SUB).await;
    }
}

#[tokio::test]
async fn a_wrong_password_migrates_nobody_and_is_counted() {
    for hash in hashes() {
        let algorithm = hash.algorithm();
        let app = TestApp::spawn().await;
        let pending = import_pending(&app, &hash).await;
        for wrong in ["correct horse battery stapler", "Correct horse battery staple", " "] {
            assert_eq!(
                refusal(app.invoke(&MIGRATE_USER, sign_in("ada@example.com", wrong)).await),
                "INCORRECT_PASSWORD",
                "{algorithm:?}"
            );
        }
        let legacy = legacy_item(&app, &pending).await.unwrap();
        assert_eq!(legacy.wrong_passwords.len(), 3);
        assert_eq!(legacy.password_hash, hash, "the hash itself is untouched");
        assert_eq!(
            app.store.profile_status(&pending).await.unwrap(),
            Some(UserStatus::Active)
        );
        app.assert_invariants().await;
    }
}

#[tokio::test]
async fn forgot_password_migrates_without_a_password() {
    let app = TestApp::spawn().await;
    let pending = import_pending(&app, &hashes()[0]).await;
    let out = app
        .invoke(&MIGRATE_USER, forgot_password("ada@example.com"))
        .await
        .unwrap();
    let response = &out["response"];
    assert_eq!(response["userAttributes"]["email"], "ada@example.com");
    assert_eq!(response["userAttributes"]["email_verified"], "true");
    assert_eq!(response["messageAction"], "SUPPRESS");
    // Not confirmed: Cognito makes the user RESET_REQUIRED and mails its code.
    assert!(response["finalUserStatus"].is_null(), "{response}");

    // The code confirmed (ConfirmForgotPassword): PostConfirmation, reset source.
    let mut confirmed = events::load("post-confirmation-forgot-password");
    confirmed["userName"] = json!(NEW_SUB);
    confirmed["request"]["userAttributes"]["sub"] = json!(NEW_SUB);
    confirmed["request"]["userAttributes"]["email"] = json!("ada@example.com");
    confirmed["request"]["userAttributes"]["email_verified"] = json!("true");
    for _ in 0..2 {
        // Cognito retries; the second delivery finds her moved.
        let out = app.invoke(&POST_CONFIRMATION, confirmed.clone()).await.unwrap();
        assert_eq!(out, confirmed);
    }
    assert_migrated(&app, &pending, NEW_SUB).await;
}

#[tokio::test]
async fn a_user_imported_without_a_password_resets_it() {
    // A pending user always has a hash; an address no pending user holds
    // (a normal user's, or nobody's) is no user to migrate.
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "grace@example.com").await;
    for user_name in ["grace@example.com", "nobody@example.com", "not an address"] {
        assert_eq!(
            refusal(app.invoke(&MIGRATE_USER, sign_in(user_name, PASSWORD)).await),
            "USER_NOT_FOUND"
        );
        assert_eq!(
            refusal(app.invoke(&MIGRATE_USER, forgot_password(user_name)).await),
            "USER_NOT_FOUND"
        );
    }
}

#[tokio::test]
async fn someone_elses_sign_up_with_a_pending_users_address_is_refused() {
    let app = TestApp::spawn().await;
    let pending = import_pending(&app, &hashes()[0]).await;
    // The sign-in address: refused before Cognito creates anything.
    assert_eq!(
        refusal(app.pre_sign_up(NEW_SUB, "ada@example.com").await),
        "EMAIL_TAKEN"
    );
    // Spelled otherwise, the same address.
    assert_eq!(
        refusal(app.pre_sign_up(NEW_SUB, "ADA@Example.com").await),
        "EMAIL_TAKEN"
    );

    // A verified secondary address proves less than the primary: someone who
    // controls the old work mailbox confirms a sign-up with it. The sign-up is
    // closed, as any other's, and the pending user stays whole.
    assert_eq!(
        refusal(app.post_confirmation(NEW_SUB, "ada@work.example.com").await),
        "EMAIL_TAKEN"
    );
    // Nor does the trigger migrate anyone by a secondary address.
    assert_eq!(
        refusal(
            app.invoke(&MIGRATE_USER, sign_in("ada@work.example.com", PASSWORD))
                .await
        ),
        "USER_NOT_FOUND"
    );
    app.get_account(NEW_SUB).await.assert_problem(404, "NOT_FOUND");
    assert!(legacy_item(&app, &pending).await.is_some());
    assert_eq!(
        app.store.profile_status(&pending).await.unwrap(),
        Some(UserStatus::Active)
    );

    // An existing user cannot add it either.
    app.sign_up(ADA, "grace@example.com").await;
    app.add_email(ADA, "ada@example.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    app.assert_invariants().await;
}

#[tokio::test]
async fn erasing_a_pending_user_removes_the_hash() {
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let pending = import_pending(&app, &hashes()[1]).await;
    // An admin finds her by address and deletes her, as any user.
    let found = app.find_user_by_email(ADMIN, "ada@example.com").await;
    found.assert_status(200);
    assert_eq!(found.body["profile"]["userId"], pending.as_str());
    app.set_user_status(ADMIN, pending.as_str(), "deleted")
        .await
        .assert_status(200);
    assert!(
        legacy_item(&app, &pending).await.is_none(),
        "the hash is erased with her"
    );
    assert_eq!(
        app.store.profile_status(&pending).await.unwrap(),
        Some(UserStatus::Deleted)
    );
    // Nothing to migrate any more; the address is free.
    assert_eq!(
        refusal(app.invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD)).await),
        "USER_NOT_FOUND"
    );
    app.pre_sign_up(NEW_SUB, "ada@example.com").await.unwrap();
    app.assert_invariants().await;

    // The system's erasure too (a pending user imported twice is one user).
    let app = TestApp::spawn().await;
    let pending = import_pending(&app, &hashes()[2]).await;
    let (again, created) = app
        .store
        .create_pending_account(&ada(), &hashes()[2], app.clock.now())
        .await
        .unwrap();
    assert_eq!(
        (again, created),
        (pending.clone(), user_service::store::Created::Existing)
    );
    app.store
        .delete_user(&pending, Deleter::System, app.clock.now())
        .await
        .unwrap();
    assert!(legacy_item(&app, &pending).await.is_none());
    app.assert_invariants().await;
}

#[tokio::test]
async fn too_many_wrong_passwords_are_refused_before_hashing_and_forgot_password_still_works() {
    let app = TestApp::spawn().await;
    let pending = import_pending(&app, &hashes()[0]).await;
    for _ in 0..MAX_WRONG_PASSWORDS {
        assert_eq!(
            refusal(app.invoke(&MIGRATE_USER, sign_in("ada@example.com", "guess")).await),
            "INCORRECT_PASSWORD"
        );
    }
    // Even the right one, now: the guesser learns nothing more today.
    assert_eq!(
        refusal(app.invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD)).await),
        "TOO_MANY_ATTEMPTS"
    );
    let counted = legacy_item(&app, &pending).await.unwrap();
    assert_eq!(
        counted.wrong_passwords.len(),
        MAX_WRONG_PASSWORDS,
        "a refusal is not counted"
    );

    // A day later the window has moved on.
    app.clock.advance(86_401);
    app.invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD))
        .await
        .unwrap();

    // And the owner is never locked out: forgot-password needs no password.
    let app = TestApp::spawn().await;
    import_pending(&app, &hashes()[0]).await;
    for _ in 0..=MAX_WRONG_PASSWORDS {
        let _ = app.invoke(&MIGRATE_USER, sign_in("ada@example.com", "guess")).await;
    }
    app.invoke(&MIGRATE_USER, forgot_password("ada@example.com"))
        .await
        .unwrap();
}

/// Concurrent guesses each read a hash item with room, then spend up to a
/// second hashing: were the count written after the check, every guess that
/// read the item before the first count landed would get its check. The slot
/// is taken first, inside a conditional write, so the limit holds.
#[tokio::test]
async fn fifty_concurrent_wrong_passwords_get_no_more_hash_checks_than_the_limit() {
    let logs = integration_tests::logs::LogCapture::default();
    let _guard = logs.install();
    let app = TestApp::spawn().await;
    let pending = import_pending(&app, &hashes()[0]).await;
    let guesses = (0..50).map(|i| {
        let app = &app;
        async move {
            refusal(
                app.invoke(&MIGRATE_USER, sign_in("ada@example.com", &format!("guess {i}")))
                    .await,
            )
        }
    });
    let codes = futures::future::join_all(guesses).await;
    let incorrect = codes.iter().filter(|c| *c == "INCORRECT_PASSWORD").count();
    let refused = codes.iter().filter(|c| *c == "TOO_MANY_ATTEMPTS").count();
    assert_eq!(incorrect, MAX_WRONG_PASSWORDS, "{codes:?}");
    assert_eq!(incorrect + refused, 50, "the rest are refused: {codes:?}");
    let checks = logs
        .lines()
        .iter()
        .filter(|l| l["message"] == "legacy password checked")
        .count();
    assert_eq!(
        checks, incorrect,
        "a hash check for each wrong password answered, and no more"
    );
    let counted = legacy_item(&app, &pending).await.unwrap();
    assert_eq!(counted.wrong_passwords.len(), incorrect);
    // The right password now waits for the window, as any guess does.
    assert_eq!(
        refusal(app.invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD)).await),
        "TOO_MANY_ATTEMPTS"
    );
    app.assert_invariants().await;
}

/// A slot taken for a password that matches is given back: it was no guess.
#[tokio::test]
async fn a_matching_password_gives_its_slot_back() {
    let app = TestApp::spawn().await;
    let pending = import_pending(&app, &hashes()[0]).await;
    assert_eq!(
        refusal(app.invoke(&MIGRATE_USER, sign_in("ada@example.com", "guess")).await),
        "INCORRECT_PASSWORD"
    );
    app.invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD))
        .await
        .unwrap();
    let counted = legacy_item(&app, &pending).await.unwrap();
    assert_eq!(counted.wrong_passwords.len(), 1, "the wrong one alone: {counted:?}");
    // Slots older than the window make room when the list is full of them.
    for _ in 1..MAX_WRONG_PASSWORDS {
        assert_eq!(
            refusal(app.invoke(&MIGRATE_USER, sign_in("ada@example.com", "guess")).await),
            "INCORRECT_PASSWORD"
        );
    }
    assert_eq!(
        refusal(app.invoke(&MIGRATE_USER, sign_in("ada@example.com", "guess")).await),
        "TOO_MANY_ATTEMPTS"
    );
    app.clock.advance(86_401);
    app.invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD))
        .await
        .unwrap();
    assert_eq!(
        legacy_item(&app, &pending).await.unwrap().wrong_passwords,
        Vec::<i64>::new()
    );
}

#[tokio::test]
async fn a_suspended_pending_user_migrates_only_once_reactivated() {
    let app = TestApp::spawn().await;
    app.sign_up(ADMIN, "grace@example.com").await;
    let pending = import_pending(&app, &hashes()[3]).await;
    app.set_user_status(ADMIN, pending.as_str(), "suspended")
        .await
        .assert_status(200);
    for event in [sign_in("ada@example.com", PASSWORD), forgot_password("ada@example.com")] {
        assert_eq!(refusal(app.invoke(&MIGRATE_USER, event).await), "ACCOUNT_SUSPENDED");
    }
    // Suspended between the trigger and the first sign-in: nothing moves.
    let attributes = json!({"email": "ada@example.com", "email_verified": "true"});
    assert_eq!(
        refusal(first_sign_in(&app, NEW_SUB, &attributes).await),
        "ACCOUNT_SUSPENDED"
    );
    assert_eq!(
        app.store.profile_status(&pending).await.unwrap(),
        Some(UserStatus::Suspended)
    );

    app.set_user_status(ADMIN, pending.as_str(), "active")
        .await
        .assert_status(200);
    app.invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD))
        .await
        .unwrap();
    first_sign_in(&app, NEW_SUB, &attributes).await.unwrap();
    assert_migrated(&app, &pending, NEW_SUB).await;
}

#[tokio::test]
async fn first_sign_ins_at_once_move_the_user_once() {
    let app = TestApp::spawn().await;
    let pending = import_pending(&app, &hashes()[0]).await;
    let attributes = json!({"email": "ada@example.com", "email_verified": "true"});
    // Cognito's retries of one sign-in, and the reset's confirmation, together.
    let mut confirmed = events::load("post-confirmation-forgot-password");
    confirmed["userName"] = json!(NEW_SUB);
    confirmed["request"]["userAttributes"]["sub"] = json!(NEW_SUB);
    confirmed["request"]["userAttributes"]["email"] = json!("ada@example.com");
    confirmed["request"]["userAttributes"]["email_verified"] = json!("true");
    // A delivery whose create lost to the move must not read the moved claim
    // as another account's and close the sign-up: every one succeeds.
    let sign_ins = (0..4).map(|_| first_sign_in(&app, NEW_SUB, &attributes));
    let resets = (0..2).map(|_| app.invoke(&POST_CONFIRMATION, confirmed.clone()));
    let (sign_ins, resets) = tokio::join!(futures::future::join_all(sign_ins), futures::future::join_all(resets));
    // Six deliveries on one account's items at once: a loser may run out of
    // its retries and answer SERVICE_UNAVAILABLE, which Cognito retries; no
    // delivery closes the sign-up or fails otherwise.
    let mut retried = 0;
    for outcome in sign_ins.into_iter().chain(resets) {
        match outcome {
            Ok(_) => {}
            Err(err) if err.error_type == "SERVICE_UNAVAILABLE" => retried += 1,
            Err(err) => panic!("{err:?}"),
        }
    }
    for _ in 0..retried {
        // As Cognito retries (and as `TestApp::sign_up` does on a busy machine).
        let mut delivery = 1;
        while let Err(err) = first_sign_in(&app, NEW_SUB, &attributes).await {
            assert!(err.error_type == "SERVICE_UNAVAILABLE" && delivery < 5, "{err:?}");
            delivery += 1;
        }
    }
    assert_migrated(&app, &pending, NEW_SUB).await;
    // Later sign-ins change nothing.
    let before = app.item_count().await;
    first_sign_in(&app, NEW_SUB, &attributes).await.unwrap();
    assert_eq!(app.item_count().await, before);
}

#[tokio::test]
async fn the_trigger_answers_cognitos_documented_events_within_its_budget() {
    let mut app = TestApp::spawn().await;
    app.trigger_wait = user_service::app::COGNITO_WAITS;
    import_pending(&app, &hashes()[0]).await;
    // The events as Cognito's documentation shows them, unchanged: every
    // invocation runs under Cognito's 5 s (`app::COGNITO_WAITS`), and a
    // trigger that ran out would answer SERVICE_UNAVAILABLE, not this.
    let event = events::load("migrate-user");
    assert_eq!(event["request"]["password"], PASSWORD);
    let out = app.invoke(&MIGRATE_USER, event).await.unwrap();
    assert_eq!(out["response"]["finalUserStatus"], "CONFIRMED");
    let out = app
        .invoke(&MIGRATE_USER, events::load("migrate-user-forgot-password"))
        .await
        .unwrap();
    assert_eq!(out["response"]["userAttributes"]["email"], "ada@example.com");

    // A hash that costs more than the budget is refused without being
    // computed: the user resets their password instead.
    let mut app = TestApp::spawn().await;
    app.trigger_wait = user_service::app::COGNITO_WAITS;
    let costly = PasswordHash::parse(
        HashAlgorithm::Bcrypt,
        "$2b$15$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG",
    )
    .unwrap();
    import_pending(&app, &costly).await;
    assert_eq!(
        refusal(app.invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD)).await),
        "PASSWORD_RESET_REQUIRED"
    );
    app.invoke(&MIGRATE_USER, forgot_password("ada@example.com"))
        .await
        .unwrap();

    // A malformed event is refused with a code, never a panic.
    assert_eq!(
        refusal(app.invoke(&MIGRATE_USER, json!({"triggerSource": 7})).await),
        "INVALID_EVENT"
    );
}

#[tokio::test]
async fn a_pending_user_makes_no_event_and_their_migration_makes_a_user_created() {
    use user_service::events::{Personal, envelopes};
    use user_service::store::changes;
    // The record's events, in their envelopes, as the publisher wraps them.
    let record_events = |record: &aws_lambda_events::event::dynamodb::EventRecord| {
        changes::change_of_record(record)
            .unwrap()
            .map(|change| envelopes(&change, "test", Personal::None))
            .unwrap_or_default()
    };
    let app = TestApp::spawn().await;
    let pending = import_pending(&app, &hashes()[0]).await;
    // The pending user's items, as stream records: none is an event.
    let items = integration_tests::invariants::scan(app.store.client(), &app.store.config().table_name).await;
    let mut seen = 0;
    for item in &items {
        let record = insert(item);
        if keys::key_string(item, keys::PK).is_some_and(|pk| pk.contains(pending.as_str())) {
            seen += 1;
            let events = record_events(&record);
            assert!(events.is_empty(), "{events:?}");
        }
    }
    assert!(seen >= 4, "the profile, three records and the hash: {seen}");
    let attributes = json!({"email": "ada@example.com", "email_verified": "true"});
    app.invoke(&MIGRATE_USER, sign_in("ada@example.com", PASSWORD))
        .await
        .unwrap();
    first_sign_in(&app, NEW_SUB, &attributes).await.unwrap();
    let profile = app
        .store
        .client()
        .get_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(keys::profile_key(&UserId::parse(NEW_SUB).unwrap())))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    let events = record_events(&insert(&profile));
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "user.created");
    assert_eq!(events[0]["subject"], NEW_SUB);
}
