//! The members a directory provisions, in the table: the facts a create is
//! planned on ([`crate::scim::provision`]), the two writes a create can be
//! (a new account joining, an existing one linked), a member read as a SCIM
//! User, and the look-ups a filter makes. Every write conditions what it was
//! planned on: the token still live, the organization active, each address's
//! domain still the organization's and verified, the linked address still
//! the account's and verified, and each directory name free.

use std::collections::BTreeSet;

use crate::domain::{DomainStatus, EmailAddress, NewAccount, NewUser, OrgDomain, OrgId, Role, Timestamp, UserId};
use crate::scim::provision::{AccountFacts, Domains, Holder, Standing};
use crate::scim::{Condition, Filter, ScimEmail, ScimUser, ScimVersion};
use crate::store::expr::{Update, and};
use crate::store::items::{self, ClaimItem, DirectoryClaimItem, DirectoryIdentity, MemberItem, attr};
use crate::store::keys;
use crate::store::plan::{self, Rejection, TxPlan};
use crate::store::retry::retrying;
use crate::store::{Created, Store, StoreError};

use super::ScimClient;
use super::counts::{CountChange, push_counts};
use super::create::{halves, push_count_one_more, push_halves};
use super::directory::{identity, push_claims};
use super::members::push_org_open;
use crate::store::ops::create_user::Joining;
use crate::store::ops::profile::read_changed;

/// A new account a directory made: its `sub` (Cognito's), the User, its
/// primary and every address (all at the organization's verified domains),
/// and whether the directory made it (not a sign-up it found).
#[derive(Debug, Clone, Copy)]
pub struct DirectoryAccount<'a> {
    /// The account's `sub`.
    pub user: &'a UserId,
    /// The User as the directory sent it.
    pub scim: &'a ScimUser,
    /// The primary address.
    pub primary: &'a EmailAddress,
    /// Every address, the primary among them.
    pub addresses: &'a [EmailAddress],
    /// Whether the directory made the account.
    pub provisioned: bool,
}

/// A member as their organization's directory sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimMember {
    /// Their id: the account's `sub`.
    pub id: UserId,
    /// The User.
    pub user: ScimUser,
    /// The ETag's versions.
    pub version: ScimVersion,
    /// When they joined the organization.
    pub created: Timestamp,
    /// When the profile last changed.
    pub last_modified: Timestamp,
    /// What a change or a delete is planned on.
    pub facts: AccountFacts,
}

impl Store {
    /// The organization's verified domains, and who holds each of `addresses`.
    pub async fn scim_facts(
        &self,
        org: OrgId,
        addresses: &[EmailAddress],
        now: Timestamp,
    ) -> Result<(Domains, Vec<Holder>), StoreError> {
        let domains = self
            .org_domains(org)
            .await?
            .into_iter()
            .filter(|d| d.status == DomainStatus::Verified)
            .map(|d| d.domain)
            .collect::<BTreeSet<_>>();
        let mut holders = Vec::with_capacity(addresses.len());
        for address in addresses {
            let claim = self.claim_on(&self.policy.canonical(address)).await?;
            holders.push(holder(claim.as_ref(), now));
        }
        Ok((Domains(domains), holders))
    }

    /// A new account the directory made (`user`, just made in Cognito) joins
    /// the organization: the profile, every address verified with its claim,
    /// both halves of the membership with the directory's names, in one
    /// transaction. An account already there under `user` is a create that
    /// happened: the same directory name is `DirectoryNameTaken`, anything
    /// else `EmailTaken`.
    pub async fn scim_create_account(
        &self,
        client: &ScimClient,
        account: &DirectoryAccount<'_>,
        now: Timestamp,
    ) -> Result<ScimMember, StoreError> {
        let DirectoryAccount {
            user,
            scim,
            primary,
            addresses,
            provisioned,
        } = *account;
        let new_user = NewUser {
            user_id: user.clone(),
            email: primary.clone(),
            first_name: scim.given_name.clone(),
            last_name: scim.family_name.clone(),
            phone: scim.phone.clone(),
        };
        let more = addresses
            .iter()
            .filter(|a| *a != primary)
            .map(|a| crate::domain::AdditionalEmail {
                email: a.clone(),
                verified: true,
            })
            .collect();
        let account = NewAccount {
            more,
            ..NewAccount::signed_up(new_user, now)
        };
        let directory = identity(&scim.user_name, scim.external_id.as_ref(), provisioned);
        // The organization's address rules, at the version the write conditions.
        let rules_at = self.admitted(client.org, primary).await?.version;
        let table = self.table().to_owned();
        let domains: Vec<OrgDomain> = addresses.iter().map(OrgDomain::of).collect();
        let most_members = self.config().max_members_per_organization;
        let push = |plan: &mut TxPlan| {
            push_member(
                plan,
                &table,
                client,
                directory_halves(client.org, user, &directory, scim.active, now),
                rules_at,
                most_members,
            )?;
            push_domains_held(plan, &table, client.org, &domains)
        };
        let joining = Joining {
            organizations: 1,
            push: &push,
        };
        match self.create_joining(&account, None, Some(&joining), now).await? {
            Created::New => self.scim_member(client.org, user).await,
            Created::Existing => match self.member(client.org, user).await {
                Ok(m)
                    if m.directory
                        .as_ref()
                        .is_some_and(|d| d.user_name.eq_ignore_ascii_case(scim.user_name.as_str())) =>
                {
                    Err(StoreError::DirectoryNameTaken)
                }
                _ => Err(StoreError::EmailTaken),
            },
        }
    }

    /// An existing account, which holds `primary` verified, joins the
    /// organization under the directory's names: not the directory's to erase.
    pub async fn scim_link(
        &self,
        client: &ScimClient,
        user: &UserId,
        scim: &ScimUser,
        primary: &EmailAddress,
        now: Timestamp,
    ) -> Result<ScimMember, StoreError> {
        let directory = identity(&scim.user_name, scim.external_id.as_ref(), false);
        let form = self.policy.canonical(primary);
        let table = self.table();
        retrying!({
            let (claim, member) = tokio::join!(Box::pin(self.claim_on(&form)), Box::pin(self.member(client.org, user)));
            let held = claim?.filter(|c| c.user_id == *user && c.expires_at.is_none() && c.reserved_until.is_none());
            let Some(claim) = held else {
                return Err(Rejection::Failed(StoreError::EmailTaken));
            };
            let rules_at = self.admitted(client.org, primary).await?.version;
            let mut plan = TxPlan::new();
            match member {
                // A new member.
                Err(StoreError::MemberNotFound) => {
                    let halves = directory_halves(client.org, user, &directory, scim.active, now);
                    let most_members = self.config().max_members_per_organization;
                    push_member(&mut plan, table, client, halves, rules_at, most_members)?;
                    push_count_one_more(&mut plan, table, user, self.config().max_organizations_per_user)?;
                }
                // A member already (invited, enrolled): the directory's names go on that membership.
                // Never an admin's or an owner's: theirs is the owners' to change, not the directory's.
                Ok(member) if member.directory.is_none() && member.role != Role::Member => {
                    return Err(Rejection::Failed(StoreError::RoleRequired));
                }
                Ok(member) if member.directory.is_none() => {
                    push_adoption(&mut plan, table, client, &member, &directory, rules_at, !scim.active)?
                }
                Ok(_) => return Err(Rejection::Failed(StoreError::DirectoryNameTaken)),
                Err(other) => return Err(Rejection::Failed(other)),
            }
            push_domains_held(&mut plan, table, client.org, &[OrgDomain::of(primary)])?;
            let holds = plan::check(table, keys::claim_key(&form), |x| {
                and([
                    x.eq(attr::USER_ID, user),
                    x.eq(attr::EMAIL_ID, claim.email_id),
                    x.not_exists(attr::EXPIRES_AT),
                    x.not_exists(attr::RESERVED_UNTIL),
                ])
            })?;
            plan.push(holds, |_| Ok(Rejection::Failed(StoreError::EmailTaken)));
            self.transact(&plan).await
        })?;
        self.scim_member(client.org, user).await
    }

    /// `user` as `org`'s directory sees them; `MemberNotFound` unless the
    /// directory provisioned or linked them.
    pub async fn scim_member(&self, org: OrgId, user: &UserId) -> Result<ScimMember, StoreError> {
        let (member, found, domains) = tokio::join!(
            Box::pin(self.member(org, user)),
            Box::pin(self.user_items(user)),
            Box::pin(self.verified_domains(org)),
        );
        shown(user, member?, found?, &domains?)
    }

    /// Members of `org` as its directory sees them, `domains` read once for
    /// them all; one that left since it was listed is left out.
    pub(super) async fn scim_members(
        &self,
        org: OrgId,
        users: &[UserId],
        domains: &Domains,
    ) -> Result<Vec<ScimMember>, StoreError> {
        use futures::stream::{self, StreamExt, TryStreamExt};
        // The reads made first, then run a few at a time: a stream mapping
        // with a closure would make the future's Send bound unprovable.
        let reads: Vec<_> = users.iter().map(|user| self.shown_member(org, user, domains)).collect();
        let read = stream::iter(reads)
            .buffered(MEMBERS_AT_ONCE)
            .try_collect::<Vec<_>>()
            .await?;
        Ok(read.into_iter().flatten().collect())
    }

    /// One member as shown, `None` if they left.
    async fn shown_member(
        &self,
        org: OrgId,
        user: &UserId,
        domains: &Domains,
    ) -> Result<Option<ScimMember>, StoreError> {
        let (member, found) = tokio::join!(Box::pin(self.member(org, user)), Box::pin(self.user_items(user)));
        match shown(user, member?, found?, domains) {
            Err(StoreError::MemberNotFound | StoreError::NotFound) => Ok(None),
            other => other.map(Some),
        }
    }

    /// The members a filter names, by the key each condition gives: a
    /// directory name's claim, an address's claim, or the id. Every
    /// condition is then checked on the member as shown. `None` when no
    /// condition names a key (`active` alone): the caller lists instead.
    pub async fn scim_find(
        &self,
        org: OrgId,
        filter: &Filter,
        now: Timestamp,
    ) -> Result<Option<Vec<ScimMember>>, StoreError> {
        let mut candidate: Option<Option<UserId>> = None;
        for condition in &filter.0 {
            let found = match condition {
                Condition::Never => Some(None),
                Condition::Id(id) => Some(UserId::parse(id).ok()),
                Condition::UserName(name) => Some(
                    self.directory_claim(keys::directory_name_key(org, &name.to_lowercase()))
                        .await?,
                ),
                Condition::ExternalId(id) => Some(self.directory_claim(keys::directory_external_key(org, id)).await?),
                Condition::Email { value, .. } => match EmailAddress::parse(value) {
                    Ok(address) => {
                        let claim = self.claim_on(&self.policy.canonical(&address)).await?;
                        Some(claim.filter(|c| c.is_live(now)).map(|c| c.user_id))
                    }
                    Err(_) => Some(None),
                },
                Condition::Active(_) => None,
            };
            if let Some(found) = found {
                candidate = Some(found);
                break;
            }
        }
        let Some(candidate) = candidate else { return Ok(None) };
        let Some(user) = candidate else {
            return Ok(Some(Vec::new()));
        };
        let member = match self.scim_member(org, &user).await {
            Ok(member) => member,
            Err(StoreError::MemberNotFound | StoreError::NotFound) => return Ok(Some(Vec::new())),
            Err(other) => return Err(other),
        };
        Ok(Some(if filter.0.iter().all(|c| satisfies(&member, c)) {
            vec![member]
        } else {
            Vec::new()
        }))
    }

    async fn directory_claim(&self, key: keys::Item) -> Result<Option<UserId>, StoreError> {
        let claim: Option<DirectoryClaimItem> = self.get(key).await?.map(items::from_item).transpose()?;
        Ok(claim.map(|c| c.user_id))
    }

    pub(super) async fn verified_domains(&self, org: OrgId) -> Result<Domains, StoreError> {
        Ok(Domains(
            self.org_domains(org)
                .await?
                .into_iter()
                .filter(|d| d.status == DomainStatus::Verified)
                .map(|d| d.domain)
                .collect(),
        ))
    }
}

/// Whether the member as shown satisfies one condition of a filter.
fn satisfies(member: &ScimMember, condition: &Condition) -> bool {
    let user = &member.user;
    match condition {
        Condition::Id(id) => member.id.as_str() == id,
        Condition::UserName(name) => user.user_name.key() == name.to_lowercase(),
        Condition::ExternalId(id) => user.external_id.as_ref().is_some_and(|e| e.as_str() == id),
        Condition::Email { value, primary } => EmailAddress::parse(value).is_ok_and(|address| {
            user.emails
                .iter()
                .any(|e| e.value == address && (!primary || e.primary))
        }),
        Condition::Active(active) => user.active == *active,
        Condition::Never => false,
    }
}

/// Who holds an address, from its claim: a reservation (removed, or added
/// back unverified) is its account's, and links nobody.
fn holder(claim: Option<&ClaimItem>, now: Timestamp) -> Holder {
    match claim {
        Some(c) if c.is_reserved(now) => Holder::Reserved(c.user_id.clone()),
        Some(c) if c.is_owned(now) => Holder::Verified(c.user_id.clone()),
        Some(c) if c.is_live(now) => Holder::Pending(c.user_id.clone()),
        _ => Holder::Free,
    }
}

/// Both halves of the membership, the organization's with the directory's
/// names and their claims; the token still live; the organization active.
fn push_member(
    plan: &mut TxPlan,
    table: &str,
    client: &ScimClient,
    halves: [MemberItem; 2],
    rules_at: u64,
    most_members: u32,
) -> Result<(), StoreError> {
    let [under_org, under_user] = halves;
    let directory = under_org
        .directory
        .clone()
        .ok_or(StoreError::Inconsistent("a directory's member without names"))?;
    let user = under_org.user_id.clone();
    let joining = CountChange::join(true, under_org.suspended);
    push_halves(plan, table, &[under_org, under_user])?;
    push_claims(plan, table, client.org, &user, &directory)?;
    push_counts(plan, table, client.org, joining, Some(most_members))?;
    push_open_and_token(plan, table, client, rules_at)
}

/// Both halves of a directory's new member: the organization's with the
/// directory's names, its first version, and suspended unless `active`.
fn directory_halves(
    org: OrgId,
    user: &UserId,
    directory: &DirectoryIdentity,
    active: bool,
    now: Timestamp,
) -> [MemberItem; 2] {
    let [mut under_org, under_user] = halves(org, user, Role::Member, now);
    under_org.directory = Some(directory.clone());
    under_org.version = 1;
    under_org.suspended = !active;
    [under_org, under_user]
}

/// The organization active at the version whose address rules admitted the
/// address, and the request's token still live: revoked mid-request, the
/// write is refused as the request would have been.
fn push_open_and_token(plan: &mut TxPlan, table: &str, client: &ScimClient, rules_at: u64) -> Result<(), StoreError> {
    push_org_open(plan, table, client.org, false, Some(rules_at))?;
    let token = plan::check(table, keys::scim_token_key(client.org, client.token), |x| {
        x.exists(keys::PK)
    })?;
    plan.push(token, |_| Ok(Rejection::Failed(StoreError::ScimTokenInvalid)));
    Ok(())
}

/// A member already there takes the directory's names: their half at the
/// role read and with no names yet, the claims, the organization, the token.
fn push_adoption(
    plan: &mut TxPlan,
    table: &str,
    client: &ScimClient,
    member: &MemberItem,
    directory: &DirectoryIdentity,
    rules_at: u64,
    suspended: bool,
) -> Result<(), StoreError> {
    let value: aws_sdk_dynamodb::types::AttributeValue =
        serde_dynamo::to_attribute_value(directory).map_err(StoreError::Corrupt)?;
    let update = plan::update(table, keys::member_key(client.org, &member.user_id), |x| {
        let name = x.name(attr::DIRECTORY);
        let value = x.value(attr::DIRECTORY, value.clone());
        let update = Update::default()
            .set(format!("{name} = {value}"))
            .set(x.add_from_zero(attr::VERSION, 1));
        let update = if suspended {
            update.set(x.eq(attr::SUSPENDED, true))
        } else {
            update
        };
        (
            update,
            and([x.eq(attr::ROLE, Role::Member), x.not_exists(attr::DIRECTORY)]),
        )
    })?;
    plan.push(update, read_changed);
    push_claims(plan, table, client.org, &member.user_id, directory)?;
    // A member already: now the directory's too.
    let held = CountChange {
        directory: 1,
        suspended: i64::from(suspended),
        ..CountChange::default()
    };
    push_counts(plan, table, client.org, held, None)?;
    push_open_and_token(plan, table, client, rules_at)
}

/// Each domain still the organization's, and verified.
pub(super) fn push_domains_held(
    plan: &mut TxPlan,
    table: &str,
    org: OrgId,
    domains: &[OrgDomain],
) -> Result<(), StoreError> {
    let mut seen = BTreeSet::new();
    for domain in domains.iter().filter(|d| seen.insert((*d).clone())) {
        let held = plan::check(table, keys::domain_claim_key(domain), |x| {
            and([
                x.eq(attr::ORG_ID, org),
                x.eq(attr::STATUS, DomainStatus::Verified.as_str()),
            ])
        })?;
        plan.push(held, |_| Ok(Rejection::Failed(StoreError::DomainNotVerified)));
    }
    Ok(())
}

/// How many members a page reads at once.
const MEMBERS_AT_ONCE: usize = 16;

/// `user` as the directory sees them, from their membership and their
/// items; `MemberNotFound` unless the directory provisioned or linked them.
fn shown(
    user: &UserId,
    member: MemberItem,
    found: crate::store::items::UserItems,
    domains: &Domains,
) -> Result<ScimMember, StoreError> {
    let Some(directory) = member.directory.clone() else {
        return Err(StoreError::MemberNotFound);
    };
    let profile = found.profile.ok_or(StoreError::MemberNotFound)?;
    let primary = profile.email.clone().ok_or(StoreError::MemberNotFound)?;
    let facts = AccountFacts {
        addresses: found.emails.iter().map(|r| (r.email.clone(), r.is_verified)).collect(),
        primary,
        organizations: profile.organizations,
        provisioned: directory.provisioned,
        role: member.role,
    };
    let emails: Vec<ScimEmail> = found
        .emails
        .iter()
        .filter(|r| domains.covers(&r.email))
        .map(|r| ScimEmail {
            value: r.email.clone(),
            primary: r.is_primary,
        })
        .collect();
    let user_name = directory
        .user_name()
        .ok_or(StoreError::Inconsistent("a directory's userName"))?;
    let addresses = crate::scim::addresses_digest(&emails);
    // A person's own names and phone are shown only where the directory
    // made the account: a linked member's profile is not the organization's.
    let (given_name, family_name, phone) = if facts.standing() == Standing::Provisioned {
        (profile.first_name, profile.last_name, profile.phone)
    } else {
        (None, None, None)
    };
    Ok(ScimMember {
        id: user.clone(),
        user: ScimUser {
            user_name,
            external_id: directory.external_id(),
            given_name,
            family_name,
            emails,
            phone,
            // The organization's grant, which the directory sets: a deployment
            // admin's suspension of the account is not the directory's to see or undo.
            active: !member.suspended,
        },
        version: ScimVersion {
            profile: profile.version,
            membership: member.version,
            addresses,
        },
        created: member.joined_at,
        last_modified: profile.updated_at,
        facts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::plan::tests::assert_well_formed;

    #[test]
    fn a_directorys_member_conditions_its_token_its_names_and_its_organization() {
        let now = crate::store::ops::fixtures::now();
        let client = ScimClient {
            org: OrgId::new(),
            token: crate::domain::ScimTokenId::from_bytes([1; 16]),
        };
        let user = UserId::parse("u").unwrap();
        let directory = DirectoryIdentity {
            user_name: "Ada@acme.example".into(),
            external_id: Some("e-1".into()),
            provisioned: true,
        };
        let mut plan = TxPlan::new();
        push_member(
            &mut plan,
            "t",
            &client,
            directory_halves(client.org, &user, &directory, true, now),
            3,
            10,
        )
        .unwrap();
        assert_well_formed(&plan);
        // Two halves, two names, the counts, the organization, the token.
        assert_eq!(plan.items().len(), 7);
        assert!(matches!(
            plan.read(2, None),
            Rejection::Failed(StoreError::DirectoryNameTaken)
        ));
        assert!(matches!(
            plan.read(6, None),
            Rejection::Failed(StoreError::ScimTokenInvalid)
        ));
        let _ = read_changed;
    }
}
