//! Organizations as the API shows them: their id, name and slug, the roles
//! of their members, and what each role may do.

use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::ids::UserId;
use super::invalid::Invalid;
use super::person::PersonName;
use super::timestamp::Timestamp;

/// Identifies an organization: a UUID (v7, so organizations sort by creation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OrgId(Uuid);

impl OrgId {
    /// A fresh id for a new organization.
    pub fn new() -> Self {
        Self(Uuid::now_v7())
    }

    /// An id from a path or a stored item: a UUID in its lower-case hyphenated
    /// form, the one spelling keys are written with.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        Uuid::try_parse(raw)
            .ok()
            .filter(|uuid| uuid.hyphenated().to_string() == raw)
            .map(Self)
            .ok_or(Invalid("must be an organization id (a lower-case UUID)"))
    }

    /// Its 16 bytes, as an invitation token carries them.
    pub fn as_bytes(&self) -> &[u8; 16] {
        self.0.as_bytes()
    }

    /// The id 16 bytes name.
    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(Uuid::from_bytes(bytes))
    }
}

impl Default for OrgId {
    fn default() -> Self {
        Self::new()
    }
}

impl TryFrom<String> for OrgId {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<OrgId> for String {
    fn from(value: OrgId) -> Self {
        value.to_string()
    }
}

impl fmt::Display for OrgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// An organization's display name: the rules of a person's name (trimmed,
/// NFC, 1 to 100 characters, nothing invisible). Not personal data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OrgName(String);

impl OrgName {
    /// Checks a name as a person's is checked; the result is what is stored.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        PersonName::parse(raw).map(|name| Self(name.into()))
    }

    /// The name as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for OrgName {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<OrgName> for String {
    fn from(value: OrgName) -> Self {
        value.0
    }
}

/// The deployment-wide handle of an organization (for URLs and sign-in
/// pages): 3 to 40 of `a-z`, `0-9` and `-`, neither first nor last, no
/// `--`. One spelling only, so one claim item holds it for everyone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Slug(String);

impl Slug {
    /// Checks a slug; upper case is refused, not folded, so what the client
    /// sent is what is stored.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let ok = (3..=40).contains(&raw.len())
            && raw
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !raw.starts_with('-')
            && !raw.ends_with('-')
            && !raw.contains("--");
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(Invalid(
                "must be 3 to 40 lower-case letters, digits and single hyphens, starting and ending with a letter or digit",
            ))
        }
    }

    /// The slug as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Slug {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<Slug> for String {
    fn from(value: Slug) -> Self {
        value.0
    }
}

/// A member's role in an organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Everything an admin may, and also: make and unmake owners, delete the organization.
    Owner,
    /// Rename the organization; list, invite and remove members; change roles below owner.
    Admin,
    /// Read the organization; leave it.
    Member,
}

impl Role {
    /// The spelling stored in the table and shown in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Admin => "admin",
            Self::Member => "member",
        }
    }

    /// The roles that hold `power`: what a write's condition on the actor's
    /// membership lists.
    pub fn holding(power: Power) -> &'static [Role] {
        match power {
            Power::Read => &[Self::Owner, Self::Admin, Self::Member],
            Power::Manage => &[Self::Owner, Self::Admin],
            Power::Own => &[Self::Owner],
        }
    }

    /// What changing a member from `from` to `to`, or removing one in `from`
    /// (`to` = `None`), asks of the actor: owners alone touch owners.
    pub fn power_to_change(from: Role, to: Option<Role>) -> Power {
        if from == Self::Owner || to == Some(Self::Owner) {
            Power::Own
        } else {
            Power::Manage
        }
    }
}

/// What an action on an organization asks of the actor's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Power {
    /// Any member: read the organization.
    Read,
    /// Owners and admins: rename, list members, invite, change roles below owner, remove non-owners.
    Manage,
    /// Owners: make or unmake owners, remove an owner, delete the organization.
    Own,
}

/// Who acts on an organization: one of its members (their role is read from
/// the table and conditioned in the write), or a deployment admin
/// (`ADMIN_GROUP`), who may act on any organization and is audited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// A user acting through their own membership.
    Member(UserId),
    /// A deployment admin, whatever their membership.
    DeploymentAdmin(UserId),
}

impl Actor {
    /// The acting user.
    pub fn user(&self) -> &UserId {
        match self {
            Self::Member(user) | Self::DeploymentAdmin(user) => user,
        }
    }
}

/// A change of an organization (`PATCH /organizations/{orgId}`): its name,
/// its address rules, or both.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrganizationPatch {
    /// A new name.
    #[serde(default)]
    pub name: Option<OrgName>,
    /// New address rules, whole.
    #[serde(default)]
    pub rules: Option<super::org_domain::AddressRules>,
}

/// An organization as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    /// Its id.
    pub org_id: OrgId,
    /// Its display name.
    pub name: OrgName,
    /// Its deployment-wide handle.
    pub slug: Slug,
    /// Every change adds one; If-Match names it.
    pub version: u64,
    /// How many owners it has: never fewer than one while it lives.
    pub owners: u32,
    /// What it requires of the address a member joins with.
    pub rules: super::org_domain::AddressRules,
    /// Who created it: its events say so; the API does not show it.
    #[serde(skip)]
    pub created_by: UserId,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// One member of an organization, as its owners and admins list them, or
/// one organization of a user, as they list their own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Membership {
    /// The organization.
    pub org_id: OrgId,
    /// The member.
    pub user_id: UserId,
    /// Their role in it.
    pub role: Role,
    /// When they joined.
    pub joined_at: Timestamp,
}

/// A new organization as its creator asks for it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewOrganization {
    /// Its display name.
    pub name: OrgName,
    /// Its handle, claimed across the deployment.
    pub slug: Slug,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_have_one_spelling() {
        for good in ["acme", "acme-eu", "a1b", "x".repeat(40).as_str()] {
            assert_eq!(Slug::parse(good).unwrap().as_str(), good);
        }
        for bad in [
            "ab",
            "Acme",
            "-acme",
            "acme-",
            "ac--me",
            "acme corp",
            "acmé",
            "ac_me",
            &"x".repeat(41),
        ] {
            assert!(Slug::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn org_ids_have_one_spelling() {
        let id = OrgId::new();
        assert_eq!(OrgId::parse(&id.to_string()).unwrap(), id);
        assert!(OrgId::parse(&id.to_string().to_uppercase()).is_err());
        assert!(OrgId::parse("acme").is_err());
        assert!(OrgId::parse(&format!(" {id}")).is_err());
    }

    #[test]
    fn owners_alone_touch_owners() {
        use Role::*;
        assert_eq!(Role::power_to_change(Member, Some(Admin)), Power::Manage);
        assert_eq!(Role::power_to_change(Admin, Some(Member)), Power::Manage);
        assert_eq!(Role::power_to_change(Admin, None), Power::Manage);
        assert_eq!(Role::power_to_change(Admin, Some(Owner)), Power::Own);
        assert_eq!(Role::power_to_change(Owner, Some(Admin)), Power::Own);
        assert_eq!(Role::power_to_change(Owner, None), Power::Own);
        assert!(!Role::holding(Power::Manage).contains(&Member));
        assert_eq!(Role::holding(Power::Own), &[Owner]);
    }
}
