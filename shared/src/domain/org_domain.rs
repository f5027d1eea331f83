//! An organization's domains as the API shows them: the domain itself, whether
//! the organization proved it, how users at it find the organization
//! (enrollment), and the organization's rules for its members' addresses.

use serde::{Deserialize, Serialize};

use super::email_address::EmailAddress;
use super::invalid::Invalid;
use super::timestamp::Timestamp;

/// A mail domain an organization claims: lower case, with at least one dot,
/// written in ASCII (an internationalised one as its `xn--` A-label, so no
/// look-alike or width variant of a name is taken for it). Parsed as the
/// domain of an address is, so it compares with addresses' domains exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OrgDomain(String);

impl OrgDomain {
    /// Checks a domain: what an address's domain may be, with a dot in it.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        const EXPECTED: &str =
            "must be a mail domain in ASCII, such as example.com (an internationalised one as its xn-- form)";
        let raw = raw.trim();
        if raw.is_empty() || !raw.is_ascii() || raw.contains('@') || raw.starts_with('*') {
            return Err(Invalid(EXPECTED));
        }
        let address = EmailAddress::parse(&format!("postmaster@{raw}")).map_err(|_| Invalid(EXPECTED))?;
        let domain = Self::of(&address);
        if domain.0.contains('.') {
            Ok(domain)
        } else {
            Err(Invalid(EXPECTED))
        }
    }

    /// The domain of an address.
    pub fn of(address: &EmailAddress) -> Self {
        Self(
            address
                .as_str()
                .rsplit_once('@')
                .map_or("", |(_, domain)| domain)
                .to_owned(),
        )
    }

    /// The domain as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for OrgDomain {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<OrgDomain> for String {
    fn from(value: OrgDomain) -> Self {
        value.0
    }
}

impl std::fmt::Display for OrgDomain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether the organization proved the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DomainStatus {
    /// Claimed, not yet proved: another organization may take it once the
    /// claim lapses.
    Pending,
    /// An owner or admin proved it with an address at it, verified by code.
    Verified,
}

impl DomainStatus {
    /// The spelling stored in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Verified => "verified",
        }
    }
}

/// How users with a verified address at a verified domain meet the
/// organization (Clerk's enrollment modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Enrollment {
    /// They do not: only invitations bring members.
    #[default]
    None,
    /// They see the organization among their suggestions; an invitation
    /// brings them in.
    Suggest,
    /// They are invited at once: they join with the address as their proof.
    Invite,
}

impl Enrollment {
    /// The spelling stored in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Suggest => "suggest",
            Self::Invite => "invite",
        }
    }
}

/// One of an organization's domains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomainView {
    /// The domain.
    pub domain: OrgDomain,
    /// Pending or verified.
    pub status: DomainStatus,
    /// How its users meet the organization.
    pub enrollment: Enrollment,
    /// When the organization claimed it.
    pub claimed_at: Timestamp,
    /// Until when a pending claim holds it against other organizations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_until: Option<Timestamp>,
    /// When it was verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_at: Option<Timestamp>,
}

/// What an organization requires of the address a member joins with, on top
/// of the deployment's address policy, checked at every join (an accepted
/// invitation, an enrollment). Canonical forms stay the deployment's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddressRules {
    /// The address must be at one of the organization's verified domains.
    #[serde(default)]
    pub verified_domains_only: bool,
    /// No `+tag`.
    #[serde(default)]
    pub block_subaddresses: bool,
    /// No disposable domain (the deployment's lists).
    #[serde(default)]
    pub block_disposable_domains: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_domain_is_an_addresses_domain_with_a_dot() {
        assert_eq!(OrgDomain::parse(" Acme.COM ").unwrap().as_str(), "acme.com");
        assert_eq!(
            OrgDomain::parse("xn--bcher-kva.example").unwrap().as_str(),
            "xn--bcher-kva.example"
        );
        for bad in [
            "",
            "localhost",
            "a@b.com",
            "*.acme.com",
            "acme..com",
            "-acme.com",
            "acme .com",
            "bücher.example",
            "аcme.com",
            "ａcme.com",
        ] {
            assert!(OrgDomain::parse(bad).is_err(), "{bad:?}");
        }
        let address = EmailAddress::parse("Ada@Acme.com").unwrap();
        assert_eq!(OrgDomain::of(&address), OrgDomain::parse("acme.com").unwrap());
    }

    #[test]
    fn rules_default_to_none_and_refuse_unknown_fields() {
        let rules: AddressRules = serde_json::from_str("{}").unwrap();
        assert_eq!(rules, AddressRules::default());
        assert!(serde_json::from_str::<AddressRules>(r#"{"other": true}"#).is_err());
        assert_eq!(
            serde_json::to_value(Enrollment::Invite).unwrap(),
            serde_json::json!("invite")
        );
    }
}
