//! What events invoke: the Cognito triggers (`cognito` holds what they
//! share), the table's stream (`sync_cognito_email`) and the daily schedule
//! (`reconcile_users`).

pub mod cognito;

// >>> generated: events. Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this block.
#[cfg(feature = "legacy-passwords")]
pub mod migrate_user;
pub mod post_authentication;
pub mod post_confirmation;
pub mod pre_sign_up;
pub mod publish_events;
pub mod purge_organizations;
pub mod reconcile_users;
pub mod sync_cognito_email;
// <<< generated: events
