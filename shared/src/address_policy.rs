//! The deployment's address policy: which spellings of an address are one
//! address (the canonical form claims and GSI1 key on), and which new
//! addresses are refused (subaddresses, disposable domains, domains outside an
//! allow-list). Pure, read once at init from the environment; the store keys
//! with it and the add-email and pre-sign-up paths admit with it.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use crate::config::{
    ALLOWED_EMAIL_DOMAINS, BLOCK_DISPOSABLE_DOMAINS, BLOCK_SUBADDRESSES, ConfigError, DISPOSABLE_EMAIL_DOMAINS_EXTRA,
    EMAIL_CANONICALIZATION, EMAIL_CANONICALIZATION_FROM, Setting,
};
use crate::domain::{EmailAddress, Invalid};

/// How addresses compare for uniqueness and look-up, per deployment
/// (`EMAIL_CANONICALIZATION`). The address a user typed, normalised, stays
/// what is stored, shown and mailed; the canonical form only decides which
/// addresses are the same one. The default compares normalised addresses as
/// they are: the seed's behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Canonicalization {
    /// `gmail.com` and `googlemail.com`: dots in the local part and any `+tag`
    /// are ignored, and `googlemail.com` is `gmail.com` (as Gmail delivers them).
    pub gmail: bool,
    /// Every domain: any `+tag` is ignored.
    pub subaddress: bool,
}

/// Gmail's domains, the first the one both are compared as.
const GMAIL_DOMAINS: [&str; 2] = ["gmail.com", "googlemail.com"];

impl Canonicalization {
    /// The default: normalised addresses compare as they are.
    pub const NONE: Self = Self {
        gmail: false,
        subaddress: false,
    };

    /// `none`, `gmail`, `subaddress`, or both separated by a comma.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        const EXPECTED: &str = "must be none, gmail, subaddress, or gmail,subaddress";
        let raw = raw.trim();
        if raw == "none" {
            return Ok(Self::NONE);
        }
        let mut policy = Self::NONE;
        for part in raw.split(',').map(str::trim) {
            let flag = match part {
                "gmail" => &mut policy.gmail,
                "subaddress" => &mut policy.subaddress,
                _ => return Err(Invalid(EXPECTED)),
            };
            if std::mem::replace(flag, true) {
                return Err(Invalid(EXPECTED));
            }
        }
        Ok(policy)
    }

    /// The form `address` is compared in. Idempotent; the default policy is the
    /// identity. A form that would not be an address (`+tag@example.com`
    /// without its tag) leaves the address as it is.
    pub fn canonical(self, address: &EmailAddress) -> CanonicalEmail {
        let Some((local, domain)) = address.as_str().split_once('@') else {
            return CanonicalEmail(address.clone());
        };
        let gmail = self.gmail && GMAIL_DOMAINS.contains(&domain);
        let mut local = local.to_owned();
        if gmail || self.subaddress {
            local.truncate(local.find('+').unwrap_or(local.len()));
        }
        if gmail {
            local.retain(|c| c != '.');
        }
        let domain = if gmail { GMAIL_DOMAINS[0] } else { domain };
        CanonicalEmail(EmailAddress::parse(&format!("{local}@{domain}")).unwrap_or_else(|_| address.clone()))
    }
}

/// Whether the local part carries a subaddress (`ada+news@…`).
pub fn has_subaddress(address: &EmailAddress) -> bool {
    address
        .as_str()
        .split_once('@')
        .is_some_and(|(local, _)| local.contains('+'))
}

/// An address in its canonical form: what a claim and GSI1 are keyed on, and
/// what per-address limits count. Made only by [`Canonicalization::canonical`]
/// or read back from a record that stored it, so no key is ever built from an
/// address as typed by mistake.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CanonicalEmail(EmailAddress);

impl CanonicalEmail {
    /// The canonical form as text: the key material.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The canonical form as an address (it always is one).
    pub fn address(&self) -> &EmailAddress {
        &self.0
    }

    /// Whether `address`, as typed and normalised, is this form itself.
    pub fn is_spelled(&self, address: &EmailAddress) -> bool {
        &self.0 == address
    }
}

/// Why a new address is refused: its `reason` code in the 422 body and the
/// log, its sentence for the person; never with the address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// It has a `+tag` and `BLOCK_SUBADDRESSES` is on.
    #[error("Addresses with a +tag (subaddress) are not accepted here. Use another address.")]
    Subaddress,
    /// Its domain is a disposable one and `BLOCK_DISPOSABLE_DOMAINS` is on.
    #[error("Addresses at disposable email domains are not accepted here. Use another address.")]
    DisposableDomain,
    /// `ALLOWED_EMAIL_DOMAINS` is set and its domain is not among them.
    #[error("Addresses at this domain are not accepted here. Use another address.")]
    DomainNotAllowed,
}

impl Refusal {
    /// The stable reason code.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Subaddress => "subaddress",
            Self::DisposableDomain => "disposable_domain",
            Self::DomainNotAllowed => "domain_not_allowed",
        }
    }
}

/// One entry of the allow-list: a domain, or (`*.example.com`) every domain
/// under it, at any depth.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AllowedDomain {
    Exactly(String),
    Under(String),
}

impl AllowedDomain {
    fn admits(&self, domain: &str) -> bool {
        match self {
            Self::Exactly(allowed) => domain == allowed,
            Self::Under(parent) => domain
                .strip_suffix(parent.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

/// The list of disposable domains shipped with the service (source and
/// licence in its header).
const SHIPPED_DISPOSABLE_DOMAINS: &str = include_str!("../data/disposable_email_domains.txt");

/// The shipped list, parsed once, on first use: only the functions that admit
/// new addresses pay for it.
fn shipped_disposable_domains() -> &'static HashSet<&'static str> {
    static DOMAINS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    DOMAINS.get_or_init(|| {
        SHIPPED_DISPOSABLE_DOMAINS
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect()
    })
}

/// How many domains the shipped list holds.
pub fn shipped_disposable_domain_count() -> usize {
    shipped_disposable_domains().len()
}

/// The deployment's policy for addresses. The default is the seed's: every
/// normalised address is its own, and none is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Which spellings are one address.
    pub canonicalization: Canonicalization,
    /// While `cargo xtask canonicalize` moves the table from this policy:
    /// claims not yet moved are on its forms, so every look-up also reads the
    /// address's form under it, and every new claim also requires it free.
    pub previous: Option<Canonicalization>,
    /// Refuse addresses with a `+tag`.
    pub block_subaddresses: bool,
    /// Refuse addresses at disposable domains (the shipped list and `disposable_extra`).
    pub block_disposable_domains: bool,
    /// The operator's disposable domains, in A-label form.
    disposable_extra: Arc<HashSet<String>>,
    /// When set, the only domains new addresses may be at.
    allowed: Option<Arc<Vec<AllowedDomain>>>,
}

impl AddressPolicy {
    /// The form `address` is compared, claimed and found in.
    pub fn canonical(&self, address: &EmailAddress) -> CanonicalEmail {
        self.canonicalization.canonical(address)
    }

    /// While the table moves from a previous policy, the address's form under
    /// it, when that is another key than [`AddressPolicy::canonical`]'s.
    pub fn previous_form(&self, address: &EmailAddress) -> Option<CanonicalEmail> {
        let previous = self.previous?.canonical(address);
        (previous != self.canonical(address)).then_some(previous)
    }

    /// Every form a claim on `address` may be on: its canonical form, and
    /// while the table moves, its form under the previous policy.
    pub fn forms(&self, address: &EmailAddress) -> Vec<CanonicalEmail> {
        std::iter::once(self.canonical(address))
            .chain(self.previous_form(address))
            .collect()
    }

    /// Whether two spellings are one address under this policy.
    pub fn same(&self, a: &EmailAddress, b: &EmailAddress) -> bool {
        self.canonical(a) == self.canonical(b)
    }

    /// Whether a new address may be added or signed up with. Addresses held
    /// already stay, whatever the policy says since.
    pub fn admit(&self, address: &EmailAddress) -> Result<(), Refusal> {
        let domain = address.as_str().rsplit_once('@').map_or("", |(_, domain)| domain);
        if let Some(allowed) = &self.allowed
            && !allowed.iter().any(|entry| entry.admits(domain))
        {
            return Err(Refusal::DomainNotAllowed);
        }
        if self.block_disposable_domains && self.is_disposable(domain) {
            return Err(Refusal::DisposableDomain);
        }
        if self.block_subaddresses && has_subaddress(address) {
            return Err(Refusal::Subaddress);
        }
        Ok(())
    }

    /// The domain, or any domain above it, is on a disposable list:
    /// `x.mailinator.com` is as disposable as `mailinator.com`.
    pub fn is_disposable(&self, domain: &str) -> bool {
        let shipped = shipped_disposable_domains();
        let mut rest = domain;
        loop {
            if shipped.contains(rest) || self.disposable_extra.contains(rest) {
                return true;
            }
            match rest.split_once('.') {
                Some((_, parent)) if parent.contains('.') => rest = parent,
                _ => return false,
            }
        }
    }

    /// Compare addresses in `canonicalization`'s form.
    pub fn canonicalizing(self, canonicalization: Canonicalization) -> Self {
        Self {
            canonicalization,
            ..self
        }
    }

    /// While the table moves from `previous` (`EMAIL_CANONICALIZATION_FROM`).
    pub fn moving_from(self, previous: Canonicalization) -> Self {
        Self {
            previous: Some(previous),
            ..self
        }
    }

    /// Refuse `+tags`.
    pub fn blocking_subaddresses(self) -> Self {
        Self {
            block_subaddresses: true,
            ..self
        }
    }

    /// Refuse disposable domains, the shipped list and `extra`.
    pub fn blocking_disposable_domains(self, extra: &str) -> Result<Self, Invalid> {
        Ok(Self {
            block_disposable_domains: true,
            disposable_extra: Arc::new(domain_list(extra)?.into_iter().collect()),
            ..self
        })
    }

    /// Admit only domains on `list` (comma-separated; `*.example.com` for
    /// example.com's subdomains).
    pub fn allowing_only(self, list: &str) -> Result<Self, Invalid> {
        let entries = list
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| match entry.strip_prefix("*.") {
                Some(parent) => a_label(parent).map(AllowedDomain::Under),
                None => a_label(entry).map(AllowedDomain::Exactly),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if entries.is_empty() {
            return Err(Invalid("must name at least one domain"));
        }
        Ok(Self {
            allowed: Some(Arc::new(entries)),
            ..self
        })
    }

    /// The policy the environment sets; a value it cannot read stops the
    /// function at init, naming the variable.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let invalid = |setting: Setting, value: &str, why: &str| ConfigError::Invalid {
            name: setting.name(),
            reason: format!("{why}; got {value:?}"),
        };
        let var = |setting: Setting| crate::config::optional(&lookup, setting);
        let flag = |setting: Setting| match var(setting).as_deref() {
            None | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(other) => Err(invalid(setting, other, "must be true or false")),
        };
        let mut policy = Self::default();
        if let Some(raw) = var(EMAIL_CANONICALIZATION) {
            let canonicalization =
                Canonicalization::parse(&raw).map_err(|e| invalid(EMAIL_CANONICALIZATION, &raw, e.0))?;
            policy = policy.canonicalizing(canonicalization);
        }
        if let Some(raw) = var(EMAIL_CANONICALIZATION_FROM) {
            let previous =
                Canonicalization::parse(&raw).map_err(|e| invalid(EMAIL_CANONICALIZATION_FROM, &raw, e.0))?;
            policy = policy.moving_from(previous);
        }
        if flag(BLOCK_SUBADDRESSES)? {
            policy = policy.blocking_subaddresses();
        }
        let extra = var(DISPOSABLE_EMAIL_DOMAINS_EXTRA).unwrap_or_default();
        if flag(BLOCK_DISPOSABLE_DOMAINS)? {
            policy = policy
                .blocking_disposable_domains(&extra)
                .map_err(|e| invalid(DISPOSABLE_EMAIL_DOMAINS_EXTRA, &extra, e.0))?;
        } else if !extra.is_empty() {
            return Err(invalid(
                DISPOSABLE_EMAIL_DOMAINS_EXTRA,
                &extra,
                "is read only with BLOCK_DISPOSABLE_DOMAINS=true",
            ));
        }
        if let Some(raw) = var(ALLOWED_EMAIL_DOMAINS) {
            policy = policy
                .allowing_only(&raw)
                .map_err(|e| invalid(ALLOWED_EMAIL_DOMAINS, &raw, e.0))?;
        }
        Ok(policy)
    }
}

/// Comma-separated domains, each in A-label form.
fn domain_list(list: &str) -> Result<Vec<String>, Invalid> {
    list.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(a_label)
        .collect()
}

/// A domain as addresses store it (lower-case A-labels), if it is one an
/// address could be at.
fn a_label(domain: &str) -> Result<String, Invalid> {
    EmailAddress::parse(&format!("x@{domain}"))
        .ok()
        .and_then(|address| address.as_str().split_once('@').map(|(_, domain)| domain.to_owned()))
        .ok_or(Invalid(
            "must be comma-separated domains such as example.com or *.example.com",
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_follow_the_policy() {
        let a = |raw: &str| EmailAddress::parse(raw).unwrap();
        let c = |raw: &str| CanonicalEmail(a(raw));
        let gmail = Canonicalization::parse("gmail").unwrap();
        let sub = Canonicalization::parse("subaddress").unwrap();
        let both = Canonicalization::parse(" subaddress , gmail ").unwrap();
        assert_eq!(
            both,
            Canonicalization {
                gmail: true,
                subaddress: true
            }
        );
        assert_eq!(Canonicalization::parse("none").unwrap(), Canonicalization::NONE);
        for bad in ["", "gmail,", "gmail,gmail", "dots", "none,gmail", "GMAIL"] {
            assert!(Canonicalization::parse(bad).is_err(), "{bad:?}");
        }
        // The default is the identity.
        assert_eq!(
            Canonicalization::NONE.canonical(&a("A.D.A+x@Gmail.com")),
            c("a.d.a+x@gmail.com")
        );
        // Gmail: dots and tags ignored, googlemail.com is gmail.com.
        assert_eq!(gmail.canonical(&a("a.d.a+news@googlemail.com")), c("ada@gmail.com"));
        assert_eq!(gmail.canonical(&a("ada@gmail.com")), c("ada@gmail.com"));
        // Only Gmail's domains under `gmail`.
        assert_eq!(gmail.canonical(&a("a.d.a+x@example.com")), c("a.d.a+x@example.com"));
        // Tags on every domain under `subaddress`; dots stay.
        assert_eq!(sub.canonical(&a("a.d.a+x+y@example.com")), c("a.d.a@example.com"));
        assert_eq!(sub.canonical(&a("a.d.a@gmail.com")), c("a.d.a@gmail.com"));
        assert_eq!(both.canonical(&a("A.d.a+1@GoogleMail.com")), c("ada@gmail.com"));
        // IDN domains are compared in their A-label form.
        assert_eq!(
            sub.canonical(&a("ada+x@Bücher.example")),
            c("ada@xn--bcher-kva.example")
        );
        // No address without its tag: left as it is.
        assert_eq!(sub.canonical(&a("+tag@example.com")), c("+tag@example.com"));
        assert_eq!(sub.canonical(&a("ada.+x@example.com")), c("ada.+x@example.com"));
        assert!(has_subaddress(&a("ada+x@example.com")));
        assert!(!has_subaddress(&a("ada@example.com")));
    }

    proptest::proptest! {
        #[test]
        fn canonicalizing_twice_is_canonicalizing_once(
            local in "[a-z0-9._+-]{1,20}",
            domain in proptest::sample::select(vec!["gmail.com", "googlemail.com", "example.com", "xn--bcher-kva.example"]),
            gmail: bool,
            subaddress: bool,
        ) {
            let Ok(address) = EmailAddress::parse(&format!("{local}@{domain}")) else {
                return Ok(());
            };
            let policy = Canonicalization { gmail, subaddress };
            let once = policy.canonical(&address);
            proptest::prop_assert_eq!(policy.canonical(once.address()), once.clone());
            let reparsed = EmailAddress::parse(once.as_str()).ok();
            proptest::prop_assert_eq!(reparsed.as_ref(), Some(once.address()));
            proptest::prop_assert!(Canonicalization::NONE.canonical(&address).is_spelled(&address));
        }
    }

    use crate::config::tests::lookup;

    fn a(raw: &str) -> EmailAddress {
        EmailAddress::parse(raw).unwrap()
    }

    #[test]
    fn the_default_policy_admits_everything_and_keeps_every_spelling_apart() {
        let policy = AddressPolicy::from_lookup(lookup(&[])).unwrap();
        assert_eq!(policy, AddressPolicy::default());
        for raw in ["ada+x@gmail.com", "a.d.a@googlemail.com", "x@mailinator.com"] {
            assert_eq!(policy.admit(&a(raw)), Ok(()));
            assert!(policy.canonical(&a(raw)).is_spelled(&a(raw)));
        }
        assert!(!policy.same(&a("ada@gmail.com"), &a("a.da@gmail.com")));
    }

    #[test]
    fn while_the_table_moves_an_address_has_its_form_under_each_policy() {
        let policy = AddressPolicy::from_lookup(lookup(&[
            ("EMAIL_CANONICALIZATION", "gmail"),
            ("EMAIL_CANONICALIZATION_FROM", "none"),
        ]))
        .unwrap();
        let forms: Vec<String> = policy
            .forms(&a("A.da@gmail.com"))
            .iter()
            .map(|f| f.as_str().to_owned())
            .collect();
        assert_eq!(forms, ["ada@gmail.com", "a.da@gmail.com"]);
        // One key when both policies agree.
        assert_eq!(policy.forms(&a("ada@example.com")).len(), 1);
        assert_eq!(policy.previous_form(&a("ada@gmail.com")), None);
        assert_eq!(AddressPolicy::default().forms(&a("a.da@gmail.com")).len(), 1);
    }

    #[test]
    fn odd_local_parts_the_parser_accepts_canonicalize_to_addresses() {
        let both = Canonicalization::parse("gmail,subaddress").unwrap();
        for raw in [
            "\"a+b\"@gmail.com",
            "a.+x@gmail.com",
            "!#$%&'*/=?^_`{|}~+x@example.com",
            "a+@example.com",
            "++@example.com",
            "A.B+C@GMAIL.COM",
        ] {
            let once = both.canonical(&a(raw));
            assert_eq!(both.canonical(once.address()), once, "{raw}");
        }
        assert_eq!(both.canonical(&a("A.B+C@GMAIL.COM")).as_str(), "ab@gmail.com");
        assert_eq!(both.canonical(&a("a+@example.com")).as_str(), "a@example.com");
    }

    #[test]
    fn each_refusal_has_its_reason() {
        let policy = AddressPolicy::default()
            .blocking_subaddresses()
            .blocking_disposable_domains("Throwaway.Example, bücher-weg.example")
            .unwrap();
        assert_eq!(policy.admit(&a("ada+news@example.com")), Err(Refusal::Subaddress));
        assert_eq!(policy.admit(&a("ada@mailinator.com")), Err(Refusal::DisposableDomain));
        // Subdomains of a disposable domain are disposable; a domain merely ending alike is not.
        assert_eq!(policy.admit(&a("ada@x.mailinator.com")), Err(Refusal::DisposableDomain));
        assert_eq!(policy.admit(&a("ada@zzmailinator.com")), Ok(()));
        // The operator's own entries, normalised as addresses are.
        assert_eq!(
            policy.admit(&a("ada@throwaway.example")),
            Err(Refusal::DisposableDomain)
        );
        assert_eq!(
            policy.admit(&a("ada@Bücher-weg.example")),
            Err(Refusal::DisposableDomain)
        );
        assert_eq!(policy.admit(&a("ada@example.com")), Ok(()));
        assert_eq!(Refusal::DomainNotAllowed.code(), "domain_not_allowed");
    }

    #[test]
    fn an_allow_list_admits_its_domains_and_subdomains_only_when_asked() {
        let policy = AddressPolicy::default()
            .allowing_only("Example.com, *.example.org")
            .unwrap();
        assert_eq!(policy.admit(&a("ada@example.com")), Ok(()));
        assert_eq!(policy.admit(&a("ada@eu.example.com")), Err(Refusal::DomainNotAllowed));
        assert_eq!(policy.admit(&a("ada@eu.example.org")), Ok(()));
        assert_eq!(policy.admit(&a("ada@a.b.example.org")), Ok(()));
        assert_eq!(policy.admit(&a("ada@example.org")), Err(Refusal::DomainNotAllowed));
        assert_eq!(policy.admit(&a("ada@badexample.org")), Err(Refusal::DomainNotAllowed));
        assert_eq!(policy.admit(&a("ada@gmail.com")), Err(Refusal::DomainNotAllowed));
    }

    #[test]
    fn the_shipped_disposable_list_loads() {
        let count = shipped_disposable_domain_count();
        assert!(count > 1_000, "{count} domains");
        // Every entry is a domain an address could be at, already in stored form.
        for domain in shipped_disposable_domains() {
            assert_eq!(a_label(domain).as_deref(), Ok(*domain));
        }
    }

    #[test]
    fn the_environment_sets_the_policy_and_a_bad_value_names_its_variable() {
        let policy = AddressPolicy::from_lookup(lookup(&[
            ("EMAIL_CANONICALIZATION", "gmail,subaddress"),
            ("BLOCK_SUBADDRESSES", "true"),
            ("BLOCK_DISPOSABLE_DOMAINS", "true"),
            ("DISPOSABLE_EMAIL_DOMAINS_EXTRA", "junk.example"),
            ("ALLOWED_EMAIL_DOMAINS", "example.com,junk.example"),
        ]))
        .unwrap();
        assert_eq!(policy.canonical(&a("a.d.a+x@googlemail.com")).as_str(), "ada@gmail.com");
        assert_eq!(policy.admit(&a("ada@junk.example")), Err(Refusal::DisposableDomain));
        assert_eq!(policy.admit(&a("ada@example.org")), Err(Refusal::DomainNotAllowed));
        for (name, value) in [
            ("EMAIL_CANONICALIZATION", "dots"),
            ("BLOCK_SUBADDRESSES", "yes"),
            ("BLOCK_DISPOSABLE_DOMAINS", "1"),
            ("ALLOWED_EMAIL_DOMAINS", "not a domain"),
            ("ALLOWED_EMAIL_DOMAINS", ","),
            ("DISPOSABLE_EMAIL_DOMAINS_EXTRA", "junk.example"),
        ] {
            let err = AddressPolicy::from_lookup(lookup(&[(name, value)])).unwrap_err();
            assert!(err.to_string().starts_with(&format!("{name} is invalid")), "{err}");
        }
    }
}
