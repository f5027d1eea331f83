//! What an organization may claim and require: no consumer or disposable
//! domain can be claimed (anyone can hold an address there), and an
//! organization's address rules, on top of the deployment's policy, for the
//! address a member joins with.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::address_policy::{AddressPolicy, Refusal, has_subaddress};
use crate::domain::{AddressRules, EmailAddress, OrgDomain};

/// Why a domain cannot be claimed: its `reason` code in the 422 body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DomainRefusal {
    /// A free webmail provider's (or one under it).
    #[error("Anyone can hold an address at this domain (a consumer mail provider): it cannot be an organization's.")]
    ConsumerDomain,
    /// A disposable one, by the deployment's lists.
    #[error("This is a disposable mail domain: it cannot be an organization's.")]
    DisposableDomain,
}

impl DomainRefusal {
    /// The stable reason code.
    pub const fn code(self) -> &'static str {
        match self {
            Self::ConsumerDomain => "consumer_domain",
            Self::DisposableDomain => "disposable_domain",
        }
    }
}

const SHIPPED_CONSUMER_DOMAINS: &str = include_str!("../data/consumer_email_domains.txt");

fn consumer_domains() -> &'static HashSet<&'static str> {
    static DOMAINS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    DOMAINS.get_or_init(|| {
        SHIPPED_CONSUMER_DOMAINS
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect()
    })
}

/// Whether `domain`, or a domain above it, is a consumer provider's.
fn is_consumer(domain: &str) -> bool {
    let mut rest = domain;
    loop {
        if consumer_domains().contains(rest) {
            return true;
        }
        match rest.split_once('.') {
            Some((_, parent)) if parent.contains('.') => rest = parent,
            _ => return false,
        }
    }
}

/// Whether an organization may claim `domain`.
pub fn claimable(policy: &AddressPolicy, domain: &OrgDomain) -> Result<(), DomainRefusal> {
    if is_consumer(domain.as_str()) {
        return Err(DomainRefusal::ConsumerDomain);
    }
    if policy.is_disposable(domain.as_str()) {
        return Err(DomainRefusal::DisposableDomain);
    }
    Ok(())
}

/// Whether `address` may join an organization with `rules`, whose verified
/// domains are `verified`. The refusals are the deployment policy's, so a
/// client reads one 422 `ADDRESS_NOT_ALLOWED` with one set of reasons.
pub fn admit(
    policy: &AddressPolicy,
    rules: &AddressRules,
    verified: &[OrgDomain],
    address: &EmailAddress,
) -> Result<(), Refusal> {
    let domain = OrgDomain::of(address);
    if rules.verified_domains_only && !verified.contains(&domain) {
        return Err(Refusal::DomainNotAllowed);
    }
    if rules.block_disposable_domains && policy.is_disposable(domain.as_str()) {
        return Err(Refusal::DisposableDomain);
    }
    if rules.block_subaddresses && has_subaddress(address) {
        return Err(Refusal::Subaddress);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(raw: &str) -> OrgDomain {
        OrgDomain::parse(raw).unwrap()
    }

    #[test]
    fn consumer_and_disposable_domains_cannot_be_claimed() {
        let policy = AddressPolicy::default();
        assert_eq!(claimable(&policy, &d("gmail.com")), Err(DomainRefusal::ConsumerDomain));
        assert_eq!(
            claimable(&policy, &d("eu.outlook.com")),
            Err(DomainRefusal::ConsumerDomain)
        );
        assert_eq!(
            claimable(&policy, &d("mailinator.com")),
            Err(DomainRefusal::DisposableDomain)
        );
        assert_eq!(claimable(&policy, &d("acme.com")), Ok(()));
        assert!(consumer_domains().len() > 100);
    }

    #[test]
    fn rules_refuse_with_the_policys_reasons() {
        let policy = AddressPolicy::default();
        let a = |raw: &str| EmailAddress::parse(raw).unwrap();
        let none = AddressRules::default();
        assert_eq!(admit(&policy, &none, &[], &a("x+y@mailinator.com")), Ok(()));
        let strict = AddressRules {
            verified_domains_only: true,
            block_subaddresses: true,
            block_disposable_domains: true,
        };
        let acme = [d("acme.com")];
        assert_eq!(admit(&policy, &strict, &acme, &a("ada@acme.com")), Ok(()));
        assert_eq!(
            admit(&policy, &strict, &acme, &a("ada@other.com")),
            Err(Refusal::DomainNotAllowed)
        );
        assert_eq!(
            admit(&policy, &strict, &acme, &a("ada+x@acme.com")),
            Err(Refusal::Subaddress)
        );
        let loose = AddressRules {
            block_disposable_domains: true,
            ..none
        };
        assert_eq!(
            admit(&policy, &loose, &[], &a("ada@mailinator.com")),
            Err(Refusal::DisposableDomain)
        );
    }
}
