//! The keys of the rate-limit counters: a user's own (`LIMIT#USER#<sub>`),
//! and an address's, named by its keyed hash (never the address); and which
//! kind of counter a user's sort key names.

use super::names::{Item, key};
use crate::domain::{LimitKind, UserId};

pub(super) const LIMIT_PREFIX: &str = "LIMIT#";
const LIMIT_USER_PREFIX: &str = "LIMIT#USER#";
const LIMIT_ADDRESS_PREFIX: &str = "LIMIT#ADDRESS#";
const CODES_ISSUED_SK: &str = "CODES_ISSUED";
const WRONG_CODES_SK: &str = "WRONG_CODES";
const AVAILABILITY_CHECKS_SK: &str = "AVAILABILITY_CHECKS";
const EXPORTS_SK: &str = "EXPORTS";
const CODES_SENT_SK: &str = "CODES_SENT";
const CODES_TO_SK_PREFIX: &str = "CODES_TO#";
const ADDRESS_SK_PREFIX: &str = "ADDRESS#";
const LIMIT_SOURCE_PREFIX: &str = "LIMIT#SOURCE#";
const RECOVERY_GUESSES_SK: &str = "RECOVERY_GUESSES";
const SCIM_GUESSES_SK: &str = "SCIM_GUESSES";
const SCIM_CREATIONS_PK: &str = "LIMIT#DEPLOYMENT#SCIM_CREATIONS";
const SECOND_SK_PREFIX: &str = "SECOND#";
const SCIM_CREATIONS_SK_PREFIX: &str = "SCIM_CREATIONS#";
const DAY_SK_PREFIX: &str = "DAY#";
const LIMIT_ORG_PREFIX: &str = "LIMIT#ORG#";
const INVITATIONS_SK: &str = "INVITATIONS";
const INVITED_SK_PREFIX: &str = "INVITED#";

/// Key of the codes issued for one address, named by its keyed hash (never the address).
pub fn codes_issued_key(address_hash: &str) -> Item {
    key(
        format!("{LIMIT_ADDRESS_PREFIX}{address_hash}"),
        CODES_ISSUED_SK.to_owned(),
    )
}

/// Key of the invitations sent to one address by any organization, named by
/// its keyed hash (never the address).
pub fn invitations_to_key(address_hash: &str) -> Item {
    key(
        format!("{LIMIT_ADDRESS_PREFIX}{address_hash}"),
        INVITATIONS_SK.to_owned(),
    )
}

/// Key of the invitations one organization sent to one address (its keyed
/// hash): a revoked invitation's sends still count.
pub fn invitations_pair_key(org: crate::domain::OrgId, address_hash: &str) -> Item {
    key(
        format!("{LIMIT_ORG_PREFIX}{org}"),
        format!("{INVITED_SK_PREFIX}{address_hash}"),
    )
}

/// Key of the invitations one organization sent.
pub fn invitations_by_key(org: crate::domain::OrgId) -> Item {
    key(format!("{LIMIT_ORG_PREFIX}{org}"), INVITATIONS_SK.to_owned())
}

/// Key of the recovery links one network source sent that undid nothing,
/// named by the keyed hash of its IP address (never the address).
pub fn recovery_guesses_key(source_hash: &str) -> Item {
    key(
        format!("{LIMIT_SOURCE_PREFIX}{source_hash}"),
        RECOVERY_GUESSES_SK.to_owned(),
    )
}

/// Key of the SCIM requests one network source sent with a token that
/// proved nothing, named by the keyed hash of its IP address.
pub fn scim_guesses_key(source_hash: &str) -> Item {
    key(
        format!("{LIMIT_SOURCE_PREFIX}{source_hash}"),
        SCIM_GUESSES_SK.to_owned(),
    )
}

/// Key of the accounts the SCIM directories made in one second (Unix
/// seconds), every organization's together.
pub fn scim_creations_key(second: i64) -> Item {
    key(SCIM_CREATIONS_PK.to_owned(), format!("{SECOND_SK_PREFIX}{second}"))
}

/// Key of the accounts one organization's directory made in one second.
pub fn scim_org_creations_second_key(org: crate::domain::OrgId, second: i64) -> Item {
    key(
        format!("{LIMIT_ORG_PREFIX}{org}"),
        format!("{SCIM_CREATIONS_SK_PREFIX}{SECOND_SK_PREFIX}{second}"),
    )
}

/// Key of the accounts one organization's directory made in one UTC day
/// (days since the Unix epoch).
pub fn scim_org_creations_day_key(org: crate::domain::OrgId, day: i64) -> Item {
    key(
        format!("{LIMIT_ORG_PREFIX}{org}"),
        format!("{SCIM_CREATIONS_SK_PREFIX}{DAY_SK_PREFIX}{day}"),
    )
}

/// Key of the wrong codes one user sent, for any address.
pub fn wrong_codes_key(user: &UserId) -> Item {
    key(format!("{LIMIT_USER_PREFIX}{user}"), WRONG_CODES_SK.to_owned())
}

/// Key of the availability checks one user made, for any address.
pub fn availability_checks_key(user: &UserId) -> Item {
    key(format!("{LIMIT_USER_PREFIX}{user}"), AVAILABILITY_CHECKS_SK.to_owned())
}

/// Key of the exports of their own account one user made.
pub fn exports_key(user: &UserId) -> Item {
    key(format!("{LIMIT_USER_PREFIX}{user}"), EXPORTS_SK.to_owned())
}

/// The partition of one user's own counters (`LIMIT#USER#<sub>`), read whole by the export.
pub fn user_limits_pk(user: &UserId) -> String {
    format!("{LIMIT_USER_PREFIX}{user}")
}

/// Which of a user's counters a sort key of `user_limits_pk` names; `None`
/// for one this service does not write. The keyed address hash in some of
/// them is dropped: it is not the user's to see (it names the address by a
/// key only the service holds).
pub fn user_limit_kind(sk: &str) -> Option<LimitKind> {
    Some(match sk {
        CODES_SENT_SK => LimitKind::CodesSent,
        WRONG_CODES_SK => LimitKind::WrongCodes,
        AVAILABILITY_CHECKS_SK => LimitKind::AvailabilityChecks,
        EXPORTS_SK => LimitKind::Exports,
        _ if sk.starts_with(CODES_TO_SK_PREFIX) => LimitKind::CodesSentToAnAddress,
        _ if sk.starts_with(ADDRESS_SK_PREFIX) => LimitKind::AnAddress,
        _ => return None,
    })
}

/// Key of the codes one user had sent, to any address.
pub fn codes_sent_key(user: &UserId) -> Item {
    key(format!("{LIMIT_USER_PREFIX}{user}"), CODES_SENT_SK.to_owned())
}

/// Key of the codes one user had sent to one address, by its keyed hash.
pub fn codes_requested_key(user: &UserId, address_hash: &str) -> Item {
    key(
        format!("{LIMIT_USER_PREFIX}{user}"),
        format!("{CODES_TO_SK_PREFIX}{address_hash}"),
    )
}

/// Key of what one user did with one address (first add, wrong codes), by its keyed hash.
pub fn user_address_key(user: &UserId, address_hash: &str) -> Item {
    key(
        format!("{LIMIT_USER_PREFIX}{user}"),
        format!("{ADDRESS_SK_PREFIX}{address_hash}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::keys::SK;

    fn s(item: &Item, k: &str) -> String {
        item[k].as_s().unwrap().clone()
    }

    #[test]
    fn every_counter_of_a_user_has_a_kind() {
        let user = UserId::parse("u").unwrap();
        let kind = |item: Item| user_limit_kind(&s(&item, SK));
        assert_eq!(kind(codes_sent_key(&user)), Some(LimitKind::CodesSent));
        assert_eq!(kind(wrong_codes_key(&user)), Some(LimitKind::WrongCodes));
        assert_eq!(
            kind(availability_checks_key(&user)),
            Some(LimitKind::AvailabilityChecks)
        );
        assert_eq!(kind(exports_key(&user)), Some(LimitKind::Exports));
        assert_eq!(
            kind(codes_requested_key(&user, "ab12")),
            Some(LimitKind::CodesSentToAnAddress)
        );
        assert_eq!(kind(user_address_key(&user, "ab12")), Some(LimitKind::AnAddress));
        assert_eq!(user_limit_kind("SOMETHING_ELSE"), None);
    }
}
