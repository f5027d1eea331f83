//! Organizations' domains through the store, against DynamoDB Local: one
//! organization per domain (two claiming at once, one wins), consumer and
//! disposable domains refused, a lapsed pending claim taken over, the proof
//! by an owner's or admin's verified address at the domain, enrollment only
//! on a verified domain, and a deletion that releases every claim. The
//! address rules a join meets (a verified domain among them) run through the
//! routes in `invitations.rs`.

use futures::future::join_all;
use user_service::domain::{Actor, DomainStatus, EmailAddress, Enrollment, OrgDomain, OrgId, UserId};
use user_service::store::StoreError;
use user_service::verification::VerificationCode;

use crate::handler_support::*;

fn sub() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn user(sub: &str) -> UserId {
    UserId::parse_sub(sub).unwrap()
}

fn domain(raw: &str) -> OrgDomain {
    OrgDomain::parse(raw).unwrap()
}

/// A signed-up owner of a fresh organization.
async fn owner_of_organization(app: &TestApp) -> (String, OrgId) {
    let s = sub();
    app.sign_up(&s, &format!("owner.{s}@example.com")).await;
    let reply = app.create_organization(&s, "Acme", &format!("o-{}", &sub()[..8])).await;
    reply.assert_status(201);
    (s, OrgId::parse(reply.body["orgId"].as_str().unwrap()).unwrap())
}

/// `address` added to `sub`'s account and verified; its id.
async fn verified_address(app: &TestApp, sub: &str, address: &str) -> user_service::domain::EmailId {
    let code = VerificationCode::parse("111111").unwrap();
    let now = app.clock.now();
    let id = app
        .store
        .add_email(&user(sub), &EmailAddress::parse(address).unwrap(), &code, now)
        .await
        .unwrap()
        .email_id;
    app.store.verify_email(&user(sub), id, &code, now).await.unwrap();
    id
}

#[tokio::test]
async fn one_organization_per_domain_when_two_claim_it_at_once() {
    let app = TestApp::spawn().await;
    for round in 0..4 {
        let d = domain(&format!("acme{round}.example"));
        let mut owners = Vec::new();
        for _ in 0..4 {
            owners.push(owner_of_organization(&app).await);
        }
        let actors: Vec<(Actor, OrgId)> = owners.iter().map(|(o, org)| (Actor::Member(user(o)), *org)).collect();
        let claims = join_all(
            actors
                .iter()
                .map(|(actor, org)| app.store.claim_domain(actor, *org, &d, app.clock.now())),
        )
        .await;
        let won = claims.iter().filter(|c| c.is_ok()).count();
        assert_eq!(won, 1, "{claims:?}");
        assert!(
            claims
                .iter()
                .filter_map(|c| c.as_ref().err())
                .all(|e| matches!(e, StoreError::DomainTaken)),
            "{claims:?}"
        );
    }
    app.assert_invariants().await;
}

#[tokio::test]
async fn consumer_and_disposable_domains_cannot_be_claimed() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let actor = Actor::Member(user(&owner));
    for (raw, reason) in [
        ("gmail.com", "consumer_domain"),
        ("outlook.com", "consumer_domain"),
        ("mailinator.com", "disposable_domain"),
    ] {
        let refused = app
            .store
            .claim_domain(&actor, org, &domain(raw), app.clock.now())
            .await
            .unwrap_err();
        match refused {
            StoreError::DomainNotClaimable(r) => assert_eq!(r.code(), reason, "{raw}"),
            other => panic!("{raw}: {other:?}"),
        }
    }
    assert!(app.store.list_domains(&actor, org).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_lapsed_pending_claim_is_taken_over_and_a_verified_one_is_not() {
    let app = TestApp::spawn().await;
    let (squatter, theirs) = owner_of_organization(&app).await;
    let (owner, ours) = owner_of_organization(&app).await;
    let d = domain("acme.example");
    let squat = Actor::Member(user(&squatter));
    let us = Actor::Member(user(&owner));
    app.store
        .claim_domain(&squat, theirs, &d, app.clock.now())
        .await
        .unwrap();
    assert!(matches!(
        app.store.claim_domain(&us, ours, &d, app.clock.now()).await,
        Err(StoreError::DomainTaken)
    ));
    app.clock.advance(user_service::config::DOMAIN_PENDING_DAYS * 86_400);
    let claimed = app.store.claim_domain(&us, ours, &d, app.clock.now()).await.unwrap();
    assert_eq!(claimed.status, DomainStatus::Pending);
    assert!(
        app.store.list_domains(&squat, theirs).await.unwrap().is_empty(),
        "theirs went with it"
    );

    // Proved by an owner's verified address at it; from then on it is held for good.
    let proof = verified_address(&app, &owner, "it@acme.example").await;
    let verified = app
        .store
        .verify_domain(&us, ours, &d, proof, app.clock.now())
        .await
        .unwrap();
    assert_eq!(verified.status, DomainStatus::Verified);
    app.clock.advance(30 * 86_400);
    assert!(matches!(
        app.store.claim_domain(&squat, theirs, &d, app.clock.now()).await,
        Err(StoreError::DomainTaken)
    ));
    app.assert_invariants().await;
}

#[tokio::test]
async fn only_a_verified_address_at_the_domain_proves_it_and_enrollment_needs_the_proof() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let us = Actor::Member(user(&owner));
    let d = domain("acme.example");
    app.store.claim_domain(&us, org, &d, app.clock.now()).await.unwrap();
    assert!(matches!(
        app.store.set_enrollment(&us, org, &d, Enrollment::Invite).await,
        Err(StoreError::DomainNotVerified)
    ));
    let elsewhere = verified_address(&app, &owner, "me@other.example").await;
    assert!(matches!(
        app.store.verify_domain(&us, org, &d, elsewhere, app.clock.now()).await,
        Err(StoreError::DomainNotProven)
    ));
    // Someone else's address at the domain proves nothing for this owner.
    let (other, _) = owner_of_organization(&app).await;
    let theirs = verified_address(&app, &other, "them@acme.example").await;
    assert!(matches!(
        app.store.verify_domain(&us, org, &d, theirs, app.clock.now()).await,
        Err(StoreError::DomainNotProven)
    ));
    // An address at the domain, not verified yet, proves nothing either.
    let code = VerificationCode::parse("111111").unwrap();
    let pending = app
        .store
        .add_email(
            &user(&owner),
            &EmailAddress::parse("me@acme.example").unwrap(),
            &code,
            app.clock.now(),
        )
        .await
        .unwrap()
        .email_id;
    assert!(matches!(
        app.store.verify_domain(&us, org, &d, pending, app.clock.now()).await,
        Err(StoreError::DomainNotProven)
    ));
    app.store
        .verify_email(&user(&owner), pending, &code, app.clock.now())
        .await
        .unwrap();
    app.store
        .verify_domain(&us, org, &d, pending, app.clock.now())
        .await
        .unwrap();
    let set = app
        .store
        .set_enrollment(&us, org, &d, Enrollment::Invite)
        .await
        .unwrap();
    assert_eq!(set.enrollment, Enrollment::Invite);
    // A plain member has no say.
    let (member, _) = owner_of_organization(&app).await;
    app.store
        .join_organization(org, &user(&member), user_service::domain::Role::Member, app.clock.now())
        .await
        .unwrap();
    assert!(matches!(
        app.store
            .set_enrollment(&Actor::Member(user(&member)), org, &d, Enrollment::None)
            .await,
        Err(StoreError::RoleRequired)
    ));
    app.assert_invariants().await;
}

#[tokio::test]
async fn a_deleted_organization_releases_its_domains_and_removal_frees_one() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let us = Actor::Member(user(&owner));
    for n in 0..3 {
        app.store
            .claim_domain(&us, org, &domain(&format!("d{n}.example")), app.clock.now())
            .await
            .unwrap();
    }
    app.store.remove_domain(&us, org, &domain("d0.example")).await.unwrap();
    assert!(matches!(
        app.store.remove_domain(&us, org, &domain("d0.example")).await,
        Err(StoreError::DomainNotFound)
    ));
    let (other, theirs) = owner_of_organization(&app).await;
    let them = Actor::Member(user(&other));
    app.store
        .claim_domain(&them, theirs, &domain("d0.example"), app.clock.now())
        .await
        .unwrap();
    let version = app.store.get_organization(&us, org).await.unwrap().0.version;
    app.store
        .delete_organization(
            &us,
            org,
            &user_service::domain::IfMatch::Versions(vec![version]),
            app.clock.now(),
        )
        .await
        .unwrap();
    // Its two domains are free at once; the purge deletes their records.
    for n in 1..3 {
        app.store
            .claim_domain(&them, theirs, &domain(&format!("d{n}.example")), app.clock.now())
            .await
            .unwrap();
    }
    app.purge_organizations().await.unwrap();
    assert_eq!(app.store.list_domains(&them, theirs).await.unwrap().len(), 3);
    app.assert_invariants().await;
}

#[tokio::test]
async fn an_organization_claims_at_most_its_maximum_of_domains() {
    let app = TestApp::spawn().await;
    let (owner, org) = owner_of_organization(&app).await;
    let us = Actor::Member(user(&owner));
    let max = user_service::config::MAX_DOMAINS_PER_ORGANIZATION;
    for n in 0..max {
        app.store
            .claim_domain(&us, org, &domain(&format!("m{n}.example")), app.clock.now())
            .await
            .unwrap();
    }
    assert!(matches!(
        app.store
            .claim_domain(&us, org, &domain("one-more.example"), app.clock.now())
            .await,
        Err(StoreError::DomainLimitReached)
    ));
    assert_eq!(app.store.list_domains(&us, org).await.unwrap().len(), max as usize);
    app.assert_invariants().await;
}

// ---- Through the routes ----

/// An owner with a fresh organization, through the routes: (sub, orgId).
async fn owner(app: &TestApp) -> (String, String) {
    let (s, org) = owner_of_organization(app).await;
    (s, org.to_string())
}

/// A signed-up user with a verified address at `domain` (their second); (sub, its emailId).
async fn person_at(app: &TestApp, label: &str, domain: &str) -> (String, String) {
    let s = sub();
    app.sign_up(&s, &format!("{label}.{s}@example.com")).await;
    let id = verified_address(app, &s, &format!("{label}.{}@{domain}", &s[..8])).await;
    (s, id.to_string())
}

#[tokio::test]
async fn a_domain_is_claimed_proved_and_opened_to_its_users_through_the_routes() {
    let app = TestApp::spawn().await;
    let (ada, org) = owner(&app).await;
    let d = format!("acme-{}.example", &sub()[..8]);
    let claimed = app.claim_domain(&ada, &org, &d.to_uppercase()).await;
    claimed.assert_status(201);
    assert_eq!(claimed.body["domain"], d.as_str(), "one spelling");
    assert_eq!(claimed.body["status"], "pending");
    app.claim_domain(&ada, &org, "gmail.com")
        .await
        .assert_problem(422, "DOMAIN_NOT_ALLOWED");
    assert_eq!(
        app.claim_domain(&ada, &org, "gmail.com").await.body["reason"],
        "consumer_domain"
    );
    app.update_domain(&ada, &org, &d, "invite")
        .await
        .assert_problem(409, "DOMAIN_NOT_VERIFIED");

    let proof = verified_address(&app, &ada, &format!("ada@{d}")).await;
    let verified = app.verify_domain(&ada, &org, &d, &proof.to_string()).await;
    verified.assert_status(200);
    assert_eq!(verified.body["status"], "verified");

    // Suggest: users at the domain see it, and need an invitation.
    app.update_domain(&ada, &org, &d, "suggest").await.assert_status(200);
    let (grace, grace_at) = person_at(&app, "grace", &d).await;
    let seen = app.suggest_organizations(&grace).await;
    seen.assert_status(200);
    assert_eq!(seen.body["suggestions"][0]["orgId"], org.as_str());
    assert_eq!(seen.body["suggestions"][0]["enrollment"], "suggest");
    assert_eq!(seen.body["suggestions"][0]["emailId"], grace_at.as_str());
    app.join_by_domain(&grace, &org, &grace_at)
        .await
        .assert_problem(403, "ENROLLMENT_NOT_OPEN");

    // Invite: they join at once, once, however often they ask.
    app.update_domain(&ada, &org, &d, "invite").await.assert_status(200);
    let joined = app.join_by_domain(&grace, &org, &grace_at).await;
    joined.assert_status(200);
    assert_eq!(joined.body["role"], "member");
    let again = app.join_by_domain(&grace, &org, &grace_at).await;
    again.assert_status(200);
    assert_eq!(again.body["joinedAt"], joined.body["joinedAt"]);
    let seen = app.suggest_organizations(&grace).await;
    assert_eq!(seen.body["suggestions"], serde_json::json!([]), "a member now");

    // Anyone else: an address elsewhere, or someone else's, opens nothing.
    let (mallory, mallory_at) = person_at(&app, "mallory", "other.example").await;
    app.join_by_domain(&mallory, &org, &mallory_at)
        .await
        .assert_problem(403, "ENROLLMENT_NOT_OPEN");
    app.join_by_domain(&mallory, &org, &grace_at)
        .await
        .assert_problem(403, "ENROLLMENT_NOT_OPEN");
    // A plain member has no say over the domains; a stranger learns nothing.
    app.list_domains(&grace, &org)
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    app.list_domains(&mallory, &org)
        .await
        .assert_problem(404, "ORGANIZATION_NOT_FOUND");

    // Removed: free for others at once, and nobody enrolls by it any more.
    app.remove_domain(&ada, &org, &d).await.assert_status(204);
    let (bob, bob_at) = person_at(&app, "bob", &d).await;
    app.join_by_domain(&bob, &org, &bob_at)
        .await
        .assert_problem(403, "ENROLLMENT_NOT_OPEN");
    let (other, theirs) = owner(&app).await;
    app.claim_domain(&other, &theirs, &d).await.assert_status(201);
    app.assert_invariants().await;
}

#[tokio::test]
async fn an_organizations_address_rules_apply_at_every_join() {
    let app = TestApp::spawn().await;
    let (ada, org) = owner(&app).await;
    let d = format!("rules-{}.example", &sub()[..8]);
    let (grace, grace_email) = {
        let s = sub();
        let email = format!("grace+work.{}@example.com", &s[..8]);
        app.sign_up(&s, &email).await;
        (s, email)
    };
    // An invitation sent before the rules changed meets them at its accept.
    let early = app
        .store
        .invite(
            &Actor::Member(user(&ada)),
            OrgId::parse(&org).unwrap(),
            &EmailAddress::parse(&grace_email).unwrap(),
            user_service::domain::Role::Member,
            app.clock.now(),
        )
        .await
        .unwrap()
        .token
        .encode();
    let set = app
        .update_organization(
            &ada,
            &org,
            "\"1\"",
            serde_json::json!({ "rules": { "blockSubaddresses": true } }),
        )
        .await;
    set.assert_status(200);
    assert_eq!(set.body["rules"]["blockSubaddresses"], true);
    assert_eq!(set.body["version"], 2);
    let refused = app.accept_invitation(&grace, &early).await;
    refused.assert_problem(422, "ADDRESS_NOT_ALLOWED");
    assert_eq!(refused.body["reason"], "subaddress");
    // A new invitation to such an address is refused when it is sent.
    app.create_invitation(&ada, &org, &grace_email, "member")
        .await
        .assert_problem(422, "ADDRESS_NOT_ALLOWED");

    // Only its verified domains: an address elsewhere is refused, one there joins.
    let proof = verified_address(&app, &ada, &format!("ada@{d}")).await;
    app.claim_domain(&ada, &org, &d).await.assert_status(201);
    app.verify_domain(&ada, &org, &d, &proof.to_string())
        .await
        .assert_status(200);
    app.update_organization(
        &ada,
        &org,
        "\"2\"",
        serde_json::json!({ "rules": { "verifiedDomainsOnly": true } }),
    )
    .await
    .assert_status(200);
    let (bob, bob_email) = {
        let s = sub();
        let email = format!("bob.{}@example.com", &s[..8]);
        app.sign_up(&s, &email).await;
        (s, email)
    };
    app.create_invitation(&ada, &org, &bob_email, "member")
        .await
        .assert_problem(422, "ADDRESS_NOT_ALLOWED");
    let (carol, carol_at) = person_at(&app, "carol", &d).await;
    let carol_email = app
        .store
        .list_emails(&user(&carol))
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.email_id.to_string() == carol_at)
        .unwrap()
        .email;
    let sent = app.create_invitation(&ada, &org, carol_email.as_str(), "member").await;
    sent.assert_status(201);
    let token = app
        .store
        .invite(
            &Actor::Member(user(&ada)),
            OrgId::parse(&org).unwrap(),
            &carol_email,
            user_service::domain::Role::Member,
            app.clock.now(),
        )
        .await
        .unwrap()
        .token
        .encode();
    // The domain removed before the accept: the rule refuses it then.
    app.remove_domain(&ada, &org, &d).await.assert_status(204);
    let late = app.accept_invitation(&carol, &token).await;
    late.assert_problem(422, "ADDRESS_NOT_ALLOWED");
    assert_eq!(late.body["reason"], "domain_not_allowed");
    // An empty change is bad input.
    app.update_organization(&ada, &org, "\"3\"", serde_json::json!({}))
        .await
        .assert_problem(400, "VALIDATION_FAILED");
    let _ = bob;
    app.assert_invariants().await;
}
