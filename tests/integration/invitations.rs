//! Invitations through their routes, against DynamoDB Local (and moto's SES
//! for the mail): sending and accepting, the address the invitee must hold
//! verified, lapsed, revoked, replaced and replayed links, the caps that keep
//! an inbox from flooding, the powers, and the races (concurrent accepts, a
//! removal during an accept), each run many times at once.

use futures::future::join_all;
use integration_tests::logs::LogCapture;
use integration_tests::moto::Moto;
use user_service::domain::{EmailAddress, OrgId, Role, UserId, UserStatus};
use user_service::mail::Sender;
use user_service::verification::VerificationCode;

use crate::handler_support::*;

const CODE: &str = "111111";

fn sub() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn user(sub: &str) -> UserId {
    UserId::parse_sub(sub).unwrap()
}

/// A signed-up user with a fresh sub and a verified primary, `label.<sub>@example.com`.
async fn person(app: &TestApp, label: &str) -> (String, String) {
    let s = sub();
    let email = format!("{label}.{s}@example.com");
    app.sign_up(&s, &email).await;
    (s, email)
}

/// `address` added to `sub`'s account, verified when `verify`.
async fn holds(app: &TestApp, sub: &str, address: &str, verify: bool) {
    let code = VerificationCode::parse(CODE).unwrap();
    let now = app.clock.now();
    let added = app
        .store
        .add_email(&user(sub), &EmailAddress::parse(address).unwrap(), &code, now)
        .await
        .unwrap();
    if verify {
        app.store
            .verify_email(&user(sub), added.email_id, &code, now)
            .await
            .unwrap();
    }
}

/// An organization created by `owner`, by its id.
async fn organization(app: &TestApp, owner: &str) -> String {
    let slug = format!("o-{}", &sub()[..8]);
    let reply = app.create_organization(owner, "Acme", &slug).await;
    reply.assert_status(201);
    reply.body["orgId"].as_str().unwrap().to_owned()
}

/// `inviter` invites `email` to `org` in `role` through the store, which
/// hands back the token the mail would carry.
async fn invite(app: &TestApp, inviter: &str, org: &str, email: &str, role: Role) -> String {
    app.store
        .invite(
            &user_service::domain::Actor::Member(user(inviter)),
            OrgId::parse(org).unwrap(),
            &EmailAddress::parse(email).unwrap(),
            role,
            app.clock.now(),
        )
        .await
        .unwrap()
        .token
        .encode()
}

async fn role_of(app: &TestApp, org: &str, member: &str) -> Option<Role> {
    let mine = app.store.my_organizations(&user(member)).await.unwrap();
    mine.into_iter()
        .find(|m| m.organization.org_id.to_string() == org)
        .map(|m| m.role)
}

async fn organizations_counted(app: &TestApp, member: &str) -> u64 {
    let item = integration_tests::ddb::client()
        .get_item()
        .table_name(&app.store.config().table_name)
        .set_key(Some(user_service::store::keys::profile_key(&user(member))))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    item.get("organizations")
        .map_or(0, |n| n.as_n().unwrap().parse().unwrap())
}

#[tokio::test]
async fn an_invitation_goes_by_mail_and_its_token_makes_a_member() {
    let moto = Moto::start();
    let mut app = TestApp::spawn().await;
    app.sender = Some(Sender::Ses(moto.ses_sender().await));
    let logs = LogCapture::default();
    let _guard = logs.install();
    let (ada, _) = person(&app, "ada").await;
    let (grace, grace_email) = person(&app, "grace").await;
    let org = organization(&app, &ada).await;

    let sent = app.create_invitation(&ada, &org, &grace_email, "admin").await;
    sent.assert_status(201);
    assert_eq!(sent.body["role"], "admin");
    assert_eq!(sent.body["email"], grace_email.as_str());
    assert_eq!(sent.body["invitedBy"], ada.as_str());
    let id = sent.body["invitationId"].as_str().unwrap().to_owned();
    let mail = moto.mail_to(&grace_email).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert_eq!(mail[0].subject, "Invitation to join \"Acme\"");
    let token = mail[0].invitation_token().expect("the mail carries the token");

    let listed = app.list_invitations(&ada, &org, &[]).await;
    listed.assert_status(200);
    assert_eq!(listed.body["invitations"][0]["invitationId"], id.as_str());

    let accepted = app.accept_invitation(&grace, &token).await;
    accepted.assert_status(200);
    assert_eq!(accepted.body["role"], "admin");
    assert_eq!(role_of(&app, &org, &grace).await, Some(Role::Admin));
    let listed = app.list_invitations(&ada, &org, &[]).await;
    assert_eq!(listed.body["invitations"], serde_json::json!([]), "used up");
    // Neither the address nor the token reached the log.
    let text = logs.text();
    assert!(!text.contains(&grace_email) && !text.contains(&token), "{text}");
    app.assert_invariants().await;
}

#[tokio::test]
async fn only_the_holder_of_the_address_verified_accepts() {
    let app = TestApp::spawn().await;
    let (ada, _) = person(&app, "ada").await;
    let (grace, _) = person(&app, "grace").await;
    let (mallory, _) = person(&app, "mallory").await;
    let org = organization(&app, &ada).await;
    let address = format!("grace.work.{}@example.com", &sub()[..8]);
    let token = invite(&app, &ada, &org, &address, Role::Member).await;

    // Someone else with the token: they do not hold the address.
    app.accept_invitation(&mallory, &token)
        .await
        .assert_problem(403, "INVITATION_ADDRESS_NOT_HELD");
    // The invitee before verifying it: held, not verified.
    holds(&app, &grace, &address, false).await;
    app.accept_invitation(&grace, &token)
        .await
        .assert_problem(403, "INVITATION_ADDRESS_NOT_HELD");
    assert_eq!(role_of(&app, &org, &grace).await, None);
    // Someone who holds other addresses, verified.
    let (other, _) = person(&app, "other").await;
    app.accept_invitation(&other, &token)
        .await
        .assert_problem(403, "INVITATION_ADDRESS_NOT_HELD");
    app.store
        .verify_email(
            &user(&grace),
            app.store
                .list_emails(&user(&grace))
                .await
                .unwrap()
                .into_iter()
                .find(|e| e.email.as_str() == address)
                .unwrap()
                .email_id,
            &VerificationCode::parse(CODE).unwrap(),
            app.clock.now(),
        )
        .await
        .unwrap();
    app.accept_invitation(&grace, &token).await.assert_status(200);
    assert_eq!(role_of(&app, &org, &grace).await, Some(Role::Member));
    // Not a token at all: bad input, nothing read.
    app.accept_invitation(&grace, "not-a-token")
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_lapsed_a_replaced_and_a_revoked_link_do_nothing() {
    let app = TestApp::spawn().await;
    let (ada, _) = person(&app, "ada").await;
    let (grace, grace_email) = person(&app, "grace").await;
    let org = organization(&app, &ada).await;

    let first = invite(&app, &ada, &org, &grace_email, Role::Member).await;
    app.clock.advance(168 * 3_600);
    app.accept_invitation(&grace, &first)
        .await
        .assert_problem(410, "INVITATION_EXPIRED");

    // Sent again: a new link, and the old one is no longer any good.
    let listed = app.list_invitations(&ada, &org, &[]).await;
    let id = listed.body["invitations"][0]["invitationId"]
        .as_str()
        .unwrap()
        .to_owned();
    app.resend_invitation(&ada, &org, &id).await.assert_status(200);
    let second = invite(&app, &ada, &org, &grace_email, Role::Member).await;
    app.accept_invitation(&grace, &first)
        .await
        .assert_problem(404, "INVITATION_NOT_FOUND");

    app.revoke_invitation(&ada, &org, &id).await.assert_status(204);
    app.revoke_invitation(&ada, &org, &id)
        .await
        .assert_problem(404, "INVITATION_NOT_FOUND");
    app.accept_invitation(&grace, &second)
        .await
        .assert_problem(404, "INVITATION_NOT_FOUND");
    assert_eq!(role_of(&app, &org, &grace).await, None);
    assert_eq!(organizations_counted(&app, &grace).await, 0);
}

#[tokio::test]
async fn an_accept_replayed_gives_the_same_membership_and_a_stranger_nothing() {
    let app = TestApp::spawn().await;
    let (ada, _) = person(&app, "ada").await;
    let (grace, grace_email) = person(&app, "grace").await;
    let (mallory, _) = person(&app, "mallory").await;
    let org = organization(&app, &ada).await;
    let token = invite(&app, &ada, &org, &grace_email, Role::Member).await;

    let first = app.accept_invitation(&grace, &token).await;
    first.assert_status(200);
    app.clock.advance(60);
    let again = app.accept_invitation(&grace, &token).await;
    again.assert_status(200);
    assert_eq!(again.body["joinedAt"], first.body["joinedAt"], "the one membership");
    app.accept_invitation(&mallory, &token)
        .await
        .assert_problem(404, "INVITATION_NOT_FOUND");
    assert_eq!(organizations_counted(&app, &grace).await, 1);

    // A member invited again keeps their role: the invitation is only used up.
    app.set_member_role(&ada, &org, &grace, "admin")
        .await
        .assert_status(200);
    let token = invite(&app, &ada, &org, &grace_email, Role::Member).await;
    app.accept_invitation(&grace, &token).await.assert_status(200);
    assert_eq!(role_of(&app, &org, &grace).await, Some(Role::Admin));
    let listed = app.list_invitations(&ada, &org, &[]).await;
    assert_eq!(listed.body["invitations"], serde_json::json!([]));
    app.assert_invariants().await;
}

#[tokio::test]
async fn twenty_concurrent_accepts_give_one_membership() {
    let app = TestApp::spawn().await;
    let (ada, _) = person(&app, "ada").await;
    for round in 0..3 {
        let (grace, grace_email) = person(&app, &format!("grace{round}")).await;
        let org = organization(&app, &ada).await;
        let token = invite(&app, &ada, &org, &grace_email, Role::Admin).await;
        let mut replies = join_all((0..20).map(|_| app.accept_invitation(&grace, &token))).await;
        // On a loaded DynamoDB Local, 20 writers at once can outlast the
        // invocation's retry budget: that answer is 503 with Retry-After, and a
        // client retries it. Retried once, each must then see the one membership.
        for reply in &mut replies {
            if reply.status == 503 {
                reply.assert_problem(503, "SERVICE_UNAVAILABLE");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                *reply = app.accept_invitation(&grace, &token).await;
            }
        }
        for reply in &replies {
            reply.assert_status(200);
            assert_eq!(reply.body["joinedAt"], replies[0].body["joinedAt"]);
        }
        assert_eq!(role_of(&app, &org, &grace).await, Some(Role::Admin));
        assert_eq!(organizations_counted(&app, &grace).await, 1);
    }
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_member_removed_while_accepting_a_second_invitation_ends_consistent() {
    let app = TestApp::spawn().await;
    let (ada, _) = person(&app, "ada").await;
    let (bob, _) = person(&app, "bob").await;
    for round in 0..6 {
        let (grace, grace_email) = person(&app, &format!("grace{round}")).await;
        let first = organization(&app, &ada).await;
        let second = organization(&app, &bob).await;
        let token = invite(&app, &ada, &first, &grace_email, Role::Member).await;
        app.accept_invitation(&grace, &token).await.assert_status(200);
        // A second invitation to another organization, and one again to the
        // first (a re-invitation), accepted while the first removes her.
        let to_second = invite(&app, &bob, &second, &grace_email, Role::Member).await;
        let again = invite(&app, &ada, &first, &grace_email, Role::Admin).await;
        let (removed, accepted, reaccepted) = tokio::join!(
            app.remove_member(&ada, &first, &grace),
            app.accept_invitation(&grace, &to_second),
            app.accept_invitation(&grace, &again),
        );
        accepted.assert_status(200);
        assert!(matches!(removed.status, 204 | 404), "{removed:?}");
        reaccepted.assert_status(200);
        assert_eq!(role_of(&app, &second, &grace).await, Some(Role::Member));
        // Either order leaves a membership that both halves and the count agree on.
        let in_first = role_of(&app, &first, &grace).await;
        assert!(matches!(in_first, None | Some(Role::Member) | Some(Role::Admin)));
        let expected = 1 + u64::from(in_first.is_some());
        assert_eq!(organizations_counted(&app, &grace).await, expected);
    }
    app.assert_invariants().await;
}

#[tokio::test]
async fn invitations_cannot_flood_an_inbox() {
    let app = TestApp::spawn_with(|c| c.max_invitations_per_organization = 8).await;
    let target = format!("target.{}@example.com", &sub()[..8]);
    // One organization sends one invitation three times a day, no more.
    let (ada, _) = person(&app, "ada").await;
    let org = organization(&app, &ada).await;
    for _ in 0..3 {
        app.create_invitation(&ada, &org, &target, "member")
            .await
            .assert_status(201);
    }
    let refused = app.create_invitation(&ada, &org, &target, "member").await;
    refused.assert_problem(429, "TOO_MANY_REQUESTS");
    assert!(refused.header("retry-after").is_some());
    // The invitations' cap says so, not the verification codes'.
    assert_eq!(
        refused.body["detail"],
        "Too many invitations were sent to this address, or by this organization, in the last 24 hours. \
         Wait the Retry-After seconds."
    );
    // Revoking and inviting again starts no new count.
    let pending = app.list_invitations(&ada, &org, &[]).await;
    let id = pending.body["invitations"][0]["invitationId"]
        .as_str()
        .unwrap()
        .to_owned();
    app.revoke_invitation(&ada, &org, &id).await.assert_status(204);
    app.create_invitation(&ada, &org, &target, "member")
        .await
        .assert_problem(429, "TOO_MANY_REQUESTS");
    // Many organizations (a stranger may make many) share the address's ten.
    let mut sent = 3;
    let mut refusals = 0;
    for round in 0..4 {
        let (owner, _) = person(&app, &format!("owner{round}")).await;
        let org = organization(&app, &owner).await;
        for _ in 0..3 {
            match app.create_invitation(&owner, &org, &target, "member").await.status {
                201 => sent += 1,
                429 => refusals += 1,
                other => panic!("unexpected {other}"),
            }
        }
    }
    assert_eq!((sent, refusals), (10, 5), "the address's cap: 10 a day from everyone");
    // The organization's own cap: 8 a day, to any addresses.
    for n in 1..=5 {
        let to = format!("other{n}.{}@example.com", &sub()[..8]);
        app.create_invitation(&ada, &org, &to, "member")
            .await
            .assert_status(201);
    }
    let to = format!("one.more.{}@example.com", &sub()[..8]);
    app.create_invitation(&ada, &org, &to, "member")
        .await
        .assert_problem(429, "TOO_MANY_REQUESTS");
    // A day later, there is room again.
    app.clock.advance(86_401);
    app.create_invitation(&ada, &org, &to, "member")
        .await
        .assert_status(201);
}

#[tokio::test]
async fn only_owners_and_admins_invite_and_owners_alone_offer_ownership() {
    let app = TestApp::spawn().await;
    let (ada, _) = person(&app, "ada").await;
    let (admin, _) = person(&app, "admin").await;
    let (member, _) = person(&app, "member").await;
    let (stranger, _) = person(&app, "stranger").await;
    let org = organization(&app, &ada).await;
    let id = OrgId::parse(&org).unwrap();
    for (who, role) in [(&admin, Role::Admin), (&member, Role::Member)] {
        app.store
            .join_organization(id, &user(who), role, app.clock.now())
            .await
            .unwrap();
    }
    let to = format!("invitee.{}@example.com", &sub()[..8]);

    app.create_invitation(&member, &org, &to, "member")
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.create_invitation(&stranger, &org, &to, "member")
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.list_invitations(&stranger, &org, &[])
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.list_invitations(&member, &org, &[])
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.create_invitation(&admin, &org, &to, "owner")
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    let sent = app.create_invitation(&ada, &org, &to, "owner").await;
    sent.assert_status(201);
    let invitation = sent.body["invitationId"].as_str().unwrap().to_owned();
    // An admin neither revokes nor resends (downgrades) an owner's invitation.
    app.revoke_invitation(&admin, &org, &invitation)
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.create_invitation(&admin, &org, &to, "member")
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.revoke_invitation(&stranger, &org, &invitation)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    // A suspended owner has no powers.
    app.store
        .set_status(&user(&ada), UserStatus::Suspended, app.clock.now())
        .await
        .unwrap();
    app.create_invitation(&ada, &org, &to, "member")
        .await
        .assert_problem(403, "ACCOUNT_INACTIVE");
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_deleted_organizations_invitations_go_with_it() {
    let app = TestApp::spawn().await;
    let (ada, _) = person(&app, "ada").await;
    let (grace, grace_email) = person(&app, "grace").await;
    let org = organization(&app, &ada).await;
    let token = invite(&app, &ada, &org, &grace_email, Role::Member).await;
    app.delete_organization(&ada, &org, "\"1\"").await.assert_status(202);
    app.accept_invitation(&grace, &token)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");
    app.purge_organizations().await.unwrap();
    app.accept_invitation(&grace, &token)
        .await
        .assert_problem(404, "INVITATION_NOT_FOUND");
    assert_eq!(organizations_counted(&app, &grace).await, 0);
    app.assert_invariants().await;
}

#[tokio::test]
async fn the_export_shows_invitations_to_verified_addresses_and_the_erasure_removes_them() {
    let app = TestApp::spawn().await;
    let (ada, _) = person(&app, "ada").await;
    let (grace, grace_email) = person(&app, "grace").await;
    let org = organization(&app, &ada).await;
    invite(&app, &ada, &org, &grace_email, Role::Admin).await;
    let unverified = format!("grace.new.{}@example.com", &sub()[..8]);
    holds(&app, &grace, &unverified, false).await;
    invite(&app, &ada, &org, &unverified, Role::Member).await;

    let export = app.export_account(&grace).await;
    export.assert_status(200);
    let invitations = export.body["invitations"].as_array().unwrap();
    assert_eq!(invitations.len(), 1, "only the verified address's: {invitations:?}");
    assert_eq!(invitations[0]["orgId"], org.as_str());
    assert_eq!(invitations[0]["role"], "admin");

    let version = app.get_profile(&grace).await.body["version"].clone();
    app.delete_account(&grace, &format!("\"{version}\""))
        .await
        .assert_status(204);
    let listed = app.list_invitations(&ada, &org, &[]).await;
    assert_eq!(listed.body["invitations"], serde_json::json!([]), "both erased");
    app.assert_invariants().await;
}
