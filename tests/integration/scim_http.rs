//! The SCIM routes over HTTP, as a directory calls them: the bearer token
//! proven first (missing, wrong, revoked: 401; another organization's: it
//! sees none of this one's users), the discovery documents and the
//! protocol's 404, 405 and 501, a create answered with its `Location` and
//! ETag, reads and lists with `attributes`, pages by `startIndex`, PATCH
//! under `If-Match`, and malformed filters refused as `invalidFilter` with
//! nothing written. Against DynamoDB Local and moto's Cognito.

use integration_tests::http::Reply;
use integration_tests::test_app::ScimRequest;
use serde_json::{Value, json};
use user_service::domain::{Actor, ScimTokenName, UserId};

use crate::scim_users::Directory;

impl Directory {
    async fn get(&self, path: &str) -> Reply {
        self.app.scim(ScimRequest::new("GET", path, Some(&self.token))).await
    }

    async fn send(&self, method: &str, path: &str, body: &Value) -> Reply {
        self.app
            .scim(ScimRequest::new(method, path, Some(&self.token)).body(body))
            .await
    }

    async fn post_user(&self, local: &str, external_id: &str) -> Reply {
        let body = json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "userName": self.at(local),
            "externalId": external_id,
            "name": { "givenName": local, "familyName": "Tester" },
            "emails": [{ "value": self.at(local), "type": "work", "primary": true }],
            "active": true,
        });
        self.send("POST", "Users", &body).await
    }
}

fn assert_scim_error(reply: &Reply, status: u16, scim_type: Option<&str>) {
    assert_eq!(reply.status, status, "{}", reply.body);
    assert_eq!(reply.headers["content-type"], "application/scim+json", "{}", reply.body);
    assert_eq!(
        reply.body["schemas"],
        json!(["urn:ietf:params:scim:api:messages:2.0:Error"])
    );
    assert_eq!(reply.body["status"], status.to_string());
    assert_eq!(reply.body["scimType"].as_str(), scim_type, "{}", reply.body);
}

#[tokio::test]
async fn discovery_declares_what_is_served_and_the_rest_is_404_405_or_501() {
    let dir = Box::pin(Directory::start()).await;
    let config = dir.get("ServiceProviderConfig").await;
    assert_eq!(config.status, 200);
    assert_eq!(config.headers["content-type"], "application/scim+json");
    assert_eq!(config.body["patch"]["supported"], true);
    assert_eq!(config.body["bulk"]["supported"], false);
    assert_eq!(
        config.body["meta"]["location"],
        "https://api.example/scim/v2/ServiceProviderConfig"
    );
    let types = dir.get("ResourceTypes").await;
    assert_eq!((types.status, &types.body["totalResults"]), (200, &json!(1)));
    assert_eq!(types.body["Resources"][0]["endpoint"], "/Users");
    assert_eq!(
        dir.get("ResourceTypes/User").await.body["schema"],
        "urn:ietf:params:scim:schemas:core:2.0:User"
    );
    let schema = dir.get("Schemas/urn:ietf:params:scim:schemas:core:2.0:User").await;
    assert_eq!(schema.status, 200);
    assert!(
        schema.body["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "userName")
    );
    // Read-only documents, unknown paths, and what the service does not do.
    let posted = dir.send("POST", "Schemas", &json!({})).await;
    assert_scim_error(&posted, 405, None);
    assert_eq!(posted.headers["allow"], "GET");
    assert_scim_error(&dir.send("PUT", "ServiceProviderConfig", &json!({})).await, 405, None);
    for path in [
        "Groups",
        "ResourceTypes/Group",
        "Schemas/urn:x",
        "0f8fad5b-d9cb-469f-a165-70867728950e",
    ] {
        assert_scim_error(&dir.get(path).await, 404, None);
    }
    assert_scim_error(&dir.send("POST", "Bulk", &json!({})).await, 501, None);
    assert_scim_error(&dir.send("POST", ".search", &json!({})).await, 501, None);
    // Not a sub: no User.
    assert_scim_error(&dir.get("Users/admin").await, 404, None);
}

#[tokio::test]
async fn a_token_missing_wrong_revoked_or_another_organizations_reaches_no_user() {
    let dir = Box::pin(Directory::start()).await;
    let made = dir.post_user("ada", "e-ada").await;
    assert_eq!(made.status, 201, "{}", made.body);
    let ada = made.body["id"].as_str().unwrap().to_owned();
    let path = format!("Users/{ada}");
    // Missing, malformed and forged tokens: 401 with the scheme, nothing read.
    let none = dir.app.scim(ScimRequest::new("GET", &path, None)).await;
    assert_scim_error(&none, 401, None);
    assert_eq!(none.headers["www-authenticate"], "Bearer realm=\"scim\"");
    let mut forged = dir.token.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    for token in ["not-a-token", forged.as_str()] {
        let reply = dir.app.scim(ScimRequest::new("GET", &path, Some(token))).await;
        assert_scim_error(&reply, 401, None);
    }
    // Another organization's token, with its own verified domain: it sees
    // none of this organization's users, by id, by filter or by list.
    let other_owner = uuid::Uuid::new_v4().to_string();
    dir.app.sign_up(&other_owner, "owner@globex.example").await;
    let created = dir.app.create_organization(&other_owner, "Globex", "globex-scim").await;
    let other_org = user_service::domain::OrgId::parse(created.body["orgId"].as_str().unwrap()).unwrap();
    let actor = Actor::Member(UserId::parse_sub(&other_owner).unwrap());
    let now = dir.app.clock.now();
    let other = dir
        .app
        .store
        .create_scim_token(&actor, other_org, &ScimTokenName::parse("Entra").unwrap(), now)
        .await
        .unwrap()
        .token
        .encode();
    let theirs = |method, path| ScimRequest::new(method, path, Some(&other));
    assert_scim_error(&dir.app.scim(theirs("GET", &path)).await, 404, None);
    let patch = json!({ "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{ "op": "replace", "path": "active", "value": false }] });
    assert_scim_error(&dir.app.scim(theirs("PATCH", &path).body(&patch)).await, 404, None);
    let filter = format!("Users?filter=userName%20eq%20%22{}%22", dir.at("ada"));
    let found = dir.app.scim(theirs("GET", &filter)).await;
    assert_eq!(
        (found.status, &found.body["totalResults"]),
        (200, &json!(0)),
        "{}",
        found.body
    );
    let listed = dir.app.scim(theirs("GET", "Users")).await;
    assert_eq!(listed.body["totalResults"], 0);
    // Ada is untouched, and active.
    assert_eq!(dir.get(&path).await.body["active"], true);
    // A revoked token is refused at its next request.
    let token_id = dir.client.token;
    dir.app
        .store
        .revoke_scim_token(
            &Actor::Member(UserId::parse_sub(&dir.owner).unwrap()),
            dir.org,
            token_id,
        )
        .await
        .unwrap();
    assert_scim_error(&dir.get(&path).await, 401, None);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_created_user_is_read_listed_and_paged_as_the_rfc_says() {
    let dir = Box::pin(Directory::start()).await;
    let mut ids = Vec::new();
    for (local, external) in [("ada", "e-1"), ("grace", "e-2"), ("alan", "e-3")] {
        let made = dir.post_user(local, external).await;
        assert_eq!(made.status, 201, "{}", made.body);
        let id = made.body["id"].as_str().unwrap().to_owned();
        assert_eq!(made.headers["content-type"], "application/scim+json");
        assert_eq!(
            made.headers["location"],
            format!("https://api.example/scim/v2/Users/{id}").as_str()
        );
        assert_eq!(made.headers["etag"], made.body["meta"]["version"].as_str().unwrap());
        assert_eq!(made.body["userName"], dir.at(local));
        ids.push(id);
    }
    // A read is the create's resource; `attributes` keeps id, schemas and meta.
    let read = dir.get(&format!("Users/{}", ids[0])).await;
    assert_eq!((read.status, &read.body["name"]["givenName"]), (200, &json!("ada")));
    let slim = dir.get(&format!("Users/{}?attributes=userName", ids[0])).await;
    assert_eq!(slim.body["userName"], dir.at("ada"));
    assert!(slim.body.get("emails").is_none() && slim.body.get("name").is_none());
    assert_eq!(slim.body["id"], ids[0].as_str());
    let without = dir.get(&format!("Users/{}?excludedAttributes=emails", ids[0])).await;
    assert!(without.body.get("emails").is_none() && without.body.get("userName").is_some());
    // Okta's first page, then a page of one from the second: totalResults is the list's.
    let all = dir.get("Users?startIndex=1&count=100").await;
    assert_eq!(
        (all.body["totalResults"].as_u64(), all.body["itemsPerPage"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(
        all.body["schemas"],
        json!(["urn:ietf:params:scim:api:messages:2.0:ListResponse"])
    );
    let mut listed: Vec<String> = all.body["Resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    let page = dir.get("Users?startIndex=2&count=1").await;
    assert_eq!(
        (page.body["totalResults"].as_u64(), page.body["startIndex"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(page.body["Resources"][0]["id"], listed[1].as_str());
    listed.sort();
    let mut made = ids.clone();
    made.sort();
    assert_eq!(
        listed, made,
        "the list is the directory's users, the owner not among them"
    );
    // Past the end, and a count of 0: no resources, the total still told.
    let past = dir.get("Users?startIndex=10").await;
    assert_eq!(
        (past.body["totalResults"].as_u64(), past.body["itemsPerPage"].as_u64()),
        (Some(3), Some(0))
    );
    let none = dir.get("Users?count=0").await;
    assert_eq!(none.body["itemsPerPage"], 0);
    // Entra ID's look-ups, each by its key.
    let by_name = dir
        .get(&format!("Users?filter=userName+eq+%22{}%22", dir.at("GRACE")))
        .await;
    assert_eq!(by_name.body["totalResults"], 1);
    assert_eq!(by_name.body["Resources"][0]["id"], ids[1].as_str());
    let by_external = dir.get("Users?filter=externalId%20eq%20%22e-3%22").await;
    assert_eq!(by_external.body["Resources"][0]["id"], ids[2].as_str());
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn malformed_filters_and_bodies_are_400_and_write_nothing() {
    let dir = Box::pin(Directory::start()).await;
    assert_eq!(dir.post_user("ada", "e-1").await.status, 201);
    let before = integration_tests::invariants::item_count(&dir.app.store).await;
    for filter in [
        "userName%20eq%20%22a%22%20or%20userName%20pr",
        "userName%20co%20%22a%22",
        "userName%20eq%20%22a%22)",
        "userName%20eq%20%22a%5C%22%20or%20%5C%22b%22%20eq%20%22b",
        "name.givenName%20eq%20%22x%22",
        "%22",
        "userName%20eq",
        "emails%5Btype%20eq%20%22work%22%5D.value%20eq%20%22a%22%20and%20(active%20eq%20true",
    ] {
        let reply = dir.get(&format!("Users?filter={filter}")).await;
        assert_eq!(reply.status, 400, "{filter}: {}", reply.body);
        assert_scim_error(&reply, 400, Some("invalidFilter"));
    }
    assert_scim_error(&dir.get("Users?startIndex=x").await, 400, Some("invalidValue"));
    for body in [
        json!({ "userName": "" }),
        json!({ "emails": [{ "value": dir.at("x") }] }),
        json!([1]),
    ] {
        let reply = dir.send("POST", "Users", &body).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
    }
    let raw = dir
        .app
        .scim(ScimRequest::new("POST", "Users", Some(&dir.token)).body(&json!("not an object")))
        .await;
    assert_scim_error(&raw, 400, Some("invalidSyntax"));
    let ada = dir.get("Users").await.body["Resources"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let bad_patch = json!({ "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{ "op": "replace", "path": "emails[type eq \"work\" or 1 eq 1].value", "value": "x" }] });
    let reply = dir.send("PATCH", &format!("Users/{ada}"), &bad_patch).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(integration_tests::invariants::item_count(&dir.app.store).await, before);
}

#[tokio::test]
async fn patch_under_if_match_deactivates_and_reactivates_and_a_stale_version_is_412() {
    let dir = Box::pin(Directory::start()).await;
    let made = dir.post_user("ada", "e-1").await;
    let id = made.body["id"].as_str().unwrap().to_owned();
    let path = format!("Users/{id}");
    let etag = made.headers["etag"].to_str().unwrap().to_owned();
    // Entra ID's default shape: "Replace", and "False" as a string.
    let off = json!({ "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{ "op": "Replace", "path": "active", "value": "False" }] });
    let stale = "W/\"9-9\"";
    let refused = dir
        .app
        .scim(
            ScimRequest::new("PATCH", &path, Some(&dir.token))
                .body(&off)
                .headers(&[("if-match", stale)]),
        )
        .await;
    assert_scim_error(&refused, 412, None);
    assert_eq!(dir.get(&path).await.body["active"], true);
    let done = dir
        .app
        .scim(
            ScimRequest::new("PATCH", &path, Some(&dir.token))
                .body(&off)
                .headers(&[("if-match", &etag)]),
        )
        .await;
    assert_eq!(
        (done.status, &done.body["active"]),
        (200, &json!(false)),
        "{}",
        done.body
    );
    assert_ne!(done.headers["etag"].to_str().unwrap(), etag);
    // The list by `active` sees the change.
    let inactive = dir.get("Users?filter=active%20eq%20false").await;
    assert_eq!(inactive.body["totalResults"], 1);
    assert_eq!(inactive.body["Resources"][0]["id"], id.as_str());
    assert_eq!(dir.get("Users?filter=active%20eq%20true").await.body["totalResults"], 0);
    // Okta's shape, path-less, reactivates; the old ETag no longer matches.
    let on = json!({ "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{ "op": "replace", "value": { "active": true } }] });
    let old = dir
        .app
        .scim(
            ScimRequest::new("PATCH", &path, Some(&dir.token))
                .body(&on)
                .headers(&[("if-match", &etag)]),
        )
        .await;
    assert_scim_error(&old, 412, None);
    let back = dir.send("PATCH", &path, &on).await;
    assert_eq!((back.status, &back.body["active"]), (200, &json!(true)));
    // A PUT with active: false (Okta's custom integrations) suspends too.
    let mut put = back.body.clone();
    put["active"] = json!(false);
    let replaced = dir.send("PUT", &path, &put).await;
    assert_eq!(
        (replaced.status, &replaced.body["active"]),
        (200, &json!(false)),
        "{}",
        replaced.body
    );
    dir.app.assert_invariants().await;
}

/// `address` added to `id`'s account and verified by the person.
pub(crate) async fn verified_by_the_person(dir: &Directory, id: &UserId, address: &str) {
    use user_service::domain::EmailAddress;
    use user_service::verification::VerificationCode;
    let code = VerificationCode::parse("111111").unwrap();
    let now = dir.app.clock.now();
    let added = dir
        .app
        .store
        .add_email(id, &EmailAddress::parse(address).unwrap(), &code, now)
        .await
        .unwrap();
    dir.app
        .store
        .verify_email(id, added.email_id, &code, now)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_delete_erases_what_the_directory_made_and_alone_uses() {
    let dir = Box::pin(Directory::start()).await;
    let made = dir.post_user("ada", "e-1").await;
    let id = UserId::parse_sub(made.body["id"].as_str().unwrap()).unwrap();
    let path = format!("Users/{id}");
    // A stale If-Match changes nothing.
    let stale = dir
        .app
        .scim(ScimRequest::new("DELETE", &path, Some(&dir.token)).headers(&[("if-match", "W/\"9-9\"")]))
        .await;
    assert_scim_error(&stale, 412, None);
    let etag = made.headers["etag"].to_str().unwrap().to_owned();
    let gone = dir
        .app
        .scim(ScimRequest::new("DELETE", &path, Some(&dir.token)).headers(&[("if-match", &etag)]))
        .await;
    assert_eq!(gone.status, 204, "{}", gone.body);
    // Erased: no profile a reader sees, no address, no membership, no names.
    assert!(
        !matches!(dir.app.store.get_profile(&id).await, Ok(p) if p.status == user_service::domain::UserStatus::Active)
    );
    assert!(dir.app.store.list_emails(&id).await.map_or(true, |e| e.is_empty()));
    assert!(dir.app.store.my_organizations(&id).await.map_or(true, |o| o.is_empty()));
    // The address is free: an account signing up with it now is new.
    let again = uuid::Uuid::new_v4().to_string();
    dir.app.sign_up(&again, &dir.at("ada")).await;
    let holder = dir
        .app
        .store
        .list_emails(&UserId::parse_sub(&again).unwrap())
        .await
        .unwrap();
    assert_eq!(holder[0].email.as_str(), dir.at("ada"));
    assert_scim_error(&dir.get(&path).await, 404, None);
    let by_name = dir
        .get(&format!("Users?filter=userName%20eq%20%22{}%22", dir.at("ada")))
        .await;
    assert_eq!(by_name.body["totalResults"], 0);
    // Entra ID's delete sent again: 404, nothing else happens.
    let again = dir.app.scim(ScimRequest::new("DELETE", &path, Some(&dir.token))).await;
    assert_scim_error(&again, 404, None);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_delete_of_an_account_another_organization_or_the_person_uses_only_ends_the_membership() {
    let dir = Box::pin(Directory::start()).await;
    // Ada: made by the directory with two domain addresses, then a member of
    // another organization too. Grace: made by it, then verified a
    // personal address of her own.
    let body = json!({ "userName": "ada", "emails": [
        { "value": dir.at("ada"), "primary": true }, { "value": dir.at("ada.lovelace") }
    ] });
    let made = dir.send("POST", "Users", &body).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let ada = UserId::parse_sub(made.body["id"].as_str().unwrap()).unwrap();
    let other_owner = uuid::Uuid::new_v4().to_string();
    dir.app.sign_up(&other_owner, "owner@globex.example").await;
    let other = dir.app.create_organization(&other_owner, "Globex", "globex-del").await;
    let other_org = user_service::domain::OrgId::parse(other.body["orgId"].as_str().unwrap()).unwrap();
    let now = dir.app.clock.now();
    dir.app
        .store
        .join_organization(other_org, &ada, user_service::domain::Role::Member, now)
        .await
        .unwrap();
    let made = dir.post_user("grace", "e-2").await;
    let grace = UserId::parse_sub(made.body["id"].as_str().unwrap()).unwrap();
    verified_by_the_person(&dir, &grace, "grace@personal.example").await;

    for id in [&ada, &grace] {
        let reply = dir
            .app
            .scim(ScimRequest::new("DELETE", &format!("Users/{id}"), Some(&dir.token)))
            .await;
        assert_eq!(reply.status, 204, "{}", reply.body);
        // The account lives on, active, its primary kept; this organization is gone from it.
        let profile = dir.app.store.get_profile(id).await.unwrap();
        assert_eq!(profile.status, user_service::domain::UserStatus::Active);
        let orgs = dir.app.store.my_organizations(id).await.unwrap();
        assert!(orgs.iter().all(|m| m.organization.org_id != dir.org), "{orgs:?}");
        assert_scim_error(&dir.get(&format!("Users/{id}")).await, 404, None);
    }
    // Ada keeps Globex and her primary; the organization's other address left her.
    let ada_orgs = dir.app.store.my_organizations(&ada).await.unwrap();
    assert_eq!(ada_orgs.len(), 1);
    let emails: Vec<String> = dir
        .app
        .store
        .list_emails(&ada)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.email.as_str().to_owned())
        .collect();
    assert_eq!(emails, [dir.at("ada")]);
    // Grace keeps both her addresses: her primary and her own.
    assert_eq!(dir.app.store.list_emails(&grace).await.unwrap().len(), 2);
    // The directory's names are free again: a new create may use them.
    assert_eq!(dir.get("Users").await.body["totalResults"], 0);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_directory_cannot_delete_or_suspend_an_owner() {
    let dir = Box::pin(Directory::start()).await;
    // The owner, found by their own address at the domain, is never adopted.
    let linked = dir
        .send(
            "POST",
            "Users",
            &json!({ "userName": "owner", "emails": [{ "value": dir.at("owner"), "primary": true }] }),
        )
        .await;
    assert_scim_error(&linked, 400, Some("mutability"));
    // Nor deleted, nor suspended, by id: not the directory's member.
    let id = dir.owner.clone();
    let reply = dir
        .app
        .scim(ScimRequest::new("DELETE", &format!("Users/{id}"), Some(&dir.token)))
        .await;
    assert_scim_error(&reply, 404, None);
    let reply = dir
        .send(
            "PATCH",
            &format!("Users/{id}"),
            &json!({ "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                "Operations": [{ "op": "replace", "path": "active", "value": false }] }),
        )
        .await;
    assert_scim_error(&reply, 404, None);
    let owner = UserId::parse_sub(&dir.owner).unwrap();
    let orgs = dir.app.store.my_organizations(&owner).await.unwrap();
    assert_eq!(orgs.len(), 1);
    assert_eq!(orgs[0].role, user_service::domain::Role::Owner);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn an_erasure_planned_before_the_account_found_another_use_refuses_in_its_write() {
    let dir = Box::pin(Directory::start()).await;
    let mut ids = Vec::new();
    for (local, external) in [("ada", "e-1"), ("grace", "e-2")] {
        let made = dir.post_user(local, external).await;
        ids.push(UserId::parse_sub(made.body["id"].as_str().unwrap()).unwrap());
    }
    let (ada, grace) = (&ids[0], &ids[1]);
    let now = dir.app.clock.now();
    let (domains, _) = dir.app.store.scim_facts(dir.org, &[], now).await.unwrap();
    // Both read as the directory's alone: an erasure is planned for each.
    let ada_read = dir.app.store.scim_member(dir.org, ada).await.unwrap();
    let grace_read = dir.app.store.scim_member(dir.org, grace).await.unwrap();
    assert!(ada_read.facts.alone(&domains) && grace_read.facts.alone(&domains));
    // Then Ada joins another organization, and Grace verifies an address of her own.
    let other_owner = uuid::Uuid::new_v4().to_string();
    dir.app.sign_up(&other_owner, "owner@initech.example").await;
    let other = dir
        .app
        .create_organization(&other_owner, "Initech", "initech-race")
        .await;
    let other_org = user_service::domain::OrgId::parse(other.body["orgId"].as_str().unwrap()).unwrap();
    dir.app
        .store
        .join_organization(other_org, ada, user_service::domain::Role::Member, now)
        .await
        .unwrap();
    verified_by_the_person(&dir, grace, "grace@personal.example").await;
    // The erasures, as planned on the old reads: each write refuses.
    for (id, read) in [(ada, &ada_read), (grace, &grace_read)] {
        let refused = dir
            .app
            .store
            .scim_erase(&dir.client, id, read.version, &domains, now)
            .await
            .unwrap_err();
        assert!(
            matches!(refused, user_service::store::StoreError::VersionMismatch { .. }),
            "{refused:?}"
        );
        assert_eq!(
            dir.app.store.get_profile(id).await.unwrap().status,
            user_service::domain::UserStatus::Active
        );
    }
    // The delete, read and planned again, ends only the membership.
    for id in [ada, grace] {
        let reply = dir
            .app
            .scim(ScimRequest::new("DELETE", &format!("Users/{id}"), Some(&dir.token)))
            .await;
        assert_eq!(reply.status, 204, "{}", reply.body);
    }
    assert_eq!(dir.app.store.my_organizations(ada).await.unwrap().len(), 1);
    assert_eq!(dir.app.store.list_emails(grace).await.unwrap().len(), 2);
    dir.app.assert_invariants().await;
}

#[tokio::test]
async fn a_refusal_is_logged_with_its_scim_type_as_a_plain_string() {
    let dir = Box::pin(Directory::start()).await;
    let logs = integration_tests::logs::LogCapture::default();
    let _guard = logs.install();
    let outside = dir
        .send(
            "POST",
            "Users",
            &json!({ "userName": "ada", "emails": [{ "value": "ada@elsewhere.example", "primary": true }] }),
        )
        .await;
    assert_scim_error(&outside, 400, Some("invalidValue"));
    let refused: Vec<String> = logs
        .lines()
        .iter()
        .map(serde_json::Value::to_string)
        .filter(|line| line.contains("SCIM request refused"))
        .collect();
    assert_eq!(refused.len(), 1, "{}", logs.text());
    assert!(refused[0].contains(r#""scim_type":"invalidValue""#), "{}", refused[0]);
    assert!(!refused[0].contains("Some("), "{}", refused[0]);
    assert!(!logs.text().contains("elsewhere.example"), "no address in the logs");
}
