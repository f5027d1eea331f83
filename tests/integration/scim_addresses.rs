//! A directory's change of a member's addresses, against DynamoDB Local and
//! moto's Cognito: a PUT that adds, switches the primary and removes, each
//! through the API's own writes (the way back of the former primary, the
//! removal that waits for Cognito's sign-in address); Entra ID's PATCH of
//! the work address; an address another account holds refused with nothing
//! written; someone else's claim being verified yielding; a retried PUT; a
//! stale `If-Match`; a person the organization does not alone use keeping
//! their primary; a directory's own add racing a sign-up.

use serde_json::json;
use user_service::domain::{EmailAddress, UserId};
use user_service::provisioning;
use user_service::scim::ScimUser;
use user_service::store::ScimMember;

use crate::scim_users::{Directory, refused_with};

fn sub() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn addresses(member: &ScimMember) -> Vec<(String, bool)> {
    let mut shown: Vec<(String, bool)> = member
        .user
        .emails
        .iter()
        .map(|e| (e.value.as_str().to_owned(), e.primary))
        .collect();
    shown.sort();
    shown
}

impl Directory {
    async fn made(&self, local: &str) -> ScimMember {
        let body = json!({
            "userName": local,
            "emails": [{ "value": self.at(local), "type": "work", "primary": true }],
        });
        let scim = ScimUser::from_json(&body).unwrap();
        provisioning::create(
            &self.app.store,
            self.app.users.as_ref().unwrap(),
            &self.client,
            &scim,
            self.app.clock.now(),
        )
        .await
        .unwrap()
    }

    async fn put(&self, id: &UserId, body: serde_json::Value) -> Result<ScimMember, provisioning::Refused> {
        self.put_if(id, body, None).await
    }

    async fn put_if(
        &self,
        id: &UserId,
        body: serde_json::Value,
        if_match: Option<&str>,
    ) -> Result<ScimMember, provisioning::Refused> {
        let user = ScimUser::from_json(&body).unwrap();
        provisioning::update(
            &self.app.store,
            &self.client,
            id,
            &provisioning::Change::Replace(user),
            if_match,
            self.app.clock.now(),
        )
        .await
    }

    async fn patch_ops(&self, id: &UserId, operations: serde_json::Value) -> Result<ScimMember, provisioning::Refused> {
        let patch = user_service::scim::Patch::parse(&json!({ "Operations": operations })).unwrap();
        provisioning::update(
            &self.app.store,
            &self.client,
            id,
            &provisioning::Change::Patch(patch),
            None,
            self.app.clock.now(),
        )
        .await
    }

    /// What the table's stream consumer does once Cognito holds the new
    /// primary: records it, so that the former primary may leave.
    pub(crate) fn follow_sign_in(&self, id: &UserId) -> tokio::task::JoinHandle<()> {
        let store = self.app.store.clone();
        let id = id.clone();
        tokio::spawn(async move {
            for _ in 0..200 {
                let profile = store.get_profile(&id).await.unwrap();
                if let Some(primary) = profile.email.clone() {
                    store.confirm_cognito_email(&id, &primary).await.unwrap();
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        })
    }
}

#[tokio::test]
async fn a_put_adds_switches_the_primary_and_removes_through_the_apis_writes() {
    let dir = Box::pin(Directory::start()).await;
    let ada = dir.made("ada").await;
    let target = json!({
        "userName": "ada",
        "emails": [
            { "value": dir.at("lovelace"), "type": "work", "primary": true },
            { "value": dir.at("ada.l"), "type": "other" },
        ],
    });
    let consumer = dir.follow_sign_in(&ada.id);
    let changed = dir.put(&ada.id, target.clone()).await.unwrap();
    consumer.abort();
    assert_eq!(
        addresses(&changed),
        vec![(dir.at("ada.l"), false), (dir.at("lovelace"), true)]
    );
    assert_ne!(changed.version, ada.version, "the ETag moves with the addresses");
    let records = dir.app.store.list_emails(&ada.id).await.unwrap();
    assert_eq!(records.len(), 2);
    assert!(
        records.iter().all(|r| r.is_verified),
        "the organization vouches for its domain"
    );
    let profile = dir.app.store.get_profile(&ada.id).await.unwrap();
    assert_eq!(
        profile.email.as_ref().map(EmailAddress::as_str),
        Some(dir.at("lovelace").as_str())
    );
    // The former primary keeps its way back: reserved to the account, so
    // nobody else can take it while the switch can be undone.
    let grace = sub();
    dir.app.sign_up(&grace, &dir.at("grace")).await;
    let taken = dir.app.add_email(&grace, &dir.at("ada")).await;
    taken.assert_status(409);
    // The same PUT again changes nothing more.
    let again = dir.put(&ada.id, target.clone()).await.unwrap();
    assert_eq!(addresses(&again), addresses(&changed));
    assert_eq!(again.version.profile, changed.version.profile);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn entra_ids_patch_of_the_work_address_moves_the_primary_and_a_removal_waits_for_cognito() {
    let dir = Box::pin(Directory::start()).await;
    let ada = dir.made("ada").await;
    let work = json!([{ "op": "Replace", "path": "emails[type eq \"work\"].value", "value": dir.at("a.lovelace") }]);
    // No consumer yet: Cognito still signs Ada in with the former primary,
    // so it cannot leave; the switch is made and the client is told to retry.
    let waiting = dir.patch_ops(&ada.id, work.clone()).await;
    let waiting = refused_with(waiting, 503);
    assert!(waiting.retry_after_secs.is_some());
    let profile = dir.app.store.get_profile(&ada.id).await.unwrap();
    assert_eq!(
        profile.email.as_ref().map(EmailAddress::as_str),
        Some(dir.at("a.lovelace").as_str())
    );
    assert_eq!(dir.app.store.list_emails(&ada.id).await.unwrap().len(), 2);
    dir.app.assert_invariants().await;
    // Once the consumer has moved sign-in, Entra ID's retry finishes it.
    let consumer = dir.follow_sign_in(&ada.id);
    let done = dir.patch_ops(&ada.id, work.clone()).await.unwrap();
    consumer.abort();
    assert_eq!(addresses(&done), vec![(dir.at("a.lovelace"), true)]);
    assert_eq!(dir.app.store.list_emails(&ada.id).await.unwrap().len(), 1);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn an_address_another_account_holds_is_refused_and_a_claim_being_verified_yields() {
    let dir = Box::pin(Directory::start()).await;
    let ada = dir.made("ada").await;
    let grace = sub();
    dir.app.sign_up(&grace, &dir.at("grace")).await;
    let held = dir
        .patch_ops(
            &ada.id,
            json!([{ "op": "add", "path": "emails", "value": [{ "value": dir.at("grace") }] }]),
        )
        .await;
    assert_eq!(
        refused_with(held, 409).error.scim_type,
        Some(user_service::scim::ScimType::Uniqueness)
    );
    let unchanged = dir.app.store.scim_member(dir.org, &ada.id).await.unwrap();
    assert_eq!(addresses(&unchanged), addresses(&ada));
    assert_eq!(unchanged.version, ada.version, "nothing written");

    // Someone verifying an address at the domain yields to the organization's word.
    dir.app.add_email(&grace, &dir.at("shared")).await.assert_status(201);
    let added = dir
        .patch_ops(
            &ada.id,
            json!([{ "op": "add", "path": "emails", "value": [{ "value": dir.at("shared") }] }]),
        )
        .await
        .unwrap();
    assert_eq!(
        addresses(&added),
        vec![(dir.at("ada"), true), (dir.at("shared"), false)]
    );
    let graces = dir
        .app
        .store
        .list_emails(&UserId::parse_sub(&grace).unwrap())
        .await
        .unwrap();
    assert!(graces.iter().all(|r| r.email.as_str() != dir.at("shared")));
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_stale_if_match_writes_no_address_and_a_shared_account_keeps_its_primary() {
    let dir = Box::pin(Directory::start()).await;
    let ada = dir.made("ada").await;
    dir.patch_ops(
        &ada.id,
        json!([{ "op": "replace", "path": "name.givenName", "value": "Ada" }]),
    )
    .await
    .unwrap();
    let stale = dir
        .put_if(
            &ada.id,
            json!({ "userName": "ada", "emails": [{ "value": dir.at("ada") , "primary": true }, { "value": dir.at("more") }] }),
            Some(&ada.version.etag()),
        )
        .await;
    refused_with(stale, 412);
    assert_eq!(
        dir.app.store.list_emails(&ada.id).await.unwrap().len(),
        1,
        "nothing written"
    );

    // A person's own account, linked: its addresses are the person's, never
    // the directory's to add to or to switch.
    let grace = sub();
    dir.app.sign_up(&grace, &dir.at("grace")).await;
    let grace_id = UserId::parse_sub(&grace).unwrap();
    crate::scim_http::verified_by_the_person(&dir, &grace_id, "grace@person.example").await;
    let linked = provisioning::create(
        &dir.app.store,
        dir.app.users.as_ref().unwrap(),
        &dir.client,
        &ScimUser::from_json(
            &json!({ "userName": "grace", "emails": [{ "value": dir.at("grace"), "primary": true }] }),
        )
        .unwrap(),
        dir.app.clock.now(),
    )
    .await
    .unwrap();
    let changed = dir
        .put(
            &linked.id,
            json!({ "userName": "grace", "emails": [{ "value": dir.at("grace") }, { "value": dir.at("g.hopper"), "primary": true }] }),
        )
        .await;
    refused_with(changed, 400);
    let profile = dir.app.store.get_profile(&linked.id).await.unwrap();
    assert_eq!(
        profile.email.as_ref().map(EmailAddress::as_str),
        Some(dir.at("grace").as_str())
    );
    assert_eq!(
        dir.app.store.list_emails(&linked.id).await.unwrap().len(),
        2,
        "nothing added"
    );
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_burst_of_new_accounts_is_paced_and_the_rest_told_to_retry() {
    let dir = Box::pin(Directory::start_with(|c| c.scim_creates_per_second = 2)).await;
    let dir = &dir;
    let create = |local: &str| {
        let body = json!({ "userName": local, "emails": [{ "value": dir.at(local), "primary": true }] });
        let scim = ScimUser::from_json(&body).unwrap();
        async move {
            provisioning::create(
                &dir.app.store,
                dir.app.users.as_ref().unwrap(),
                &dir.client,
                &scim,
                dir.app.clock.now(),
            )
            .await
        }
    };
    create("one").await.unwrap();
    create("two").await.unwrap();
    let third = refused_with(create("three").await, 429);
    assert_eq!(third.retry_after_secs, Some(1));
    assert!(
        dir.app
            .store
            .scim_find(
                dir.org,
                &user_service::scim::Filter::parse("userName eq \"three\"").unwrap(),
                dir.app.clock.now()
            )
            .await
            .unwrap()
            .unwrap()
            .is_empty()
    );
    // A link makes no account: it is never paced.
    let grace = sub();
    dir.app.sign_up(&grace, &dir.at("grace")).await;
    create("grace").await.unwrap();
    // The next second has room again.
    dir.app.clock.advance(1);
    create("three").await.unwrap();
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_patch_that_removes_one_address_by_filter_finishes_and_the_last_is_the_persons_to_keep() {
    let dir = Box::pin(Directory::start()).await;
    let ada = dir.made("ada").await;
    dir.patch_ops(
        &ada.id,
        json!([{ "op": "add", "path": "emails", "value": [{ "value": dir.at("old") }] }]),
    )
    .await
    .unwrap();
    // Applied again after its own removal, the filter would match nothing.
    let removed = dir
        .patch_ops(
            &ada.id,
            json!([{ "op": "remove", "path": format!("emails[value eq \"{}\"]", dir.at("old")) }]),
        )
        .await
        .unwrap();
    assert_eq!(addresses(&removed), vec![(dir.at("ada"), true)]);
    // An account the organization alone uses keeps an address: `emails` is required.
    let last = dir
        .patch_ops(
            &ada.id,
            json!([{ "op": "remove", "path": format!("emails[value eq \"{}\"]", dir.at("ada")) }]),
        )
        .await;
    assert_eq!(
        refused_with(last, 400).error.scim_type,
        Some(user_service::scim::ScimType::Mutability)
    );
    // A person's own account keeps its work address: Entra ID's clearing of
    // `mail` is refused, the address the person's (the membership may end).
    let grace = sub();
    dir.app.sign_up(&grace, "grace@person.example").await;
    let grace_id = UserId::parse_sub(&grace).unwrap();
    crate::scim_http::verified_by_the_person(&dir, &grace_id, &dir.at("grace")).await;
    let linked = provisioning::create(
        &dir.app.store,
        dir.app.users.as_ref().unwrap(),
        &dir.client,
        &ScimUser::from_json(&json!({ "userName": "grace", "emails": [{ "value": dir.at("grace"), "type": "work" }] }))
            .unwrap(),
        dir.app.clock.now(),
    )
    .await
    .unwrap();
    let cleared = dir
        .patch_ops(
            &linked.id,
            json!([{ "op": "Remove", "path": "emails[type eq \"work\"].value" }]),
        )
        .await;
    refused_with(cleared, 400);
    assert_eq!(
        dir.app.store.list_emails(&grace_id).await.unwrap().len(),
        2,
        "the work address stays"
    );
    let profile = dir.app.store.get_profile(&grace_id).await.unwrap();
    assert_eq!(
        profile.email.as_ref().map(EmailAddress::as_str),
        Some("grace@person.example")
    );
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn an_address_the_person_adds_moves_the_etag_so_a_stale_put_cannot_drop_it() {
    let dir = Box::pin(Directory::start()).await;
    let ada = dir.made("ada").await;
    dir.app
        .add_email(ada.id.as_str(), &dir.at("ada.own"))
        .await
        .assert_status(201);
    let now = dir.app.store.scim_member(dir.org, &ada.id).await.unwrap();
    assert_eq!(
        now.version.profile, ada.version.profile,
        "the API's add moves no version"
    );
    assert_ne!(now.version.etag(), ada.version.etag(), "but the addresses shown moved");
    let stale = dir
        .put_if(
            &ada.id,
            json!({ "userName": "ada", "emails": [{ "value": dir.at("ada"), "primary": true }] }),
            Some(&ada.version.etag()),
        )
        .await;
    refused_with(stale, 412);
    let kept = dir.app.store.list_emails(&ada.id).await.unwrap();
    assert!(kept.iter().any(|e| e.email.as_str() == dir.at("ada.own")));
    dir.app.assert_invariants().await;
}
