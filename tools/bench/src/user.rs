//! The bench's one user, Ada: her sub and address, seeding her in the table,
//! and the HTTP events of events/ made for her or for another caller.

use serde_json::{Value, json};
use user_service::Store;
use user_service::domain::{EmailAddress, NewUser, Timestamp, UserId};

/// The sub and address of the user every HTTP event in events/ is for.
pub(crate) const ADA: &str = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";
pub(crate) const ADA_EMAIL: &str = "ada@example.com";

/// An HTTP event for `user`, signed in just now: the routes that need a
/// recent sign-in refuse the files' own `auth_time`, the day they were captured.
pub(crate) fn with_sub(mut event: Value, user: &str) -> Value {
    if let Some(claims) = event.pointer_mut("/requestContext/authorizer/jwt/claims") {
        claims["sub"] = json!(user);
        claims["username"] = json!(user);
        claims["auth_time"] = json!(Timestamp::now().unix_seconds().to_string());
    }
    event
}

pub(crate) async fn seed_user(store: &Store, user: &str, email: &str) {
    let new = NewUser {
        user_id: UserId::parse(user).unwrap(),
        email: EmailAddress::parse(email).unwrap(),
        first_name: None,
        last_name: None,
        phone: None,
    };
    store.create_user(&new, Timestamp::now()).await.unwrap();
}
