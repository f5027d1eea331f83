//! The keys of a switch of the primary that the former address can still undo:
//! in the user's partition, so the account's one Query reads them and an
//! erasure finds them, in version order.

use super::accounts::user_pk;
use super::names::{Item, key};
use crate::domain::UserId;

pub(super) const CHANGE_PREFIX: &str = "CHANGE#";

/// The sort key of the switch that wrote profile version `version`: zero-padded,
/// so the partition lists switches oldest first.
pub fn change_sk(version: u64) -> String {
    format!("{CHANGE_PREFIX}{version:020}")
}

/// What every switch's sort key begins with, to Query a user's switches alone.
pub fn change_sk_prefix() -> &'static str {
    CHANGE_PREFIX
}

/// Key of the switch that wrote profile version `version` of `user`.
pub fn change_key(user: &UserId, version: u64) -> Item {
    key(user_pk(user), change_sk(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_is_keyed_by_its_version_in_the_users_partition() {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let k = change_key(&user, 42);
        assert_eq!(k["PK"].as_s().unwrap(), "USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert_eq!(k["SK"].as_s().unwrap(), "CHANGE#00000000000000000042");
        assert!(change_sk(9) < change_sk(10));
        // list-emails reads the partition from EMAIL# on (the addresses, then
        // the profile): the switches sort before it, so they never grow that read.
        assert!(change_sk(u64::MAX).as_str() < super::super::EMAIL_SK_PREFIX);
        assert!(super::super::EMAIL_SK_PREFIX < super::super::accounts::PROFILE_SK);
    }
}
