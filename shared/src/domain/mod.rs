//! Domain types. Parsed once at the edge, trusted everywhere after ("parse, don't validate").
//! No AWS types live here. Each file holds one kind of value; every one is
//! named from here, as `crate::domain::X`.

mod characters;
mod email_address;
mod export;
mod ids;
mod invalid;
mod invitation;
mod new_account;
mod org_domain;
mod organization;
mod person;
mod profile;
mod scim_token;
mod timestamp;

pub use email_address::EmailAddress;
pub use export::{
    AccountExport, ClaimExport, DirectoryAttribute, DirectoryExport, DirectoryNameExport, EXPORT_FORMAT_VERSION,
    EmailExport, InvitationExport, LimitExport, LimitKind, MembershipExport, PendingVerification, ProfileExport,
    RecoveryExport, SwitchExport,
};
pub use ids::{EmailId, ImportKey, PENDING_USER_PREFIX, UserId};
pub use invalid::Invalid;
pub use invitation::{Invitation, InvitationId};
pub use new_account::{AdditionalEmail, NewAccount, NewUser};
pub use org_domain::{AddressRules, DomainStatus, DomainView, Enrollment, OrgDomain};
pub use organization::{
    Actor, Membership, NewOrganization, OrgId, OrgName, Organization, OrganizationPatch, Power, Role, Slug,
};
pub use person::{PersonName, Phone};
pub use profile::{Account, Email, IfMatch, ListPosition, Profile, ProfilePatch, UserStatus, UserSummary};
pub use scim_token::{ScimTokenId, ScimTokenInfo, ScimTokenName};
pub use timestamp::Timestamp;
