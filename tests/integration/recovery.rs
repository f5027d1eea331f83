//! A way back for the former primary address (issue 42, part 2): the notice's
//! one-time link, the recovery it makes in one write, the former address kept
//! for its owner, the sessions it ends; and the abuse and bad luck around it:
//! a link used twice, late, after a later recovery or a deletion, two
//! recoveries at once, a recovery racing a switch, a thief's chain of
//! switches, a stranger's guesses (concurrent ones too); the hold on sign-in
//! a recovery puts, which always ends: the stream's, or past its share the
//! reconcile's. Cognito and SES are moto's; the stream is DynamoDB Local's,
//! applied as sync-cognito-email applies it.

use aws_sdk_cognitoidentityprovider::Client as Cognito;
use futures::StreamExt;
use integration_tests::logs::LogCapture;
use integration_tests::moto::{Moto, cognito_user};
use integration_tests::stream::{self, StreamReader};
use integration_tests::{ddb, invariants};
use lambda_runtime::{Context, LambdaEvent};
use serde_json::{Value, json};
use user_service::domain::{EmailId, UserId};
use user_service::identity::UserPool;
use user_service::mail::Sender;
use user_service::store::keys::{self, ItemKind};

use crate::handler_support::*;

/// The page the notices' links open, as a deployment configures it.
const PAGE: &str = "https://app.example.com/recover";
const OWNER: &str = "owner@example.com";

struct World {
    moto: Moto,
    app: TestApp,
    cognito: Cognito,
    pool: String,
    reader: StreamReader,
    owner: String,
    logs: LogCapture,
    _logging: tracing::subscriber::DefaultGuard,
}

impl World {
    /// The owner, signed up in Cognito (moto) and in the table; mail through
    /// moto's SES; links to [`PAGE`].
    async fn start() -> Self {
        let logs = LogCapture::default();
        let _logging = logs.install();
        let moto = Moto::start();
        let (cognito, pool, subs) = moto.user_pool(&[OWNER]).await;
        let mut app = TestApp::spawn().await;
        app.users = Some(UserPool::new(cognito.clone(), &pool));
        app.sender = Some(Sender::Ses(moto.ses_sender().await));
        app.recovery_page = Some(PAGE.to_owned());
        let owner = subs[0].clone();
        // Signed up and confirmed: a password of their own.
        cognito
            .admin_set_user_password()
            .user_pool_id(&pool)
            .username(&owner)
            .password("Correct-Horse-9")
            .permanent(true)
            .send()
            .await
            .unwrap();
        app.sign_up(&owner, OWNER).await;
        let reader = StreamReader::open(&ddb::client(), &app.store.config().table_name).await;
        Self {
            moto,
            app,
            cognito,
            pool,
            reader,
            owner,
            logs,
            _logging,
        }
    }

    /// The profile changes the stream emitted so far, applied as
    /// sync-cognito-email applies them; none may fail.
    async fn sync(&mut self) {
        let records: Vec<Value> = self
            .reader
            .read_new()
            .await
            .into_iter()
            .filter(|r| r["eventName"] == "MODIFY" && r["dynamodb"]["Keys"]["SK"]["S"] == "PROFILE")
            .collect();
        if records.is_empty() {
            return;
        }
        let event = serde_json::from_value(stream::event(&records)).unwrap();
        let response = self
            .app
            .sync_cognito_email(LambdaEvent::new(event, Context::default()))
            .await
            .unwrap();
        assert!(
            response.batch_item_failures.is_empty(),
            "{response:?}\n{}",
            self.logs.text()
        );
    }

    /// With the owner's session: adds `address`, verifies it with the code
    /// mailed to it, makes it primary, and lets Cognito follow.
    async fn switch_to(&mut self, address: &str) -> String {
        let id = self.app.add_address(&self.owner, address).await;
        let code = self.moto.mail_to(address).await.last().and_then(|m| m.code()).unwrap();
        self.app.verify_email(&self.owner, &id, &code).await.assert_status(200);
        self.app.set_primary_email(&self.owner, &id).await.assert_status(200);
        self.sync().await;
        id
    }

    /// The token of the link in the last notice mailed to `address`.
    async fn token_mailed_to(&self, address: &str) -> String {
        let notice = self.moto.mail_to(address).await.pop().expect("a notice");
        token_in(&notice.body).unwrap_or_else(|| panic!("no recovery link in {}", notice.body))
    }

    async fn cognito_status(&self) -> String {
        let user = self
            .cognito
            .admin_get_user()
            .user_pool_id(&self.pool)
            .username(&self.owner)
            .send()
            .await
            .unwrap();
        user.user_status().map(|s| s.as_str().to_owned()).unwrap_or_default()
    }
}

/// The token after `#token=` in a message's link.
fn token_in(body: &str) -> Option<String> {
    let start = body.find(&format!("{PAGE}#token="))? + PAGE.len() + "#token=".len();
    Some(
        body[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect(),
    )
}

/// A switch of `user`'s primary to a fresh verified address, through the
/// store, and a token for the link that undoes it.
async fn switch_and_link(app: &TestApp, user: &UserId, address: &str) -> (EmailId, String) {
    let now = app.clock.now();
    let code = user_service::verification::VerificationCode::generate().unwrap();
    let email = user_service::domain::EmailAddress::parse(address).unwrap();
    let added = app.store.add_email(user, &email, &code, now).await.unwrap();
    app.store.verify_email(user, added.email_id, &code, now).await.unwrap();
    let profile = app.store.set_primary(user, added.email_id, now).await.unwrap();
    let (token, _) = app
        .store
        .issue_recovery_token(user, profile.version, now)
        .await
        .unwrap()
        .expect("a fresh switch takes a token");
    (added.email_id, token.encode())
}

/// The hold items of recoveries in the table.
async fn hold_items(app: &TestApp) -> Vec<String> {
    invariants::scan(app.store.client(), &app.store.config().table_name)
        .await
        .iter()
        .filter_map(|i| keys::key_string(i, keys::SK).map(str::to_owned))
        .filter(|sk| sk.starts_with("HOLD#"))
        .collect()
}

/// The events counted on `sk`'s source counters (`RECOVERY_GUESSES`,
/// `SCIM_GUESSES`), over every source.
pub(crate) async fn source_events(app: &TestApp, sk: &str) -> usize {
    invariants::scan(app.store.client(), &app.store.config().table_name)
        .await
        .into_iter()
        .filter(|i| keys::key_string(i, keys::SK) == Some(sk))
        .map(|i| {
            let counter: user_service::store::items::LimitItem = serde_dynamo::from_item(i).unwrap();
            counter.events.len()
        })
        .sum()
}

/// GET /me with a session signed in at `signed_in_at`.
async fn profile_as_signed_in(app: &TestApp, sub: &str, signed_in_at: i64) -> Reply {
    let f = &GET_PROFILE;
    app.send(f, Event::of(f).caller(sub).signed_in_at(signed_in_at)).await
}

#[tokio::test]
async fn a_stolen_session_hands_the_account_over_and_the_former_address_takes_it_back() {
    let mut w = Box::pin(World::start()).await;
    let stolen_at = w.app.clock.now().unix_seconds();
    // The thief, in the owner's session: their address becomes primary, and
    // once Cognito follows, the owner's is removed.
    let thief = w.switch_to("thief@example.com").await;
    let first = w.app.email_id_of(&w.owner, OWNER).await;
    w.app.remove_email(&w.owner, &first).await.assert_status(204);
    w.sync().await;
    assert_eq!(
        cognito_user(&w.cognito, &w.pool, &w.owner)
            .await
            .unwrap()
            .email
            .as_deref(),
        Some("thief@example.com")
    );
    // The owner's address stays theirs: nobody else takes it.
    w.app.sign_up(NOBODY, "bystander@example.com").await;
    w.app.add_email(NOBODY, OWNER).await.assert_problem(409, "EMAIL_TAKEN");
    w.app.assert_invariants().await;

    // The notice to the owner's address carries the way back.
    let notice = w.moto.mail_to(OWNER).await.pop().unwrap();
    assert_eq!(notice.subject, "Your primary email address was changed: was it you?");
    let token = w.token_mailed_to(OWNER).await;
    w.app.clock.advance(1);
    let recovered = w.app.recover_account(&token).await;
    let recovered_at = w.app.clock.now().unix_seconds();
    recovered.assert_status(200);
    assert_eq!(recovered.body, json!({ "email": OWNER, "removedAddresses": 1 }));

    // Every session from before is over, for reads and writes alike.
    profile_as_signed_in(&w.app, &w.owner, stolen_at)
        .await
        .assert_problem(401, "SESSION_REVOKED");
    let f = &ADD_EMAIL;
    let write = Event::of(f)
        .caller(&w.owner)
        .signed_in_at(stolen_at)
        .body(json!({ "email": "thief2@example.com" }));
    w.app.send(f, write).await.assert_problem(401, "SESSION_REVOKED");
    // A session from the recovery's own second too: a taker signing in every
    // second would otherwise keep one.
    profile_as_signed_in(&w.app, &w.owner, recovered_at)
        .await
        .assert_problem(401, "SESSION_REVOKED");
    // A new sign-in (after the recovery's second: one in it is ended too)
    // finds the account as it was.
    w.app.clock.advance(1);
    let profile = w.app.get_profile(&w.owner).await;
    profile.assert_status(200);
    assert_eq!(profile.body["email"], OWNER);
    let emails = w.app.list_emails(&w.owner).await;
    assert_eq!(emails.body["emails"].as_array().unwrap().len(), 1, "{}", emails.body);
    assert_eq!(emails.body["emails"][0]["isPrimary"], true);
    assert_eq!(emails.body["emails"][0]["isVerified"], true);

    // Until Cognito follows, Cognito still signs the thief's address in with
    // the thief's password: post-authentication refuses every sign-in, so no
    // fresh session escapes the revocation. Only this recovery's own release
    // lifts the hold.
    let pending = |signed: Result<Value, lambda_runtime::Diagnostic>| {
        signed.expect_err("a sign-in while the recovery holds it").error_message
    };
    for address in ["thief@example.com", OWNER] {
        let refused = pending(w.app.post_authentication(&w.owner, address, true).await);
        assert!(refused.starts_with("ACCOUNT_RECOVERY_PENDING"), "{refused}");
    }
    let owner = UserId::parse(&w.owner).unwrap();
    w.app.store.release_sign_in(&owner, recovered_at - 1).await.unwrap();
    let refused = pending(w.app.post_authentication(&w.owner, OWNER, true).await);
    assert!(
        refused.starts_with("ACCOUNT_RECOVERY_PENDING"),
        "another recovery's release: {refused}"
    );

    // Cognito follows: the owner's address, everyone signed out, a new password;
    // then sign-in is let go (with the new password, which only the owner's
    // mailbox can set).
    let mailed_to_thief = w.moto.mail_to("thief@example.com").await.len();
    assert_eq!(
        hold_items(&w.app).await.len(),
        1,
        "the hold is listed for the reconcile"
    );
    w.sync().await;
    w.app.post_authentication(&w.owner, OWNER, true).await.unwrap();
    assert_eq!(hold_items(&w.app).await, Vec::<String>::new(), "its release took it");
    let user = cognito_user(&w.cognito, &w.pool, &w.owner).await.unwrap();
    assert_eq!(user.email.as_deref(), Some(OWNER));
    assert!(user.email_verified);
    assert_eq!(w.cognito_status().await, "RESET_REQUIRED");
    assert_eq!(
        w.moto.mail_to("thief@example.com").await.len(),
        mailed_to_thief,
        "the address taken back from gets no notice and no link"
    );

    // The link worked once; the thief's address is free for anyone.
    w.app
        .recover_account(&token)
        .await
        .assert_problem(404, "RECOVERY_LINK_INVALID");
    w.app.add_address(NOBODY, "thief@example.com").await;
    assert_ne!(thief, first);
    w.app.assert_invariants().await;
}

#[tokio::test]
async fn the_recovery_page_asks_before_it_posts_and_runs_only_its_own_script() {
    let app = TestApp::spawn().await;
    let page = app.recovery_page().await;
    page.assert_status(200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    let html = page.body.as_str().unwrap();
    assert!(html.contains("<button id=\"recover\""), "it asks first");
    assert!(html.contains("location.hash"), "the token comes from the fragment");
    let policy = page.header("content-security-policy").unwrap();
    use base64::Engine;
    use sha2::Digest;
    let script = user_service::api::routes::recovery_page::SCRIPT;
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(script.as_bytes()));
    assert!(policy.contains(&format!("script-src 'sha256-{hash}'")), "{policy}");
    assert!(
        policy.contains("connect-src 'self'") && policy.contains("default-src 'none'"),
        "{policy}"
    );
    assert!(html.contains(script), "the hashed script is the one on the page");
}

#[tokio::test]
async fn a_link_works_once_within_its_window_and_never_for_a_deleted_account() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    let (_, late) = switch_and_link(&app, &ada, "ada.1@example.com").await;
    app.clock.advance(app.store.config().address_recovery_seconds);
    app.recover_account(&late)
        .await
        .assert_problem(404, "RECOVERY_LINK_INVALID");
    let (_, kept) = switch_and_link(&app, &ada, "ada.2@example.com").await;
    let etag = app.get_profile(ADA).await.header("etag").unwrap().to_owned();
    app.delete_account(ADA, &etag).await.assert_status(204);
    app.recover_account(&kept)
        .await
        .assert_problem(404, "RECOVERY_LINK_INVALID");
    // The erasure took the switches with it.
    let items = invariants::scan(app.store.client(), &app.store.config().table_name).await;
    let kinds: Vec<ItemKind> = items
        .iter()
        .map(|i| {
            keys::classify(
                keys::key_string(i, keys::PK).unwrap_or_default(),
                keys::key_string(i, keys::SK).unwrap_or_default(),
            )
        })
        .collect();
    assert!(!kinds.contains(&ItemKind::PrimaryChange), "{kinds:?}");
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_thiefs_own_recovery_never_undoes_the_owners_way_back() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    // The thief: ada → x (the owner's link), then x → y (a link to the thief's x).
    let (_, owners) = switch_and_link(&app, &ada, "x@example.com").await;
    let (_, thiefs) = switch_and_link(&app, &ada, "y@example.com").await;
    app.clock.advance(1);
    // The thief follows their own link first: x is primary again, y goes.
    app.recover_account(&thiefs).await.assert_status(200);
    app.clock.advance(1);
    assert_eq!(app.get_profile(ADA).await.body["email"], "x@example.com");
    // The owner's link still works: it undoes the earlier switch.
    app.clock.advance(1);
    let back = app.recover_account(&owners).await;
    back.assert_status(200);
    assert_eq!(back.body["email"], "ada@example.com");
    app.clock.advance(1);
    assert_eq!(app.get_profile(ADA).await.body["email"], "ada@example.com");
    // And now nothing the thief holds undoes it.
    app.recover_account(&thiefs)
        .await
        .assert_problem(404, "RECOVERY_LINK_INVALID");
    app.assert_invariants().await;

    // The other order: the owner first; the later switch's link is undone with it.
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let (_, owners) = switch_and_link(&app, &ada, "x@example.com").await;
    let (_, thiefs) = switch_and_link(&app, &ada, "y@example.com").await;
    app.clock.advance(1);
    app.recover_account(&owners).await.assert_status(200);
    app.recover_account(&thiefs)
        .await
        .assert_problem(404, "RECOVERY_LINK_INVALID");
    app.clock.advance(1);
    let emails = app.list_emails(ADA).await;
    assert_eq!(emails.body["emails"].as_array().unwrap().len(), 1, "{}", emails.body);
    app.assert_invariants().await;
}

#[tokio::test]
async fn two_recoveries_at_once_take_the_account_back_once() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    let (_, first) = switch_and_link(&app, &ada, "x@example.com").await;
    // The stream delivered the switch twice: two notices, two tokens.
    let version = app.store.get_profile(&ada).await.unwrap().version;
    let (second, _) = app
        .store
        .issue_recovery_token(&ada, version, app.clock.now())
        .await
        .unwrap()
        .unwrap();
    let second = second.encode();
    app.clock.advance(1);
    let (a, b) = tokio::join!(app.recover_account(&first), app.recover_account(&second));
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 404], "{} / {}", a.body, b.body);
    app.clock.advance(1);
    assert_eq!(app.get_profile(ADA).await.body["email"], "ada@example.com");
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_recovery_racing_a_switch_leaves_one_verified_primary() {
    for round in 0..4 {
        let app = TestApp::spawn().await;
        app.sign_up(ADA, "ada@example.com").await;
        let ada = UserId::parse(ADA).unwrap();
        let (x, token) = switch_and_link(&app, &ada, "x@example.com").await;
        // Another verified address the session switches to at the same moment.
        let (y, _) = switch_and_link(&app, &ada, "y@example.com").await;
        app.store.set_primary(&ada, x, app.clock.now()).await.unwrap();
        app.clock.advance(1);
        let store = app.store.clone();
        let now = app.clock.now();
        let (recovered, switched) = tokio::join!(app.recover_account(&token), store.set_primary(&ada, y, now));
        assert!(
            recovered.status == 200 || switched.is_ok(),
            "round {round}: one of them lands ({}, {switched:?})",
            recovered.body
        );
        app.assert_invariants().await;
    }
}

#[tokio::test]
async fn a_strangers_guesses_are_refused_counted_and_limited() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    let (_, real) = switch_and_link(&app, &ada, "x@example.com").await;
    // Text that is no token: bad input, refused before the table.
    let before = invariants::item_count(&app.store).await;
    app.recover_account_from("not a token", "198.51.100.7")
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    assert_eq!(invariants::item_count(&app.store).await, before, "nothing written");
    // Well-formed guesses: 404, counted against their source.
    let guess = |n: u8| {
        let mut bytes = real.clone().into_bytes();
        bytes[20] = if bytes[20] == b'A' + n { b'B' + n } else { b'A' + n };
        String::from_utf8(bytes).unwrap()
    };
    let cap = user_service::store::RECOVERY_GUESSES_PER_SOURCE;
    for n in 0..cap {
        app.recover_account_from(&guess((n % 20) as u8), "198.51.100.7")
            .await
            .assert_problem(404, "RECOVERY_LINK_INVALID");
    }
    let limited = app.recover_account_from(&real, "198.51.100.7").await;
    limited.assert_problem(429, "TOO_MANY_REQUESTS");
    assert!(limited.header("retry-after").is_some());
    // Another source is not held back by them; the real link still works.
    app.clock.advance(1);
    app.recover_account_from(&real, "192.0.2.44").await.assert_status(200);
    app.assert_invariants().await;
}

#[tokio::test]
async fn five_hundred_concurrent_guesses_from_one_source_are_judged_at_most_the_cap() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    let (_, real) = switch_and_link(&app, &ada, "x@example.com").await;
    let version = app.store.get_profile(&ada).await.unwrap().version;
    // Links to the real switch, each with a secret of its own: well formed,
    // so each would be judged against the account, and all wrong.
    let guesses: Vec<String> = (0..500)
        .map(|_| {
            user_service::recovery::RecoveryToken::generate(&ada, version)
                .unwrap()
                .encode()
        })
        .collect();
    let source = "198.51.100.77";
    let replies: Vec<Reply> = futures::stream::iter(&guesses)
        .map(|guess| app.recover_account_from(guess, source))
        .buffer_unordered(50)
        .collect()
        .await;
    let cap = user_service::store::RECOVERY_GUESSES_PER_SOURCE as usize;
    let judged = replies.iter().filter(|r| r.status == 404).count();
    let limited: Vec<&Reply> = replies.iter().filter(|r| r.status == 429).collect();
    // Every slot was taken before its link was judged: the cap's number of
    // guesses judged (404), the rest refused unjudged (429).
    assert_eq!((judged, limited.len()), (cap, 500 - cap));
    for reply in &limited {
        reply.assert_problem(429, "TOO_MANY_REQUESTS");
        assert!(reply.header("retry-after").is_some());
    }
    assert_eq!(
        source_events(&app, "RECOVERY_GUESSES").await,
        cap,
        "each judged guess counted once"
    );
    // The account was never touched, and the real link still undoes its
    // switch from elsewhere, giving its slot back: it was no guess.
    app.clock.advance(1);
    let back = app.recover_account_from(&real, "192.0.2.45").await;
    back.assert_status(200);
    assert_eq!(back.body["email"], "ada@example.com");
    assert_eq!(source_events(&app, "RECOVERY_GUESSES").await, cap);
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_hold_the_stream_never_released_is_finished_by_the_reconcile_and_a_fresh_one_left_to_it() {
    let mut w = Box::pin(World::start()).await;
    w.switch_to("thief@example.com").await;
    let token = w.token_mailed_to(OWNER).await;
    w.app.clock.advance(1);
    w.app.recover_account(&token).await.assert_status(200);
    // The recovery's stream record never reaches the consumer (its retries
    // failed, and it sits in the on-failure queue): nothing is synced.
    let held = |signed: Result<Value, lambda_runtime::Diagnostic>| {
        let refused = signed.expect_err("a sign-in while the recovery holds it").error_message;
        assert!(refused.starts_with("ACCOUNT_RECOVERY_PENDING"), "{refused}");
    };
    held(w.app.post_authentication(&w.owner, OWNER, true).await);
    assert_eq!(hold_items(&w.app).await.len(), 1);

    // A minute on, the hold is still the stream's: a run leaves it alone.
    w.app.clock.advance(60);
    w.app.reconcile_users().await.unwrap();
    held(w.app.post_authentication(&w.owner, OWNER, true).await);
    let user = cognito_user(&w.cognito, &w.pool, &w.owner).await.unwrap();
    assert_eq!(user.email.as_deref(), Some("thief@example.com"));
    assert_eq!(
        w.cognito_status().await,
        "CONFIRMED",
        "the taker's password still signs in there"
    );
    assert_eq!(hold_items(&w.app).await.len(), 1);

    // Past the stream's share, the next run does what the consumer would
    // have: the owner's address, every session out, a new password, released.
    w.app
        .clock
        .advance(user_service::reconciler::HOLD_LEFT_TO_STREAM_SECONDS);
    w.app.reconcile_users().await.unwrap();
    let user = cognito_user(&w.cognito, &w.pool, &w.owner).await.unwrap();
    assert_eq!(user.email.as_deref(), Some(OWNER));
    assert!(user.email_verified);
    assert_eq!(w.cognito_status().await, "RESET_REQUIRED");
    w.app.post_authentication(&w.owner, OWNER, true).await.unwrap();
    assert_eq!(hold_items(&w.app).await, Vec::<String>::new());
    let owner = UserId::parse(&w.owner).unwrap();
    assert_eq!(
        w.app.store.get_profile(&owner).await.unwrap().email.unwrap().as_str(),
        OWNER
    );
    w.app.assert_invariants().await;

    // A second run changes nothing: the table (its checkpoint aside) and
    // Cognito stay as the first left them.
    let table = |items: Vec<keys::Item>| -> Vec<keys::Item> {
        items
            .into_iter()
            .filter(|i| keys::key_string(i, keys::SK) != Some("CHECKPOINT"))
            .collect()
    };
    let name = &w.app.store.config().table_name;
    let before = table(invariants::scan(w.app.store.client(), name).await);
    w.app
        .clock
        .advance(user_service::reconciler::HOLD_LEFT_TO_STREAM_SECONDS);
    w.app.reconcile_users().await.unwrap();
    let after = table(invariants::scan(w.app.store.client(), name).await);
    assert_eq!(after.len(), before.len());
    for item in &before {
        assert!(after.contains(item), "changed: {:?}", keys::key_of(item));
    }
    let again = cognito_user(&w.cognito, &w.pool, &w.owner).await.unwrap();
    assert_eq!((again.email, again.email_verified), (user.email, user.email_verified));
    assert_eq!(w.cognito_status().await, "RESET_REQUIRED");
    w.app.post_authentication(&w.owner, OWNER, true).await.unwrap();
}

#[tokio::test]
async fn a_hold_whose_account_was_erased_since_is_dropped_by_the_reconcile() {
    let mut w = Box::pin(World::start()).await;
    w.switch_to("thief@example.com").await;
    let token = w.token_mailed_to(OWNER).await;
    w.app.clock.advance(1);
    w.app.recover_account(&token).await.assert_status(200);
    // The owner closes the account before any of it reaches Cognito.
    w.app.clock.advance(1);
    let etag = w.app.get_profile(&w.owner).await.header("etag").unwrap().to_owned();
    w.app.delete_account(&w.owner, &etag).await.assert_status(204);
    assert_eq!(hold_items(&w.app).await.len(), 1, "listed until a run looks");
    // Nothing is held any more: the run past the stream's share drops the
    // item (a sub and a time) and fails on nothing.
    w.app
        .clock
        .advance(user_service::reconciler::HOLD_LEFT_TO_STREAM_SECONDS + 1);
    w.app.reconcile_users().await.unwrap();
    assert_eq!(hold_items(&w.app).await, Vec::<String>::new());
    w.app.assert_invariants().await;
}

#[tokio::test]
async fn the_former_primary_stays_reserved_to_its_owner_for_the_window() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(NOBODY, "bob@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    switch_and_link(&app, &ada, "ada.new@example.com").await;
    app.cognito_holds_primary(ADA).await;
    let first = app.email_id_of(ADA, "ada@example.com").await;
    app.remove_email(ADA, &first).await.assert_status(204);
    app.assert_invariants().await;
    // Nobody else: not by adding it, not by signing up with it.
    app.add_email(NOBODY, "ada@example.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    app.check_email(NOBODY, "ada@example.com").await.assert_status(200);
    let newcomer = user_service::domain::NewUser {
        user_id: UserId::parse("7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f").unwrap(),
        email: user_service::domain::EmailAddress::parse("ada@example.com").unwrap(),
        first_name: None,
        last_name: None,
        phone: None,
    };
    let refused = app.store.create_user(&newcomer, app.clock.now()).await;
    assert!(
        matches!(refused, Err(user_service::StoreError::EmailTaken)),
        "{refused:?}"
    );
    // The owner takes it back, and removing it again does not release it.
    let again = app.add_address(ADA, "ada@example.com").await;
    app.remove_email(ADA, &again).await.assert_status(204);
    app.add_email(NOBODY, "ada@example.com")
        .await
        .assert_problem(409, "EMAIL_TAKEN");
    app.assert_invariants().await;
    // After the window, anyone may.
    app.clock.advance(app.store.config().address_recovery_seconds + 1);
    app.add_address(NOBODY, "ada@example.com").await;
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_recovery_puts_back_a_removed_former_and_keeps_what_was_there_before() {
    let app = TestApp::spawn().await;
    app.sign_up(ADA, "ada@example.com").await;
    let ada = UserId::parse(ADA).unwrap();
    // The owner's own second address, from before.
    let (kept, _) = switch_and_link(&app, &ada, "ada.work@example.com").await;
    app.store
        .set_primary(
            &ada,
            EmailId::parse(&app.email_id_of(ADA, "ada@example.com").await).unwrap(),
            app.clock.now(),
        )
        .await
        .unwrap();
    app.clock.advance(60);
    // The takeover: x, then y added, then ada removed.
    let (_, token) = switch_and_link(&app, &ada, "x@example.com").await;
    app.clock.advance(60);
    app.add_address(ADA, "y@example.com").await;
    app.cognito_holds_primary(ADA).await;
    let first = app.email_id_of(ADA, "ada@example.com").await;
    app.remove_email(ADA, &first).await.assert_status(204);
    app.clock.advance(1);
    let back = app.recover_account(&token).await;
    back.assert_status(200);
    assert_eq!(back.body["removedAddresses"], 2, "x and y");
    app.clock.advance(1);
    let emails = app.list_emails(ADA).await.body["emails"].clone();
    let listed: Vec<(&str, bool)> = emails
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["email"].as_str().unwrap(), e["isPrimary"].as_bool().unwrap()))
        .collect();
    assert_eq!(listed, [("ada@example.com", true), ("ada.work@example.com", false)]);
    assert_eq!(app.email_id_of(ADA, "ada.work@example.com").await, kept.to_string());
    app.assert_invariants().await;
}
