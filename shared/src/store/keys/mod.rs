//! The stored format: the single-table key schema, and the name of every
//! attribute an item holds. This is the only module that spells key attribute
//! names, prefixes and attribute names: they are what other tools read.
//! Each family of items spells its own keys; `classify` reads any key back.

mod accounts;
mod classify;
mod counters;
mod names;
mod organizations;
mod reconcile;
mod recovery;
mod table;

pub use accounts::*;
pub use classify::*;
pub use counters::*;
pub use names::*;
pub use organizations::*;
pub use reconcile::*;
pub use recovery::*;
pub use table::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{EmailId, UserId};

    fn s(item: &Item, k: &str) -> String {
        item[k].as_s().unwrap().clone()
    }

    #[test]
    fn stored_key_strings_are_exact() {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let email_id = EmailId::parse("0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b").unwrap();
        let email = crate::address_policy::Canonicalization::NONE
            .canonical(&crate::domain::EmailAddress::parse("Ada@Example.com").unwrap());

        let profile = profile_key(&user);
        assert_eq!(s(&profile, "PK"), "USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert_eq!(s(&profile, "SK"), "PROFILE");
        assert_eq!(profile.len(), 2);

        let record = email_record_keys(&user, email_id, &email);
        assert_eq!(s(&record, "PK"), "USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert_eq!(s(&record, "SK"), "EMAIL#0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
        assert_eq!(s(&record, "GSI1PK"), "EMAIL#ada@example.com");
        assert_eq!(s(&record, "GSI1SK"), "USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");

        let claim = claim_key(&email);
        assert_eq!(s(&claim, "PK"), "EMAIL#ada@example.com");
        assert_eq!(s(&claim, "SK"), "UNIQUE");
        assert_eq!(claim.len(), 2);

        assert_eq!(s(&codes_issued_key("ab12"), "PK"), "LIMIT#ADDRESS#ab12");
        assert_eq!(s(&codes_issued_key("ab12"), "SK"), "CODES_ISSUED");
        assert_eq!(
            s(&wrong_codes_key(&user), "PK"),
            "LIMIT#USER#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e"
        );
        assert_eq!(s(&wrong_codes_key(&user), "SK"), "WRONG_CODES");
        assert_eq!(s(&codes_sent_key(&user), "SK"), "CODES_SENT");
        assert_eq!(s(&codes_requested_key(&user, "ab12"), "SK"), "CODES_TO#ab12");
        assert_eq!(
            s(&codes_requested_key(&user, "ab12"), "PK"),
            s(&codes_sent_key(&user), "PK")
        );
        assert_eq!(s(&user_address_key(&user, "ab12"), "SK"), "ADDRESS#ab12");
        assert_eq!(s(&exports_key(&user), "SK"), "EXPORTS");
        assert_eq!(s(&exports_key(&user), "PK"), user_limits_pk(&user));
        assert_eq!(s(&codes_sent_key(&user), "PK"), user_limits_pk(&user));
    }
}
