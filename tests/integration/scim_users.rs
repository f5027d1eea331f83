//! A directory's creates, against DynamoDB Local and moto's Cognito: a new
//! account made verified at the organization's verified domain and joined
//! with the directory's names; an existing account linked by its own
//! verified address, never taken; addresses outside the domains or held by
//! someone else refused with nothing written; one member per userName under
//! concurrent creates; a revoked token writes nothing; a removed member's
//! names are free again.

use futures::future::join_all;
use integration_tests::moto::{Moto, cognito_user};
use serde_json::json;
use user_service::domain::{Actor, OrgId, Role, UserId};
use user_service::identity::UserPool;
use user_service::provisioning;
use user_service::scim::{Filter, ScimUser};
use user_service::store::{ScimClient, ScimMember};

use crate::handler_support::*;

fn sub() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn user(sub: &str) -> UserId {
    UserId::parse_sub(sub).unwrap()
}

/// An organization with a verified domain and a live SCIM token, and the
/// pool its directory makes accounts in (the app's pool too).
pub(crate) struct Directory {
    pub(crate) app: TestApp,
    _moto: Moto,
    cognito: aws_sdk_cognitoidentityprovider::Client,
    pool_id: String,
    pool: UserPool,
    pub(crate) owner: String,
    pub(crate) org: OrgId,
    pub(crate) client: ScimClient,
    pub(crate) domain: String,
    /// The token as the directory sends it.
    pub(crate) token: String,
}

impl Directory {
    pub(crate) async fn start() -> Self {
        Box::pin(Self::start_with(|_| {})).await
    }

    pub(crate) async fn start_with(adjust: impl FnOnce(&mut user_service::config::StoreConfig)) -> Self {
        let mut app = TestApp::spawn_with(adjust).await;
        let moto = Moto::start();
        let (cognito, pool_id, _) = moto.user_pool(&[]).await;
        let pool = UserPool::new(cognito.clone(), &pool_id);
        app.users = Some(pool.clone());
        let owner = sub();
        let domain = format!("acme-{}.example", &sub()[..8]);
        let (client, token) = app
            .directory_organization(&owner, &domain, &format!("o-{}", &sub()[..8]))
            .await;
        let org = client.org;
        Self {
            app,
            _moto: moto,
            cognito,
            pool_id,
            pool,
            owner,
            org,
            client,
            domain,
            token,
        }
    }

    pub(crate) fn at(&self, local: &str) -> String {
        format!("{local}@{}", self.domain)
    }

    async fn create(&self, body: serde_json::Value) -> Result<ScimMember, provisioning::Refused> {
        let scim = ScimUser::from_json(&body).unwrap();
        provisioning::create(&self.app.store, &self.pool, &self.client, &scim, self.app.clock.now()).await
    }

    async fn find(&self, filter: &str) -> Vec<UserId> {
        let filter = Filter::parse(filter).unwrap();
        let found = self
            .app
            .store
            .scim_find(self.org, &filter, self.app.clock.now())
            .await
            .unwrap();
        found.expect("a filter with a key").into_iter().map(|m| m.id).collect()
    }

    async fn cognito_has(&self, id: &UserId) -> bool {
        cognito_user(&self.cognito, &self.pool_id, id.as_str()).await.is_some()
    }
}

pub(crate) fn refused_with(result: Result<ScimMember, provisioning::Refused>, status: u16) -> provisioning::Refused {
    match result {
        Ok(member) => panic!("expected {status}, made {}", member.id),
        Err(refused) => {
            assert_eq!(refused.error.status, status, "{}", refused.error);
            refused
        }
    }
}

#[tokio::test]
async fn a_create_makes_a_verified_account_at_the_domain_and_a_member_found_by_each_key() {
    let dir = Box::pin(Directory::start()).await;
    let ada = dir
        .create(json!({
            "userName": "Ada.Lovelace",
            "externalId": "00u-ada",
            "name": { "givenName": "Ada", "familyName": "Lovelace" },
            "emails": [{ "value": dir.at("ada"), "type": "work", "primary": true }],
            "phoneNumbers": [{ "value": "+44 20 7946 0000", "type": "work" }],
            "active": true,
            "password": "never kept",
        }))
        .await
        .unwrap();
    assert_eq!(ada.user.user_name.as_str(), "Ada.Lovelace");
    assert_eq!(ada.user.primary_email().unwrap().as_str(), dir.at("ada"));
    assert!(ada.user.active && ada.facts.provisioned);
    assert_eq!(ada.version.membership, 1);
    // Cognito has the user, verified, and the profile is theirs.
    let cognito = cognito_user(&dir.cognito, &dir.pool_id, ada.id.as_str()).await.unwrap();
    assert_eq!(
        (cognito.email.as_deref(), cognito.email_verified),
        (Some(dir.at("ada").as_str()), true)
    );
    let emails = dir.app.store.list_emails(&ada.id).await.unwrap();
    assert!(emails.iter().all(|r| r.is_verified && r.is_primary) && emails.len() == 1);
    assert_eq!(dir.app.store.my_organizations(&ada.id).await.unwrap().len(), 1);
    // Each key finds them; names compare without case, externalIds exactly.
    for filter in [
        r#"userName eq "ada.lovelace""#.to_owned(),
        r#"externalId eq "00u-ada""#.to_owned(),
        format!(r#"emails.value eq "{}""#, dir.at("ADA")),
        format!(r#"emails[type eq "work"].value eq "{}""#, dir.at("ada")),
        r#"userName eq "Ada.Lovelace" and active eq true"#.to_owned(),
        format!(r#"id eq "{}""#, ada.id),
    ] {
        assert_eq!(dir.find(&filter).await, std::slice::from_ref(&ada.id), "{filter}");
    }
    for filter in [
        r#"externalId eq "00U-ADA""#,
        r#"userName eq "Ada.Lovelace" and active eq false"#,
        r#"userName eq "grace""#,
    ] {
        assert!(dir.find(filter).await.is_empty(), "{filter}");
    }
    // The owner, a member the directory did not make, is no SCIM user.
    assert!(
        dir.find(&format!(r#"emails.value eq "{}""#, dir.at("owner")))
            .await
            .is_empty()
    );
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn addresses_outside_the_domains_or_held_by_another_are_refused_and_nothing_is_written() {
    let dir = Box::pin(Directory::start()).await;
    let before = integration_tests::invariants::item_count(&dir.app.store).await;
    let outside = dir
        .create(json!({ "userName": "eve", "emails": [{ "value": "eve@gmail.com", "primary": true }] }))
        .await;
    assert_eq!(
        refused_with(outside, 400).error.scim_type,
        Some(user_service::scim::ScimType::InvalidValue)
    );
    // Bob signed up with two addresses at the domain; a directory listing one
    // of them beside a new address takes nothing from him.
    let bob = sub();
    dir.app.sign_up(&bob, &dir.at("bob")).await;
    let before = before + 3;
    let taken = dir
        .create(json!({ "userName": "mallory", "emails": [
            { "value": dir.at("mallory"), "primary": true }, { "value": dir.at("bob") }
        ] }))
        .await;
    assert_eq!(
        refused_with(taken, 409).error.scim_type,
        Some(user_service::scim::ScimType::Uniqueness)
    );
    // Nothing was written, in the table or in Cognito.
    let after = integration_tests::invariants::item_count(&dir.app.store).await;
    // Bob's sign-up wrote his profile, his record and its claim; nothing else.
    assert_eq!(after, before);
    let listed = dir.pool.list_users("", None).await.unwrap();
    assert!(
        listed.users.is_empty(),
        "no Cognito user made: {:?}",
        listed.users.len()
    );
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn an_existing_account_is_linked_by_its_own_verified_address_and_is_not_the_directorys() {
    let dir = Box::pin(Directory::start()).await;
    let grace = sub();
    dir.app.sign_up(&grace, &dir.at("grace")).await;
    let linked = dir
        .create(json!({ "userName": "grace", "emails": [{ "value": dir.at("grace"), "primary": true }] }))
        .await
        .unwrap();
    assert_eq!(linked.id, user(&grace));
    assert!(!linked.facts.provisioned);
    assert!(
        !dir.cognito_has(&linked.id).await,
        "no Cognito user made for an account that exists"
    );
    // A member already, as a member: the directory's names go on that membership.
    let invited = sub();
    dir.app.sign_up(&invited, &dir.at("invited")).await;
    dir.app
        .store
        .join_organization(dir.org, &user(&invited), Role::Member, dir.app.clock.now())
        .await
        .unwrap();
    let adopted = dir
        .create(json!({ "userName": "invited", "emails": [{ "value": dir.at("invited"), "primary": true }] }))
        .await
        .unwrap();
    assert_eq!(adopted.id, user(&invited));
    assert_eq!(adopted.version.membership, 1);
    assert!(!adopted.facts.provisioned);
    // The owner is never adopted: theirs is the owners' to change.
    let owner = dir
        .create(json!({ "userName": "the-owner", "emails": [{ "value": dir.at("owner"), "primary": true }] }))
        .await;
    refused_with(owner, 400);
    let role = dir.app.store.my_organizations(&user(&dir.owner)).await.unwrap()[0].role;
    assert_eq!(role, Role::Owner, "the role stays");
    assert!(dir.find(r#"userName eq "the-owner""#).await.is_empty());
    // Linked twice under another name: the member has one.
    let again = dir
        .create(json!({ "userName": "grace-2", "emails": [{ "value": dir.at("grace") }] }))
        .await;
    refused_with(again, 409);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn concurrent_creates_of_one_user_name_make_one_member() {
    let dir = Box::pin(Directory::start()).await;
    let creates = join_all((0..6).map(|i| {
        dir.create(
            json!({ "userName": "Same.Name", "emails": [{ "value": dir.at(&format!("same{i}")), "primary": true }] }),
        )
    }))
    .await;
    let made: Vec<_> = creates.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(made.len(), 1, "one create wins");
    for refused in creates.iter().filter_map(|r| r.as_ref().err()) {
        assert!(matches!(refused.error.status, 409 | 503), "{}", refused.error);
    }
    assert_eq!(dir.find(r#"userName eq "same.name""#).await, [made[0].id.clone()]);
    // The losers' Cognito users went with their refused writes: one user
    // holds an address in Cognito, the one the table has.
    let listed = dir.pool.list_users("", None).await.unwrap();
    let ids: Vec<UserId> = listed.users.iter().map(|u| u.user_id.clone()).collect();
    assert_eq!(ids, [made[0].id.clone()]);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_revoked_token_writes_nothing_and_a_removed_members_names_are_free_again() {
    let dir = Box::pin(Directory::start()).await;
    let actor = Actor::Member(user(&dir.owner));
    let ada = dir
        .create(
            json!({ "userName": "ada", "externalId": "x-1", "emails": [{ "value": dir.at("ada"), "primary": true }] }),
        )
        .await
        .unwrap();
    // Removed by an owner: both names are released with the membership.
    dir.app.store.remove_member(&actor, dir.org, &ada.id).await.unwrap();
    assert!(dir.find(r#"userName eq "ada""#).await.is_empty());
    dir.app.assert_invariants().await;
    // The same names for someone else.
    let again = dir
        .create(json!({ "userName": "ADA", "externalId": "x-1", "emails": [{ "value": dir.at("ada.b"), "primary": true }] }))
        .await
        .unwrap();
    assert_ne!(again.id, ada.id);
    // Revoked between its proof and its write: refused as the request would be.
    dir.app
        .store
        .revoke_scim_token(&actor, dir.org, dir.client.token)
        .await
        .unwrap();
    let late = dir
        .create(json!({ "userName": "late", "emails": [{ "value": dir.at("late"), "primary": true }] }))
        .await;
    refused_with(late, 401);
    assert!(dir.find(r#"userName eq "late""#).await.is_empty());
    dir.app.assert_invariants().await;
}

impl Directory {
    async fn change(
        &self,
        id: &UserId,
        change: provisioning::Change,
        if_match: Option<&str>,
    ) -> Result<ScimMember, provisioning::Refused> {
        provisioning::update(
            &self.app.store,
            &self.client,
            id,
            &change,
            if_match,
            self.app.clock.now(),
        )
        .await
    }

    async fn patch(
        &self,
        id: &UserId,
        operations: serde_json::Value,
        if_match: Option<&str>,
    ) -> Result<ScimMember, provisioning::Refused> {
        let patch = user_service::scim::Patch::parse(&json!({ "Operations": operations })).unwrap();
        self.change(id, provisioning::Change::Patch(patch), if_match).await
    }
}

#[tokio::test]
async fn patches_and_puts_rename_suspend_and_reactivate_under_their_versions() {
    let dir = Box::pin(Directory::start()).await;
    let ada = dir
        .create(
            json!({ "userName": "ada", "name": { "givenName": "Ada", "familyName": "Byron" },
            "emails": [{ "value": dir.at("ada"), "primary": true }] }),
        )
        .await
        .unwrap();
    // Entra ID's default shape: capitalised, "False".
    let changed = dir
        .patch(
            &ada.id,
            json!([
                { "op": "Replace", "path": "name.familyName", "value": "Lovelace" },
                { "op": "Replace", "path": "active", "value": "False" },
            ]),
            None,
        )
        .await
        .unwrap();
    assert!(!changed.user.active);
    assert_eq!(changed.user.family_name.as_ref().unwrap().as_str(), "Lovelace");
    assert_eq!(changed.version.membership, ada.version.membership + 1);
    assert_eq!(changed.version.profile, ada.version.profile + 1);
    assert_eq!(
        dir.find(r#"userName eq "ada" and active eq false"#).await,
        std::slice::from_ref(&ada.id)
    );
    // Entra ID with aadOptscim062020: a path-less replace with dotted keys.
    let back = dir
        .patch(
            &ada.id,
            json!([{ "op": "replace", "value": { "active": true, "name.givenName": "Augusta" } }]),
            None,
        )
        .await
        .unwrap();
    assert!(back.user.active);
    assert_eq!(back.user.given_name.as_ref().unwrap().as_str(), "Augusta");
    // Okta's custom integration: a PUT of the whole User, here renamed.
    let mut whole = serde_json::Value::Object(back.user.attributes());
    whole["userName"] = json!("Ada.Lovelace");
    whole["externalId"] = json!("00u-ada");
    let renamed = dir
        .change(
            &ada.id,
            provisioning::Change::Replace(ScimUser::from_json(&whole).unwrap()),
            None,
        )
        .await
        .unwrap();
    assert_eq!(renamed.user.user_name.as_str(), "Ada.Lovelace");
    assert!(dir.find(r#"userName eq "ada""#).await.is_empty());
    assert_eq!(
        dir.find(r#"externalId eq "00u-ada""#).await,
        std::slice::from_ref(&ada.id)
    );
    dir.app.assert_invariants().await;
    // If-Match: a stale version is 412 and writes nothing; the current one passes.
    let stale = dir
        .patch(
            &ada.id,
            json!([{ "op": "replace", "path": "name.givenName", "value": "X" }]),
            Some(&ada.version.etag()),
        )
        .await;
    refused_with(stale, 412);
    let current = renamed.version.etag();
    let fresh = dir
        .patch(
            &ada.id,
            json!([{ "op": "replace", "path": "name.givenName", "value": "Ada" }]),
            Some(&current),
        )
        .await;
    assert_eq!(fresh.unwrap().user.given_name.unwrap().as_str(), "Ada");
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn concurrent_patches_lose_no_update_and_one_if_match_wins() {
    let dir = Box::pin(Directory::start()).await;
    let ada = dir
        .create(json!({ "userName": "ada", "emails": [{ "value": dir.at("ada"), "primary": true }] }))
        .await
        .unwrap();
    for round in 0..4 {
        // Without If-Match: each is applied to what the other wrote.
        let given = format!("Given{round}");
        let family = format!("Family{round}");
        let (a, b) = tokio::join!(
            dir.patch(
                &ada.id,
                json!([{ "op": "replace", "path": "name.givenName", "value": given }]),
                None
            ),
            dir.patch(
                &ada.id,
                json!([{ "op": "replace", "path": "name.familyName", "value": family }]),
                None
            ),
        );
        a.unwrap();
        b.unwrap();
        let now = dir.app.store.scim_member(dir.org, &ada.id).await.unwrap();
        assert_eq!(now.user.given_name.unwrap().as_str(), given);
        assert_eq!(now.user.family_name.unwrap().as_str(), family);
        // With the same If-Match: one wins, the other is 412.
        let etag = now.version.etag();
        let (a, b) = tokio::join!(
            dir.patch(
                &ada.id,
                json!([{ "op": "replace", "path": "externalId", "value": format!("a{round}") }]),
                Some(&etag)
            ),
            dir.patch(
                &ada.id,
                json!([{ "op": "replace", "path": "externalId", "value": format!("b{round}") }]),
                Some(&etag)
            ),
        );
        let statuses = [&a, &b].map(|r| r.as_ref().map_or_else(|e| e.error.status, |_| 200));
        assert!(statuses.contains(&200) && statuses.contains(&412), "{statuses:?}");
    }
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_person_the_organization_does_not_alone_use_keeps_their_own_profile() {
    let dir = Box::pin(Directory::start()).await;
    let grace = sub();
    dir.app.sign_up(&grace, &dir.at("grace")).await;
    dir.app
        .create_organization(&grace, "Grace's", &format!("g-{}", &sub()[..8]))
        .await
        .assert_status(201);
    let linked = dir
        .create(json!({ "userName": "grace", "emails": [{ "value": dir.at("grace"), "primary": true }] }))
        .await
        .unwrap();
    let changed = dir
        .patch(
            &linked.id,
            json!([
                { "op": "replace", "path": "name.givenName", "value": "Not Grace" },
                { "op": "replace", "path": "userName", "value": "grace.hopper" },
            ]),
            None,
        )
        .await
        .unwrap();
    // The directory's own names move; the person's profile does not.
    assert_eq!(changed.user.user_name.as_str(), "grace.hopper");
    assert_eq!(changed.user.given_name, linked.user.given_name);
    assert_ne!(changed.user.given_name.as_ref().map(|n| n.as_str()), Some("Not Grace"));
    assert_eq!(changed.version.profile, linked.version.profile);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_suspended_member_has_no_access_at_once_and_an_owner_cannot_be_suspended() {
    let dir = Box::pin(Directory::start()).await;
    let org = dir.org.to_string();
    // Grace signs up at the domain, the directory links her, and she reads the organization.
    let grace = sub();
    dir.app.sign_up(&grace, &dir.at("grace")).await;
    let linked = dir
        .create(json!({ "userName": "grace", "emails": [{ "value": dir.at("grace"), "primary": true }] }))
        .await
        .unwrap();
    dir.app.get_organization(&grace, &org).await.assert_status(200);
    // Deactivated: no access, reading included, from that answer on.
    dir.patch(
        &linked.id,
        json!([{ "op": "Replace", "path": "active", "value": "False" }]),
        None,
    )
    .await
    .unwrap();
    dir.app
        .get_organization(&grace, &org)
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    dir.app
        .list_members(&grace, &org, &[])
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    // Reactivated: back.
    dir.patch(
        &linked.id,
        json!([{ "op": "Replace", "path": "active", "value": "True" }]),
        None,
    )
    .await
    .unwrap();
    dir.app.get_organization(&grace, &org).await.assert_status(200);
    // A user the directory makes inactive joins with no access.
    let idle = dir
        .create(
            json!({ "userName": "idle", "active": false, "emails": [{ "value": dir.at("idle"), "primary": true }] }),
        )
        .await
        .unwrap();
    assert!(!idle.user.active);
    dir.app
        .get_organization(idle.id.as_str(), &org)
        .await
        .assert_problem(403, "ROLE_REQUIRED");
    // The owner cannot be adopted, nor so suspended by the directory: a
    // leaked token could otherwise lock out everyone able to revoke it.
    let refused = dir
        .create(json!({ "userName": "the-owner", "active": false, "emails": [{ "value": dir.at("owner"), "primary": true }] }))
        .await;
    assert_eq!(
        refused_with(refused, 400).error.scim_type,
        Some(user_service::scim::ScimType::Mutability)
    );
    dir.app.get_organization(&dir.owner, &org).await.assert_status(200);
    dir.app.assert_invariants().await;
}
