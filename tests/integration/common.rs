use integration_tests::invariants;
use user_service::Store;
use user_service::domain::{EmailAddress, NewUser, PersonName, Phone, Timestamp, UserId};
use user_service::verification::VerificationCode;

pub(crate) fn uid(name: &str) -> UserId {
    UserId::parse(&format!("{name}-{}", uuid::Uuid::new_v4())).unwrap()
}

pub(crate) fn addr(raw: &str) -> EmailAddress {
    EmailAddress::parse(raw).unwrap()
}

pub(crate) fn code(raw: &str) -> VerificationCode {
    VerificationCode::parse(raw).unwrap()
}

/// The same instant for every call in the test process: time passes only where a
/// test adds seconds to it.
pub(crate) fn now() -> Timestamp {
    integration_tests::start_time()
}

pub(crate) fn new_user(user: &UserId, email: &str) -> NewUser {
    NewUser {
        user_id: user.clone(),
        email: addr(email),
        first_name: Some(PersonName::parse("Ada").unwrap()),
        last_name: Some(PersonName::parse("Lovelace").unwrap()),
        phone: Some(Phone::parse("+14155550100").unwrap()),
    }
}

/// A confirmed user with a verified primary address.
pub(crate) async fn signed_up(store: &Store, name: &str, email: &str) -> UserId {
    let user = uid(name);
    store.create_user(&new_user(&user, email), now()).await.unwrap();
    user
}

/// A user with a second, verified address; returns its email id.
pub(crate) async fn with_verified(store: &Store, user: &UserId, email: &str) -> user_service::domain::EmailId {
    let c = code("111111");
    let added = store.add_email(user, &addr(email), &c, now()).await.unwrap();
    store.verify_email(user, added.email_id, &c, now()).await.unwrap();
    added.email_id
}

pub(crate) use invariants::{assert_store_holds as assert_invariants, item_count};
