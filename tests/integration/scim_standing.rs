//! A directory's power is what the organization gave it (issue 56, item 1),
//! against DynamoDB Local and moto's Cognito: it manages the addresses, the
//! primary and the names only of accounts it provisioned whose role is
//! `member`. An admin's token cannot take over the owner; a stranger who
//! proved one mailbox at a domain links a person there but never re-addresses
//! or renames them; a member promoted between the directory's read and its
//! write is refused by the write's own condition.

use serde_json::json;
use user_service::domain::{Actor, Role, ScimTokenName, UserId};
use user_service::provisioning;
use user_service::scim::{ScimType, ScimUser};
use user_service::store::{ScimClient, ScimMember, StoreError};

use crate::handler_support::*;
use crate::scim_users::{Directory, refused_with};

fn sub() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn user(sub: &str) -> UserId {
    UserId::parse_sub(sub).unwrap()
}

/// What the person holds: their profile (primary, names, version: a moved
/// Cognito address is a new version) and every address.
async fn holdings(app: &TestApp, id: &UserId) -> String {
    let profile = app.store.get_profile(id).await.unwrap();
    let mut emails: Vec<String> = app
        .store
        .list_emails(id)
        .await
        .unwrap()
        .iter()
        .map(|e| format!("{} {} {}", e.email.as_str(), e.is_verified, e.is_primary))
        .collect();
    emails.sort();
    format!("{profile:?} {emails:?}")
}

impl Directory {
    pub(crate) async fn post(
        &self,
        client: &ScimClient,
        body: serde_json::Value,
    ) -> Result<ScimMember, provisioning::Refused> {
        let scim = ScimUser::from_json(&body).unwrap();
        provisioning::create(
            &self.app.store,
            self.app.users.as_ref().unwrap(),
            client,
            &scim,
            self.app.clock.now(),
        )
        .await
    }

    async fn put_as(
        &self,
        client: &ScimClient,
        id: &UserId,
        body: serde_json::Value,
    ) -> Result<ScimMember, provisioning::Refused> {
        let change = provisioning::Change::Replace(ScimUser::from_json(&body).unwrap());
        provisioning::update(&self.app.store, client, id, &change, None, self.app.clock.now()).await
    }

    async fn patch_as(
        &self,
        client: &ScimClient,
        id: &UserId,
        operations: serde_json::Value,
    ) -> Result<ScimMember, provisioning::Refused> {
        let patch = user_service::scim::Patch::parse(&json!({ "Operations": operations })).unwrap();
        let change = provisioning::Change::Patch(patch);
        provisioning::update(&self.app.store, client, id, &change, None, self.app.clock.now()).await
    }

    /// A member of the organization in `role`, signed up at the domain.
    async fn colleague(&self, local: &str, role: Role) -> String {
        let who = sub();
        self.app.sign_up(&who, &self.at(local)).await;
        let joined = self
            .app
            .store
            .join_organization(self.org, &user(&who), role, self.app.clock.now())
            .await
            .unwrap();
        assert!(joined);
        who
    }
}

fn mutability(refused: &provisioning::Refused) {
    assert_eq!(refused.error.scim_type, Some(ScimType::Mutability), "{}", refused.error);
}

#[tokio::test]
async fn an_admins_token_cannot_take_over_the_owner() {
    let dir = Box::pin(Directory::start()).await;
    let owner = user(&dir.owner);
    let admin = dir.colleague("admin", Role::Admin).await;
    // The admin makes a token of their own (admins may).
    let now = dir.app.clock.now();
    let made = dir
        .app
        .store
        .create_scim_token(
            &Actor::Member(user(&admin)),
            dir.org,
            &ScimTokenName::parse("mine").unwrap(),
            now,
        )
        .await
        .unwrap();
    let theirs = ScimClient {
        org: dir.org,
        token: made.info.token_id,
    };
    let before = holdings(&dir.app, &owner).await;
    // The link of the owner is refused: an owner is never adopted.
    let link = dir
        .post(
            &theirs,
            json!({ "userName": "boss", "emails": [{ "value": dir.at("owner"), "primary": true }] }),
        )
        .await;
    mutability(&refused_with(link, 400));
    // Nor are they reached by id.
    let put = dir
        .put_as(
            &theirs,
            &owner,
            json!({ "userName": "boss", "emails": [{ "value": dir.at("attacker+o"), "primary": true }] }),
        )
        .await;
    refused_with(put, 404);
    assert_eq!(
        holdings(&dir.app, &owner).await,
        before,
        "the owner's account as it was"
    );
    // The admin's own account is not the directory's either.
    let admin_link = dir
        .post(
            &theirs,
            json!({ "userName": "me", "emails": [{ "value": dir.at("admin"), "primary": true }] }),
        )
        .await;
    mutability(&refused_with(admin_link, 400));
    let members = dir.app.store.my_organizations(&owner).await.unwrap();
    assert_eq!(members[0].role, Role::Owner);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_strangers_directory_links_a_person_but_never_re_addresses_or_renames_them() {
    // The directory's owner proved the domain with one mailbox there.
    let dir = Box::pin(Directory::start()).await;
    let victim = sub();
    dir.app.sign_up(&victim, &dir.at("victim")).await;
    let id = user(&victim);
    dir.app
        .store
        .update_profile(
            &id,
            &user_service::domain::IfMatch::Any,
            &user_service::domain::ProfilePatch {
                first_name: Some(user_service::domain::PersonName::parse("Vera").unwrap()),
                ..Default::default()
            },
            dir.app.clock.now(),
        )
        .await
        .unwrap();
    let before = holdings(&dir.app, &id).await;
    let linked = dir
        .post(
            &dir.client,
            json!({ "userName": "victim", "emails": [
                { "value": dir.at("victim"), "primary": true }, { "value": dir.at("attacker") }
            ] }),
        )
        .await
        .unwrap();
    assert_eq!(linked.id, id);
    assert!(!linked.facts.provisioned);
    assert_eq!(
        holdings(&dir.app, &id).await,
        before,
        "a link adds none of the other addresses listed"
    );
    // The takeover's PUT: a new primary at the domain.
    let put = dir
        .put_as(
            &dir.client,
            &id,
            json!({ "userName": "victim", "emails": [{ "value": dir.at("attacker+v"), "primary": true }] }),
        )
        .await;
    mutability(&refused_with(put, 400));
    // Entra ID's way: a PATCH of the work address, and one that adds beside it.
    let patch = dir
        .patch_as(
            &dir.client,
            &id,
            json!([{ "op": "replace", "path": "emails", "value": [{ "value": dir.at("attacker+w"), "primary": true }] }]),
        )
        .await;
    refused_with(patch, 400);
    let add = dir
        .patch_as(
            &dir.client,
            &id,
            json!([{ "op": "add", "path": "emails", "value": [{ "value": dir.at("attacker+a") }] }]),
        )
        .await;
    mutability(&refused_with(add, 400));
    // Names: the person's own, never written (the directory's own names move).
    let renamed = dir
        .patch_as(
            &dir.client,
            &id,
            json!([
                { "op": "replace", "path": "name.givenName", "value": "Mallory" },
                { "op": "replace", "path": "userName", "value": "v.2" },
            ]),
        )
        .await
        .unwrap();
    assert_eq!(renamed.user.user_name.as_str(), "v.2");
    assert_eq!(
        renamed.user.given_name, None,
        "a linked member's names are not shown to the directory"
    );
    assert_eq!(
        holdings(&dir.app, &id).await,
        before,
        "addresses, primary, names and version as they were"
    );
    // Its standing: suspend, reactivate, remove, and the person keeps every address.
    let suspended = dir
        .patch_as(
            &dir.client,
            &id,
            json!([{ "op": "replace", "path": "active", "value": false }]),
        )
        .await
        .unwrap();
    assert!(!suspended.user.active);
    dir.patch_as(
        &dir.client,
        &id,
        json!([{ "op": "replace", "path": "active", "value": true }]),
    )
    .await
    .unwrap();
    provisioning::delete(&dir.app.store, &dir.client, &id, None, dir.app.clock.now())
        .await
        .unwrap();
    assert!(dir.app.store.my_organizations(&id).await.unwrap().is_empty());
    assert_eq!(
        holdings(&dir.app, &id).await,
        before,
        "a linked member leaves with every address"
    );
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_member_promoted_after_the_directorys_read_is_refused_by_the_write() {
    let dir = Box::pin(Directory::start()).await;
    // A member the directory made, so its addresses are the directory's to change…
    let made = dir
        .post(
            &dir.client,
            json!({ "userName": "ada", "emails": [{ "value": dir.at("ada"), "primary": true }] }),
        )
        .await
        .unwrap();
    assert!(made.facts.provisioned);
    // …until an owner makes them an admin, after the directory read them.
    let org = dir.org.to_string();
    dir.app
        .set_member_role(&dir.owner, &org, made.id.as_str(), "admin")
        .await
        .assert_status(200);
    let before = holdings(&dir.app, &made.id).await;
    // The store's writes read the membership afresh: only their condition stands between.
    let now = dir.app.clock.now();
    let address = user_service::domain::EmailAddress::parse(&dir.at("ada.2")).unwrap();
    let refused = dir
        .app
        .store
        .scim_add_address(&dir.client, &made.id, &address, now)
        .await
        .unwrap_err();
    assert!(matches!(refused, StoreError::RoleRequired), "{refused:?}");
    // The engine, from the read on: the admin's User is refused whole.
    let put = dir
        .put_as(
            &dir.client,
            &made.id,
            json!({ "userName": "ada", "active": false, "emails": [{ "value": dir.at("ada"), "primary": true }] }),
        )
        .await;
    mutability(&refused_with(put, 400));
    let delete = provisioning::delete(&dir.app.store, &dir.client, &made.id, None, now).await;
    mutability(&delete.unwrap_err());
    // The same User again, as a routine sync sends it: no write, no error.
    let same = dir
        .put_as(
            &dir.client,
            &made.id,
            json!({ "userName": "ada", "emails": [{ "value": dir.at("ada"), "primary": true }] }),
        )
        .await
        .unwrap();
    assert_eq!(same.version.profile, made.version.profile);
    assert_eq!(holdings(&dir.app, &made.id).await, before);
    let role = dir.app.store.my_organizations(&made.id).await.unwrap()[0].role;
    assert_eq!(role, Role::Admin);
    dir.app.assert_invariants().await;
}
