//! Scans a table and reports every broken rule. Run after every concurrency test.

use std::collections::HashMap;

use aws_sdk_dynamodb::Client;
use user_service::domain::Role;
use user_service::domain::UserStatus;
use user_service::store::items::{
    ClaimItem, EmailItem, ErasedImportItem, LegacyPasswordItem, MemberItem, OrgStatus, OrganizationItem,
    PrimaryChangeItem, ProfileItem, PurgeItem, SlugItem,
};
use user_service::store::keys::{self, Item, ItemKind};
use user_service::store::limits::LimitItem;

pub async fn scan(client: &Client, table: &str) -> Vec<Item> {
    client
        .scan()
        .table_name(table)
        .consistent_read(true)
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .expect("scan")
}

/// Every violation of the table's rules, one sentence each; empty when all hold.
pub async fn violations(client: &Client, table: &str) -> Vec<String> {
    let mut profiles: HashMap<String, ProfileItem> = HashMap::new();
    let mut records: Vec<EmailItem> = Vec::new();
    let mut claims: HashMap<String, ClaimItem> = HashMap::new();
    let mut legacy: Vec<LegacyPasswordItem> = Vec::new();
    let mut switches: Vec<PrimaryChangeItem> = Vec::new();
    let mut orgs: HashMap<String, OrganizationItem> = HashMap::new();
    let mut members: Vec<MemberItem> = Vec::new();
    let mut memberships: Vec<MemberItem> = Vec::new();
    let mut slugs: HashMap<String, SlugItem> = HashMap::new();
    let mut purges: Vec<String> = Vec::new();
    let mut invitations: Vec<user_service::store::items::InvitationItem> = Vec::new();
    let mut domains: Vec<user_service::store::items::OrgDomainItem> = Vec::new();
    let mut scim_tokens: Vec<user_service::store::items::ScimTokenItem> = Vec::new();
    let mut directory_claims: Vec<(String, String, user_service::store::items::DirectoryClaimItem)> = Vec::new();
    let mut counts: Vec<(String, user_service::store::items::OrgCountsItem)> = Vec::new();
    let mut domain_claims: HashMap<String, user_service::store::items::DomainClaimItem> = HashMap::new();
    let mut holds: Vec<user_service::store::items::SignInHoldItem> = Vec::new();
    let mut out = Vec::new();
    for item in scan(client, table).await {
        let pk = keys::key_string(&item, keys::PK).unwrap_or_default().to_owned();
        let sk = keys::key_string(&item, keys::SK).unwrap_or_default().to_owned();
        let kind = keys::classify(&pk, &sk);
        // GSI2 lists profiles alone.
        if kind != ItemKind::Profile && (item.contains_key(keys::GSI2PK) || item.contains_key(keys::GSI2SK)) {
            out.push(format!("{kind:?} item {pk}/{sk} is in GSI2"));
        }
        match kind {
            ItemKind::Profile => match serde_dynamo::from_item::<_, ProfileItem>(item.clone()) {
                Ok(p) => {
                    // GSI2 files every profile under its status, in creation order.
                    if keys::key_string(&item, keys::GSI2PK) != Some(keys::user_list_pk(p.status, &p.user_id).as_str())
                    {
                        out.push(format!("profile {pk}: GSI2PK is not its status's"));
                    }
                    if keys::key_string(&item, keys::GSI2SK)
                        != Some(keys::user_list_sk(p.created_at, &p.user_id).as_str())
                    {
                        out.push(format!("profile {pk}: GSI2SK is not its creation time and sub"));
                    }
                    profiles.insert(p.user_id.to_string(), p);
                }
                Err(e) => out.push(format!("profile {pk} does not parse: {e}")),
            },
            ItemKind::Email => match serde_dynamo::from_item::<_, EmailItem>(item.clone()) {
                Ok(r) => {
                    // GSI1 finds the record under the form its claim is on.
                    if keys::key_string(&item, keys::GSI1PK) != Some(keys::email_gsi1pk(&r.canonical()).as_str()) {
                        out.push(format!("record {pk}/{sk}: GSI1PK is not its canonical address's"));
                    }
                    if r.canonical_email.as_ref().is_some_and(|c| c.is_spelled(&r.email)) {
                        out.push(format!("record {pk}/{sk}: stores a canonical form that is its address"));
                    }
                    if r.verification_code_hash.is_some() == r.is_verified {
                        out.push(format!("record {pk}/{sk}: code fields do not match isVerified"));
                    }
                    records.push(r)
                }
                Err(e) => out.push(format!("record {pk}/{sk} does not parse: {e}")),
            },
            ItemKind::PrimaryChange => match serde_dynamo::from_item::<_, PrimaryChangeItem>(item.clone()) {
                Ok(c) => {
                    if item.contains_key(keys::GSI1PK) {
                        out.push(format!("switch {pk}/{sk} is in GSI1"));
                    }
                    if sk != keys::change_sk(c.version) || c.former.is_primary {
                        out.push(format!(
                            "switch {pk}/{sk} is not keyed by its version, or its former is primary"
                        ));
                    }
                    switches.push(c);
                }
                Err(e) => out.push(format!("switch {pk}/{sk} does not parse: {e}")),
            },
            ItemKind::Claim => match serde_dynamo::from_item::<_, ClaimItem>(item) {
                Ok(c) => {
                    claims.insert(keys::claim_address(&pk).unwrap_or_default().to_owned(), c);
                }
                Err(e) => out.push(format!("claim {pk} does not parse: {e}")),
            },
            ItemKind::Reconcile => {
                // A snapshot holds subs alone: erasure stays complete.
                if format!("{item:?}").contains('@') || item.contains_key(keys::GSI1PK) {
                    out.push(format!("reconcile item {pk}/{sk} holds an address or is in GSI1"));
                }
                if sk.starts_with("HOLD#") {
                    match serde_dynamo::from_item(item.clone()) {
                        Ok(hold) => holds.push(hold),
                        Err(e) => out.push(format!("hold {pk}/{sk} does not parse: {e}")),
                    }
                }
            }
            ItemKind::Limit => {
                // Erasure stays complete only while no counter holds an address.
                if format!("{item:?}").contains('@') {
                    out.push(format!("limit item {pk}/{sk} holds an address"));
                }
                if item.contains_key(keys::GSI1PK) {
                    out.push(format!("limit item {pk}/{sk} is in GSI1"));
                }
                if let Err(e) = serde_dynamo::from_item::<_, LimitItem>(item) {
                    out.push(format!("limit item {pk}/{sk} does not parse: {e}"));
                }
            }
            ItemKind::LegacyPassword => match serde_dynamo::from_item::<_, LegacyPasswordItem>(item.clone()) {
                Ok(l) => {
                    if item.contains_key(keys::GSI1PK) {
                        out.push(format!("legacy password {pk} is in GSI1"));
                    }
                    legacy.push(l);
                }
                Err(e) => out.push(format!("legacy password {pk} does not parse: {e}")),
            },
            ItemKind::ErasedImport => {
                // What an erasure keeps: the import key (in the key) and a time, nothing else.
                let attributes: std::collections::BTreeSet<&str> = item.keys().map(String::as_str).collect();
                let expected: std::collections::BTreeSet<&str> =
                    [keys::PK, keys::SK, "entityType", "erasedAt"].into_iter().collect();
                if attributes != expected || format!("{item:?}").contains('@') {
                    out.push(format!("erased import {pk} holds more than its key: {attributes:?}"));
                }
                if let Err(e) = serde_dynamo::from_item::<_, ErasedImportItem>(item) {
                    out.push(format!("erased import {pk} does not parse: {e}"));
                }
            }
            ItemKind::Organization => match serde_dynamo::from_item::<_, OrganizationItem>(item) {
                Ok(o) => {
                    orgs.insert(o.org_id.to_string(), o);
                }
                Err(e) => out.push(format!("organization {pk} does not parse: {e}")),
            },
            ItemKind::Member => match serde_dynamo::from_item::<_, MemberItem>(item) {
                Ok(m) => members.push(m),
                Err(e) => out.push(format!("member {pk}/{sk} does not parse: {e}")),
            },
            ItemKind::Membership => match serde_dynamo::from_item::<_, MemberItem>(item) {
                Ok(m) => memberships.push(m),
                Err(e) => out.push(format!("membership {pk}/{sk} does not parse: {e}")),
            },
            ItemKind::SlugClaim => match serde_dynamo::from_item::<_, SlugItem>(item) {
                Ok(c) => {
                    slugs.insert(pk.trim_start_matches("SLUG#").to_owned(), c);
                }
                Err(e) => out.push(format!("slug claim {pk} does not parse: {e}")),
            },
            ItemKind::Purge => match serde_dynamo::from_item::<_, PurgeItem>(item) {
                Ok(p) => purges.push(p.org_id.to_string()),
                Err(e) => out.push(format!("purge {pk}/{sk} does not parse: {e}")),
            },
            ItemKind::Invitation => {
                match serde_dynamo::from_item::<_, user_service::store::items::InvitationItem>(item.clone()) {
                    Ok(i) => {
                        // Found by the invitee's export and erasure under the address.
                        let indexed = keys::key_string(&item, keys::GSI1PK).unwrap_or_default();
                        if !indexed.starts_with("INVITED#") || indexed.len() <= "INVITED#".len() {
                            out.push(format!("invitation {pk}/{sk} is not in GSI1 under its address"));
                        }
                        if keys::invitation_of_sk(&sk) != Some(i.invitation_id) {
                            out.push(format!("invitation {pk}/{sk} is not keyed by its id"));
                        }
                        invitations.push(i);
                    }
                    Err(e) => out.push(format!("invitation {pk}/{sk} does not parse: {e}")),
                }
            }
            ItemKind::OrgDomain => match serde_dynamo::from_item(item) {
                Ok(d) => domains.push(d),
                Err(e) => out.push(format!("domain {pk}/{sk} does not parse: {e}")),
            },
            ItemKind::DomainClaim => match serde_dynamo::from_item(item) {
                Ok(c) => {
                    domain_claims.insert(pk.trim_start_matches("DOMAIN#").to_owned(), c);
                }
                Err(e) => out.push(format!("domain claim {pk} does not parse: {e}")),
            },
            ItemKind::ScimToken => match serde_dynamo::from_item(item) {
                Ok(t) => scim_tokens.push(t),
                Err(e) => out.push(format!("SCIM token {pk}/{sk} does not parse: {e}")),
            },
            ItemKind::DirectoryClaim => match serde_dynamo::from_item(item) {
                Ok(c) => directory_claims.push((pk.clone(), sk.clone(), c)),
                Err(e) => out.push(format!("directory claim {pk}/{sk} does not parse: {e}")),
            },
            ItemKind::OrgCounts => match serde_dynamo::from_item(item) {
                Ok(c) => counts.push((pk.clone(), c)),
                Err(e) => out.push(format!("counts {pk} do not parse: {e}")),
            },
            ItemKind::ScimCursor => {
                if let Err(e) = serde_dynamo::from_item::<_, user_service::store::items::ScimCursorItem>(item) {
                    out.push(format!("cursor {pk}/{sk} does not parse: {e}"));
                }
            }
            ItemKind::Unknown => out.push(format!("unknown item {pk}/{sk}")),
        }
    }
    out.extend(directory_violations(&members, &directory_claims));
    out.extend(count_violations(&orgs, &members, &counts));

    // One owner per address: per canonical form, under the policy each record was claimed with.
    let mut owners: HashMap<String, Vec<&EmailItem>> = HashMap::new();
    for r in &records {
        owners.entry(r.canonical().as_str().to_owned()).or_default().push(r);
    }
    for (address, holders) in &owners {
        if holders.len() > 1 {
            out.push(format!("address {address} is held by {} records", holders.len()));
        }
        for r in holders {
            match claims.get(address) {
                None => out.push(format!("record {}/{} has no claim", r.user_id, r.email_id)),
                Some(c) if c.user_id != r.user_id || c.email_id != r.email_id => out.push(format!(
                    "record {}/{} has a claim of {}/{}",
                    r.user_id, r.email_id, c.user_id, c.email_id
                )),
                Some(c) if c.expires_at.is_some() == r.is_verified => {
                    out.push(format!("claim of {address}: expiresAt does not match isVerified"))
                }
                Some(_) => {}
            }
        }
    }
    for (address, c) in &claims {
        let has_record = records
            .iter()
            .any(|r| r.user_id == c.user_id && r.email_id == c.email_id && r.canonical().as_str() == address);
        // A removed former primary's claim only reserves it, for its own user.
        let reserved = c.is_reservation_only() && profiles.contains_key(c.user_id.as_str());
        if !has_record && !reserved {
            out.push(format!("claim of {address} has no record"));
        }
    }
    // A switch kept for its undoing belongs to a user; a deleted user's are
    // erased by the stream (EraseSwitches), after the erasure's transaction.
    for c in &switches {
        if !profiles.contains_key(c.user_id.as_str()) {
            out.push(format!("switch {}/{} has no profile", c.user_id, c.version));
        }
    }

    for (user, p) in &profiles {
        let mine: Vec<&EmailItem> = records.iter().filter(|r| r.user_id.as_str() == user).collect();
        if p.email_count as usize != mine.len() {
            out.push(format!(
                "user {user}: emailCount {} but {} records",
                p.email_count,
                mine.len()
            ));
        }
        if p.status == UserStatus::Deleted {
            // Erased: a deleted user's profile holds no personal data.
            if p.email.is_some() || p.first_name.is_some() || p.last_name.is_some() || p.phone.is_some() {
                out.push(format!(
                    "user {user}: deleted, but the profile still holds personal data"
                ));
            }
            continue;
        }
        // A recovery's hold is listed, so the reconcile ends it if the stream does not.
        let listed = holds
            .iter()
            .any(|h| h.user_id == p.user_id && Some(h.tokens_valid_after) == p.tokens_valid_after);
        if p.sign_in_held && !listed {
            out.push(format!("user {user}: held from signing in, but no hold item lists it"));
        }
        let primaries: Vec<&&EmailItem> = mine.iter().filter(|r| r.is_primary).collect();
        match primaries.as_slice() {
            [primary] => {
                if !primary.is_verified {
                    out.push(format!("user {user}: primary address is unverified"));
                }
                if p.email.as_ref() != Some(&primary.email) {
                    out.push(format!("user {user}: profile email is not the primary address"));
                }
            }
            other => out.push(format!("user {user}: {} primary addresses", other.len())),
        }
    }
    // A legacy hash belongs to a pending user who is neither migrated nor erased.
    for l in &legacy {
        let live = profiles
            .get(l.user_id.as_str())
            .is_some_and(|p| p.status != UserStatus::Deleted);
        if !l.user_id.is_pending() || !live {
            out.push(format!("legacy password of {} outlived its pending user", l.user_id));
        }
    }
    for r in &records {
        if !profiles.contains_key(r.user_id.as_str()) {
            out.push(format!("record {}/{} has no profile", r.user_id, r.email_id));
        }
    }
    out.extend(organization_violations(
        &profiles,
        &orgs,
        &members,
        &memberships,
        &slugs,
    ));
    // A deleted organization is on the purge's list until it is gone.
    for (id, o) in &orgs {
        if (o.status == OrgStatus::Deleting) != purges.contains(id) {
            out.push(format!(
                "organization {id}: deleting, and on the purge's list, disagree"
            ));
        }
    }
    for id in &purges {
        if orgs.get(id).is_some_and(|o| o.status == OrgStatus::Active) {
            out.push(format!("purge of live organization {id}"));
        }
    }
    // One organization per domain: each claim names a live organization
    // whose record of the domain says the same; each live organization's
    // record has its claim; and the organization counts its records.
    for (name, c) in &domain_claims {
        let live = orgs
            .get(&c.org_id.to_string())
            .is_some_and(|o| o.status == OrgStatus::Active);
        let record = domains
            .iter()
            .find(|d| d.org_id == c.org_id && d.domain.as_str() == name);
        match record {
            Some(d) if live && d.status == c.status && d.enrollment == c.enrollment => {}
            _ => out.push(format!(
                "claim of domain {name} has no matching record of a live organization"
            )),
        }
    }
    for d in &domains {
        let live = orgs
            .get(&d.org_id.to_string())
            .is_some_and(|o| o.status == OrgStatus::Active);
        if live
            && domain_claims
                .get(d.domain.as_str())
                .is_none_or(|c| c.org_id != d.org_id)
        {
            out.push(format!("domain {} of {} has no claim of its own", d.domain, d.org_id));
        }
    }
    for (id, o) in &orgs {
        let held = domains.iter().filter(|d| d.org_id.to_string() == *id).count();
        if o.status == OrgStatus::Active && o.domains as usize != held {
            out.push(format!("organization {id}: counts {} domains, holds {held}", o.domains));
        }
        // The count bounds the tokens; the purge deletes them with the organization.
        let tokens = scim_tokens.iter().filter(|t| t.org_id.to_string() == *id).count();
        if o.status == OrgStatus::Active && o.scim_tokens as usize != tokens {
            out.push(format!(
                "organization {id}: counts {} SCIM tokens, holds {tokens}",
                o.scim_tokens
            ));
        }
    }
    for t in &scim_tokens {
        if !orgs.contains_key(&t.org_id.to_string()) {
            out.push(format!("SCIM token {} of no organization", t.token_id));
        }
    }
    // An invitation lives in its organization's partition, and goes with it.
    for i in &invitations {
        if !orgs.contains_key(&i.org_id.to_string()) {
            out.push(format!("invitation {} of no organization", i.invitation_id));
        }
    }
    out.sort();
    out
}

/// The organizations' rules: every active one has an owner, and its count of
/// owners is its owners; memberships are two-sided, with one role; a user's
/// count is their memberships; one organization per slug, and a deleted one
/// holds none.
fn organization_violations(
    profiles: &HashMap<String, ProfileItem>,
    orgs: &HashMap<String, OrganizationItem>,
    members: &[MemberItem],
    memberships: &[MemberItem],
    slugs: &HashMap<String, SlugItem>,
) -> Vec<String> {
    let mut out = Vec::new();
    let key = |m: &MemberItem| (m.org_id, m.user_id.clone());
    let halves: HashMap<_, Role> = memberships.iter().map(|m| (key(m), m.role)).collect();
    let org_halves: HashMap<_, Role> = members.iter().map(|m| (key(m), m.role)).collect();
    for m in members {
        match halves.get(&key(m)) {
            None => out.push(format!("member {}/{} has no half under the user", m.org_id, m.user_id)),
            Some(role) if *role != m.role => out.push(format!(
                "member {}/{}: its halves disagree on the role",
                m.org_id, m.user_id
            )),
            Some(_) => {}
        }
        if !orgs.contains_key(&m.org_id.to_string()) {
            out.push(format!("member {}/{} of no organization", m.org_id, m.user_id));
        }
        match profiles.get(m.user_id.as_str()) {
            Some(p) if p.status != UserStatus::Deleted => {}
            _ => out.push(format!("member {}/{} is no live user", m.org_id, m.user_id)),
        }
    }
    for m in memberships {
        if !org_halves.contains_key(&key(m)) {
            out.push(format!(
                "membership {}/{} has no half under the organization",
                m.user_id, m.org_id
            ));
        }
    }
    for (id, o) in orgs {
        let owners = members
            .iter()
            .filter(|m| m.org_id.to_string() == *id && m.role == Role::Owner)
            .count();
        if o.status == OrgStatus::Active {
            if owners == 0 {
                out.push(format!("organization {id} has no owner"));
            }
            if o.owners as usize != owners {
                out.push(format!(
                    "organization {id}: owners {} but {owners} owner members",
                    o.owners
                ));
            }
            if slugs.get(o.slug.as_str()).is_none_or(|c| c.org_id != o.org_id) {
                out.push(format!("organization {id} does not hold its slug"));
            }
        }
    }
    for (slug, c) in slugs {
        let held = orgs
            .get(&c.org_id.to_string())
            .is_some_and(|o| o.status == OrgStatus::Active && o.slug.as_str() == slug);
        if !held {
            out.push(format!("slug {slug} is claimed by no live organization holding it"));
        }
    }
    for (user, p) in profiles {
        let count = memberships.iter().filter(|m| m.user_id.as_str() == user).count();
        if p.organizations as usize != count {
            out.push(format!(
                "user {user}: organizations {} but {count} memberships",
                p.organizations
            ));
        }
    }
    out
}

/// A directory's names: each claim names the member that holds the name, and
/// each name a member holds is claimed, once per organization.
/// Each live organization's counts are its members, the directory's, and
/// the suspended among those (a purge removes members without counting).
fn count_violations(
    orgs: &HashMap<String, OrganizationItem>,
    members: &[MemberItem],
    counts: &[(String, user_service::store::items::OrgCountsItem)],
) -> Vec<String> {
    let mut out = Vec::new();
    for (pk, c) in counts {
        let org = pk.trim_start_matches("ORG#");
        let Some(o) = orgs.get(org) else { continue };
        if o.status != user_service::store::items::OrgStatus::Active {
            continue;
        }
        let of: Vec<&MemberItem> = members.iter().filter(|m| m.org_id.to_string() == org).collect();
        let directory: Vec<&&MemberItem> = of.iter().filter(|m| m.directory.is_some()).collect();
        let held = (
            of.len() as i64,
            directory.len() as i64,
            directory.iter().filter(|m| m.suspended).count() as i64,
        );
        // The directory's members and the suspended among them: other joins are not counted.
        if (c.directory_members, c.suspended_members) != (held.1, held.2) {
            out.push(format!(
                "organization {org} counts {:?}, holds {held:?}",
                (c.members, c.directory_members, c.suspended_members)
            ));
        }
    }
    out
}

fn directory_violations(
    members: &[MemberItem],
    claims: &[(String, String, user_service::store::items::DirectoryClaimItem)],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut expected: HashMap<(String, String), String> = HashMap::new();
    for m in members {
        let Some(identity) = &m.directory else { continue };
        let pk = keys::org_pk(m.org_id);
        let name = format!("DIRECTORY#NAME#{}", identity.user_name.to_lowercase());
        if expected.insert((pk.clone(), name), m.user_id.to_string()).is_some() {
            out.push(format!("organization {}: two members share a userName", m.org_id));
        }
        if let Some(external) = &identity.external_id {
            let key = (pk, format!("DIRECTORY#EXTERNAL#{external}"));
            if expected.insert(key, m.user_id.to_string()).is_some() {
                out.push(format!("organization {}: two members share an externalId", m.org_id));
            }
        }
    }
    for (pk, sk, claim) in claims {
        match expected.remove(&(pk.clone(), sk.clone())) {
            Some(user) if user == claim.user_id.as_str() => {}
            _ => out.push(format!("directory claim {pk}/{sk} names no member holding it")),
        }
    }
    for ((pk, sk), user) in expected {
        out.push(format!("member {user} of {pk}: its name {sk} is not claimed"));
    }
    out
}

/// Fails the test with every violation listed.
pub async fn assert_holds(client: &Client, table: &str) {
    let found = violations(client, table).await;
    assert!(found.is_empty(), "invariants broken:\n  {}", found.join("\n  "));
}

/// Fails the test if `store`'s table breaks an invariant.
pub async fn assert_store_holds(store: &user_service::Store) {
    assert_holds(store.client(), &store.config().table_name).await;
}

/// How many items `store`'s table holds.
pub async fn item_count(store: &user_service::Store) -> usize {
    scan(store.client(), &store.config().table_name).await.len()
}
