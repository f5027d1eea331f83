//! The verification flow as an attacker uses it, with ordinary requests: guess,
//! remove and re-add, resend, guess in parallel, squat. Each test fails against
//! the service before the limits existed.

use std::sync::Arc;

use futures::future::join_all;
use integration_tests::logs::LogCapture;
use serde_json::json;
use user_service::config::StoreConfig;
use user_service::store::keys::{self, ItemKind};

use crate::handler_support::*;

const VICTIM: &str = "victim@example.com";
const MALLORY: &str = "0b5e9d3c-1111-4a2b-8c3d-4e5f60718293";

/// A six-digit code that is certainly not `right`.
fn wrong(right: &str) -> String {
    if right == "000000" { "000001" } else { "000000" }.to_owned()
}

fn retry_after(reply: &Reply) -> u64 {
    reply
        .header("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After: {reply:?}"))
        .parse()
        .unwrap()
}

#[tokio::test]
async fn removing_and_adding_again_does_not_buy_more_guesses() {
    let app = TestApp::spawn().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(MALLORY, "mallory@example.com").await;
    let per_address = StoreConfig::DEFAULT_MAX_WRONG_CODES_PER_ADDRESS;
    let per_code = StoreConfig::DEFAULT_MAX_ATTEMPTS;

    let mut judged = 0;
    let mut refused = None;
    // Eleven rounds of "add, five wrong codes, remove" judged 55 codes before.
    for _ in 0..11 {
        let id = app.add_address(MALLORY, VICTIM).await;
        let right = logs.code_for(&id);
        for _ in 0..per_code {
            let reply = app.verify_email(MALLORY, &id, &wrong(&right)).await;
            match reply.status {
                400 => judged += 1,
                _ => {
                    reply.assert_problem(429, "TOO_MANY_ATTEMPTS");
                    refused = Some((reply, id.clone(), right.clone()));
                    break;
                }
            }
        }
        if refused.is_some() {
            break;
        }
        app.remove_email(MALLORY, &id).await.assert_status(204);
    }
    assert_eq!(judged, per_address, "wrong codes judged for one user and address");
    let (reply, id, right) = refused.expect("the limit was reached");
    // The window frees its first slot 24 h after the first wrong code.
    assert_eq!(retry_after(&reply), 86_400);
    // Past the limit even the right code is refused: no answer tells anything.
    app.verify_email(MALLORY, &id, &right)
        .await
        .assert_problem(429, "TOO_MANY_ATTEMPTS");
    app.assert_invariants().await;

    // A day later the window has rolled on: the right code (a fresh one) works.
    app.clock.advance(86_400);
    app.send_verification(MALLORY, &id).await.assert_status(202);
    app.verify_email(MALLORY, &id, &logs.code_for(&id))
        .await
        .assert_status(200);
    app.assert_invariants().await;
}

#[tokio::test]
async fn resending_does_not_buy_more_guesses_or_codes() {
    let app = TestApp::spawn_with(|c| c.verification_ttl_seconds = 86_400).await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(MALLORY, "mallory@example.com").await;
    let id = app.add_address(MALLORY, VICTIM).await;
    let mut judged = 0;
    let mut codes = 1;
    let outcome = loop {
        let right = logs.code_for(&id);
        let reply = app.verify_email(MALLORY, &id, &wrong(&right)).await;
        match reply.status {
            400 => judged += 1,
            // The code's own limit (a new code may come after the resend interval):
            // a resend resets it, within the daily limits.
            429 if reply.body["code"] == "TOO_MANY_ATTEMPTS" && retry_after(&reply) <= 60 => {
                app.clock.advance(retry_after(&reply).try_into().unwrap());
                let again = app.send_verification(MALLORY, &id).await;
                if again.status != 202 {
                    break again;
                }
                codes += 1;
            }
            _ => break reply,
        }
    };
    // Twenty wrong codes per user and address a day, whatever was resent.
    assert_eq!(judged, StoreConfig::DEFAULT_MAX_WRONG_CODES_PER_ADDRESS);
    outcome.assert_problem(429, "TOO_MANY_ATTEMPTS");
    assert!(retry_after(&outcome) > 3_600, "the daily limit, not the code's");
    assert_eq!(codes, 5, "the fifth code is refused its first guess");
    app.assert_invariants().await;
}

/// Strangers who hold an address's count of codes full, and the owner after them.
const STRANGERS: [&str; 3] = [
    MALLORY,
    "5a0d4c8b-6666-4f70-9b82-93a4b5c6d748",
    "6b1e5d9c-7777-4a81-8c93-a4b5c6d7e859",
];
const OWNER: &str = "7c2f6eab-8888-4b92-9da4-b5c6d7e8f96a";

/// Codes one account gets sent to an address, by adding it and resending
/// (a minute apart) until refused; the refusal is returned with the count.
async fn codes_until_refused(app: &TestApp, sub: &str, address: &str) -> (u32, Reply) {
    app.clock.advance(61);
    let added = app.add_email(sub, address).await;
    if added.status != 201 {
        return (0, added);
    }
    let id = added.body["emailId"].as_str().unwrap().to_owned();
    let mut sent = 1;
    loop {
        app.clock.advance(61);
        let reply = app.send_verification(sub, &id).await;
        if reply.status != 202 {
            return (sent, reply);
        }
        sent += 1;
    }
}

#[tokio::test]
async fn one_account_sends_an_address_it_does_not_own_five_codes_a_day() {
    let app = TestApp::spawn_with(|c| c.verification_ttl_seconds = 86_400).await;
    app.sign_up(MALLORY, "mallory@example.com").await;
    let (sent, refused) = codes_until_refused(&app, MALLORY, VICTIM).await;
    assert_eq!(sent, StoreConfig::DEFAULT_MAX_CODES_PER_USER_ADDRESS);
    refused.assert_problem(429, "TOO_MANY_REQUESTS");
    let elapsed = 61 * u64::from(StoreConfig::DEFAULT_MAX_CODES_PER_USER_ADDRESS);
    // The first code (at the add) leaves the window 24 h after it was issued.
    assert_eq!(retry_after(&refused), 86_400 - elapsed);
    // Removing and adding the address again is a code too.
    let id = app.email_id_of(MALLORY, VICTIM).await;
    app.remove_email(MALLORY, &id).await.assert_status(204);
    app.add_email(MALLORY, VICTIM)
        .await
        .assert_problem(429, "TOO_MANY_REQUESTS");
    // Rolling: once the first code is 24 h old, one more may go out.
    app.clock.advance(retry_after(&refused).try_into().unwrap());
    app.add_email(MALLORY, VICTIM).await.assert_status(201);
    app.assert_invariants().await;
}

#[tokio::test]
async fn strangers_codes_never_lock_the_owner_out_and_the_inbox_gets_ten_plus_two_an_account() {
    let logs = LogCapture::default();
    let _guard = logs.install();
    let app = TestApp::spawn_with(|c| c.verification_ttl_seconds = 120).await;
    for (i, stranger) in STRANGERS.iter().enumerate() {
        app.sign_up(stranger, &format!("stranger{i}@example.com")).await;
    }
    app.sign_up(OWNER, "owner.first@example.com").await;
    let per_address = StoreConfig::DEFAULT_MAX_CODES_PER_ADDRESS;
    let per_pair = StoreConfig::DEFAULT_MAX_CODES_PER_USER_ADDRESS;
    let never_crowded_out = user_service::config::CODES_NEVER_CROWDED_OUT;

    // Two strangers fill the address's count: five codes each, the pair's cap.
    let mut mails = 0;
    for stranger in &STRANGERS[..2] {
        let (sent, refused) = codes_until_refused(&app, stranger, VICTIM).await;
        refused.assert_problem(429, "TOO_MANY_REQUESTS");
        assert_eq!(sent, per_pair);
        mails += sent;
        // Their claims lapse (a 2-minute hold here) so the next can add it.
        app.clock.advance(121);
    }
    assert_eq!(mails, per_address, "the address's count is full");

    // A third account still gets its first two codes, and no more.
    let (sent, refused) = codes_until_refused(&app, STRANGERS[2], VICTIM).await;
    assert_eq!(sent, never_crowded_out);
    refused.assert_problem(429, "TOO_MANY_REQUESTS");
    mails += sent;
    assert_eq!(mails, per_address + never_crowded_out, "ten, then two an account");
    // Each of those two codes allows one guess, not five: more accounts buy a
    // stranger more mails to the owner, not more guesses.
    let theirs = app.email_id_of(STRANGERS[2], VICTIM).await;
    let right = logs.code_for(&theirs);
    let guess = app.verify_email(STRANGERS[2], &theirs, &wrong(&right)).await;
    guess.assert_problem(400, "VERIFICATION_FAILED");
    assert_eq!(guess.body["attemptsLeft"], 0);
    app.verify_email(STRANGERS[2], &theirs, &right)
        .await
        .assert_problem(429, "TOO_MANY_ATTEMPTS");
    app.clock.advance(121);

    // The owner adds the address, gets a code, and verifies it: the
    // strangers' twelve codes did not count against them.
    app.clock.advance(61);
    let id = app.add_address(OWNER, VICTIM).await;
    // A typo spends the first code's one try; the resend is the second code.
    let typo = app.verify_email(OWNER, &id, &wrong(&logs.code_for(&id))).await;
    typo.assert_problem(400, "VERIFICATION_FAILED");
    app.clock.advance(61);
    app.send_verification(OWNER, &id).await.assert_status(202);
    let verified = app.verify_email(OWNER, &id, &logs.code_for(&id)).await;
    verified.assert_status(200);
    assert_eq!(verified.body["isVerified"], true);
    app.assert_invariants().await;
}

#[tokio::test]
async fn one_account_sends_thirty_codes_a_day_over_every_address() {
    let app = TestApp::spawn().await;
    app.sign_up(MALLORY, "mallory@example.com").await;
    let per_user = StoreConfig::DEFAULT_MAX_CODES_PER_USER;
    // A new address each time, removed again to stay under the addresses cap.
    for i in 0..per_user {
        let id = app.add_address(MALLORY, &format!("target{i}@example.com")).await;
        app.remove_email(MALLORY, &id).await.assert_status(204);
    }
    let refused = app.add_email(MALLORY, "one.more@example.com").await;
    refused.assert_problem(429, "TOO_MANY_REQUESTS");
    assert!(
        retry_after(&refused) > 86_000,
        "the first of the thirty leaves in a day"
    );
    // Nothing was written for the refused add: the address is free for others.
    app.sign_up(OWNER, "owner@example.com").await;
    app.add_email(OWNER, "one.more@example.com").await.assert_status(201);
    app.assert_invariants().await;
}

/// Fifty wrong guesses at once against one code, with one limit set to 7 and the
/// others out of the way: at most 7 are judged, and then even the right code is refused.
async fn fifty_parallel_guesses(limit: impl FnOnce(&mut StoreConfig)) {
    let app = Arc::new(
        TestApp::spawn_with(|c| {
            c.verification_max_attempts = 100;
            c.max_wrong_codes_per_address = 1_000;
            c.max_wrong_codes_per_user = 1_000;
            limit(c);
        })
        .await,
    );
    let logs = LogCapture::default();
    let right = {
        let _guard = logs.install();
        app.sign_up(MALLORY, "mallory@example.com").await;
        let id = app.add_address(MALLORY, VICTIM).await;
        (id.clone(), logs.code_for(&id))
    };
    let (id, code) = right;
    let replies = join_all((0..50).map(|_| {
        let (app, id, guess) = (Arc::clone(&app), id.clone(), wrong(&code));
        tokio::spawn(async move { app.verify_email(MALLORY, &id, &guess).await })
    }))
    .await;
    let mut judged = 0;
    for reply in replies.into_iter().map(Result::unwrap) {
        match reply.status {
            400 => judged += 1,
            // Refused, or lost every retry against the others: neither judges the code.
            429 | 503 => assert!(
                matches!(
                    reply.body["code"].as_str(),
                    Some("TOO_MANY_ATTEMPTS" | "SERVICE_UNAVAILABLE")
                ),
                "{reply:?}"
            ),
            _ => panic!("{reply:?}"),
        }
    }
    assert!(judged <= 7, "{judged} wrong codes judged past a limit of 7");
    // Whatever contention left unused, one at a time the limit is reached exactly.
    while app.verify_email(MALLORY, &id, &wrong(&code)).await.status == 400 {
        judged += 1;
    }
    assert_eq!(judged, 7);
    app.verify_email(MALLORY, &id, &code)
        .await
        .assert_problem(429, "TOO_MANY_ATTEMPTS");
    app.assert_invariants().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_parallel_guesses_cannot_pass_the_per_code_limit() {
    fifty_parallel_guesses(|c| c.verification_max_attempts = 7).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_parallel_guesses_cannot_pass_the_per_address_limit() {
    fifty_parallel_guesses(|c| c.max_wrong_codes_per_address = 7).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_parallel_guesses_cannot_pass_the_per_user_limit() {
    fifty_parallel_guesses(|c| c.max_wrong_codes_per_user = 7).await;
}

#[tokio::test]
async fn a_squatter_cannot_block_the_owners_sign_up() {
    let app = TestApp::spawn().await;
    app.sign_up(MALLORY, "mallory@example.com").await;
    let id = app.add_address(MALLORY, VICTIM).await;
    // Resending kept the claim alive forever before; now it changes nothing.
    for _ in 0..3 {
        app.clock.advance(61);
        app.send_verification(MALLORY, &id).await.assert_status(202);
    }
    // The owner signs up with the address: pre-sign-up lets it through...
    let owner = "5a6b7c8d-2222-4e3f-9a0b-1c2d3e4f5a6b";
    app.pre_sign_up(owner, VICTIM)
        .await
        .expect("an unverified claim never blocks a sign-up");
    // ...and the confirmed sign-up takes the squatter's claim over.
    app.sign_up(owner, VICTIM).await;
    let owners = app.get_account(owner).await;
    assert_eq!(owners.body["profile"]["email"], VICTIM);
    let squatters = app.get_account(MALLORY).await;
    assert_eq!(squatters.body["emails"].as_array().unwrap().len(), 1);
    app.assert_invariants().await;
}

#[tokio::test]
async fn an_unverified_address_is_held_an_hour_a_day_at_most() {
    let app = TestApp::spawn().await;
    app.sign_up(MALLORY, "mallory@example.com").await;
    let grace = "7c8d9e0f-3333-4a5b-8c9d-0e1f2a3b4c5d";
    app.sign_up(grace, "grace@example.com").await;
    let id = app.add_address(MALLORY, VICTIM).await;
    app.clock.advance(3_599);
    app.add_email(grace, VICTIM).await.assert_problem(409, "EMAIL_TAKEN");
    // Removing and adding it again within the day does not restart the hour.
    app.remove_email(MALLORY, &id).await.assert_status(204);
    app.add_address(MALLORY, VICTIM).await;
    app.clock.advance(1);
    app.add_email(grace, VICTIM).await.assert_status(201);
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_table_export_and_the_index_reveal_no_code() {
    let app = TestApp::spawn().await;
    let logs = LogCapture::default();
    let _guard = logs.install();
    app.sign_up(MALLORY, "mallory@example.com").await;
    let id = app.add_address(MALLORY, VICTIM).await;
    let code = logs.code_for(&id);
    app.verify_email(MALLORY, &id, &wrong(&code)).await.assert_status(400);

    let table = &app.store.config().table_name;
    let items = integration_tests::invariants::scan(app.store.client(), table).await;
    let export = format!("{items:?}");
    assert!(!export.contains(&code), "a plain code in the table");
    // The stored hash is keyed: without the key, hashing the 10^6 codes finds nothing.
    let email_id = user_service::domain::EmailId::parse(&id).unwrap();
    let candidate = user_service::verification::VerificationCode::parse(&code).unwrap();
    let stored = candidate.hash(&integration_tests::ddb::test_key(), email_id);
    assert!(export.contains(&stored));
    let other = user_service::verification_key::VerificationKey::from_secret(&[0; 32]).unwrap();
    assert!(!export.contains(&candidate.hash(&other, email_id)));
    // Counters name addresses by a keyed hash only.
    for item in &items {
        let key = |k| keys::key_string(item, k).unwrap_or_default().to_owned();
        if keys::classify(&key(keys::PK), &key(keys::SK)) == ItemKind::Limit {
            assert!(!format!("{item:?}").contains("example.com"), "{item:?}");
        }
    }

    // GSI1 holds keys and what the look-up reads, never verification data.
    let index = app
        .store
        .client()
        .scan()
        .table_name(table)
        .index_name(keys::GSI1)
        .send()
        .await
        .unwrap()
        .items
        .unwrap_or_default();
    assert_eq!(index.len(), 2);
    let allowed: Vec<&str> = [keys::PK, keys::SK, keys::GSI1PK, keys::GSI1SK]
        .into_iter()
        .chain(keys::GSI1_PROJECTED)
        .collect();
    for item in index {
        for name in item.keys() {
            assert!(allowed.contains(&name.as_str()), "GSI1 carries {name}");
        }
    }
}

#[tokio::test]
async fn format_characters_are_refused_and_nothing_is_written() {
    let app = TestApp::spawn().await;
    app.sign_up(MALLORY, "mallory@example.com").await;
    let before = app.item_count().await;
    for email in [
        "vic\u{200b}tim@example.com",
        "victim@exa\u{200d}mple.com",
        "\u{feff}victim@example.com",
        "victim\u{202e}@example.com",
        "vïctim@example.com",
    ] {
        let reply = app.add_email(MALLORY, email).await;
        reply.assert_problem(400, "VALIDATION_FAILED");
        assert_eq!(reply.body["field"], "email");
    }
    for name in ["Ad\u{200b}a", "\u{202e}adA", "Ada\u{2066}"] {
        let reply = app.update_profile(MALLORY, "\"1\"", json!({ "firstName": name })).await;
        reply.assert_problem(400, "VALIDATION_FAILED");
        assert_eq!(reply.body["field"], "firstName");
    }
    let err = app.pre_sign_up("x", "vic\u{200b}tim@example.com").await.unwrap_err();
    assert!(err.error_message.starts_with("VALIDATION_FAILED"));
    // A confirmation with such an address creates nobody.
    assert!(app.post_confirmation("y", "vic\u{2060}tim@example.com").await.is_err());
    assert_eq!(app.item_count().await, before);
}

#[tokio::test]
async fn availability_checks_stop_at_the_daily_limit_and_read_nothing_past_it() {
    let app = TestApp::spawn_with(|c| c.max_availability_checks = 5).await;
    app.sign_up(ADA, "ada@example.com").await;
    app.sign_up(ADMIN, "grace@example.com").await;
    // Five checks answer, whatever the address; the sixth is refused before any read.
    for (i, address) in [
        "grace@example.com",
        "nobody@example.com",
        "a@example.com",
        "b@example.com",
        "c@example.com",
    ]
    .iter()
    .enumerate()
    {
        let reply = app.check_email(ADA, address).await;
        reply.assert_status(200);
        assert_eq!(reply.body["available"], i != 0, "{address}");
    }
    let refused = app.check_email(ADA, "grace@example.com").await;
    refused.assert_problem(429, "TOO_MANY_REQUESTS");
    let wait: u64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&wait), "{wait}");
    assert!(refused.body.get("available").is_none(), "nothing read past the limit");
    // Another user is not held back by Ada's checks.
    app.check_email(ADMIN, "ada@example.com").await.assert_status(200);
    // A day later the window has moved on.
    app.clock.advance(86_400);
    app.check_email(ADA, "grace@example.com").await.assert_status(200);
    // Parallel checks cannot pass the limit: the counter is pinned in each write.
    app.clock.advance(86_400);
    let replies = futures::future::join_all((0..12).map(|i| {
        let app = &app;
        async move { app.check_email(ADA, &format!("p{i}@example.com")).await.status }
    }))
    .await;
    let answered = replies.iter().filter(|s| **s == 200).count();
    assert!(answered <= 5, "{replies:?}");
    assert!(replies.iter().all(|s| [200, 429, 503].contains(s)), "{replies:?}");
    app.assert_invariants().await;
}
