//! Organizations: their writes, each a transaction whose conditions carry
//! every rule (the actor's role and active profile, at least one owner,
//! one organization per slug, both halves of a membership), and the reads.
//! `powers` holds the conditions on the actor that every write shares.

mod accept;
mod counts;
mod create;
mod directory;
mod domains;
mod enrollment;
mod exported;
mod invitations;
mod invited;
mod members;
mod organization;
mod powers;
mod purge;
mod reads;
mod scim_addresses;
mod scim_changes;
mod scim_delete;
mod scim_list;
mod scim_pace;
mod scim_tokens;
mod scim_users;

pub(super) use directory::push_directory_removal;
pub use enrollment::Suggestion;
pub use invitations::{InvitationPage, Invited};
pub(super) use members::remove_for_erasure;
pub use purge::Purged;
pub use reads::{MemberPage, MyOrganization};
pub use scim_list::ScimPage;
pub use scim_tokens::{MadeScimToken, ScimClient};
pub use scim_users::{DirectoryAccount, ScimMember};
