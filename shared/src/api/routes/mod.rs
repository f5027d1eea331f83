//! The HTTP routes, one module per function. Each module holds the route
//! whole: how its request reads into domain values (`parse`: pure, so the fuzz
//! targets build it without the SDKs), its handler (`handle`: one store method,
//! its result mapped, inside `http::lambda::serve`; behind `aws`), and its
//! contract ([`Route`]: what the request reads, what the handler can refuse, a
//! request it answers). [`ROUTES`] lists them, in the catalog's order: the test
//! app dispatches through it, and the fuzz target, the contract and the hostile
//! suites walk it, so a route none of them knows cannot exist.

#[cfg(feature = "aws")]
use std::convert::Infallible;
#[cfg(feature = "aws")]
use std::future::Future;
#[cfg(feature = "aws")]
use std::pin::Pin;

use lambda_http::Request;
#[cfg(feature = "aws")]
use lambda_http::{Body, Response};

use crate::catalog::Function;
use crate::http::Problem;

#[cfg(feature = "aws")]
mod codes;
#[cfg(fuzzing)]
pub(crate) mod fuzzing;
pub mod orgs;

/// A route module's [`Route`]: the unit struct `$route` for the catalog entry
/// `$function`, whose handler is the module's `handle` (behind `aws`). With
/// `parse`, the module's `parse(&Request) -> Result<T, Problem>` reads its
/// values after the caller, and under `cfg(fuzzing)` its `admitted(&Request,
/// &T)` holds them to the raw request; without, the caller is all it reads.
macro_rules! route {
    (
        $(#[$doc:meta])*
        $route:ident: $function:path,
        parse,
        reads: $reads:expr,
        example: $example:expr,
        refusals: [$($refusal:expr),* $(,)?] $(,)?
    ) => {
        route!(@impl $(#[$doc])* $route, $function, $reads, $example, [$($refusal),*], |req| {
            let values = parse(req)?;
            #[cfg(fuzzing)]
            admitted(req, &values);
            let _ = values;
            Ok(())
        });
    };
    (
        $(#[$doc:meta])*
        $route:ident: $function:path,
        reads: $reads:expr,
        example: $example:expr,
        refusals: [$($refusal:expr),* $(,)?] $(,)?
    ) => {
        route!(@impl $(#[$doc])* $route, $function, $reads, $example, [$($refusal),*], |_req| Ok(()));
    };
    (@impl $(#[$doc:meta])* $route:ident, $function:path, $reads:expr, $example:expr, [$($refusal:expr),*], |$req:ident| $values:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $route;

        impl $crate::api::routes::Route for $route {
            fn function(&self) -> &'static $crate::catalog::Function {
                &$function
            }

            fn parse(&self, $req: &::lambda_http::Request) -> Result<(), $crate::http::Problem> {
                if $function.access() != $crate::catalog::Access::Anyone {
                    $crate::http::request::caller($req)?;
                }
                $values
            }

            fn reads(&self) -> $crate::api::routes::Reads {
                $reads
            }

            fn example(&self) -> $crate::api::routes::Example {
                $example
            }

            #[cfg(feature = "aws")]
            fn refusals(&self) -> Vec<$crate::StoreError> {
                vec![$($refusal),*]
            }

            #[cfg(feature = "aws")]
            fn handle<'a>(
                &'a self,
                app: &'a $crate::app::App,
                req: ::lambda_http::Request,
            ) -> $crate::api::routes::Handled<'a> {
                Box::pin(handle(app, req))
            }
        }
    };
}

// >>> generated: routes. Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this block.
pub mod accept_invitation;
pub mod add_email;
pub mod check_email;
pub mod claim_domain;
pub mod create_invitation;
pub mod create_organization;
pub mod create_scim_token;
pub mod delete_account;
pub mod delete_organization;
pub mod export_account;
pub mod find_user_by_email;
pub mod get_account;
pub mod get_email;
pub mod get_organization;
pub mod get_profile;
pub mod join_by_domain;
pub mod list_domains;
pub mod list_emails;
pub mod list_invitations;
pub mod list_members;
pub mod list_my_organizations;
pub mod list_scim_tokens;
pub mod list_users;
pub mod recover_account;
pub mod recovery_page;
pub mod remove_domain;
pub mod remove_email;
pub mod remove_member;
pub mod resend_invitation;
pub mod revoke_invitation;
pub mod revoke_scim_token;
pub mod send_verification;
pub mod set_member_role;
pub mod set_primary_email;
pub mod set_user_status;
pub mod suggest_organizations;
pub mod update_domain;
pub mod update_organization;
pub mod update_profile;
pub mod verify_domain;
pub mod verify_email;

/// Every HTTP route, in the catalog's order.
pub static ROUTES: &[&dyn Route] = &[
    &get_profile::GetProfile,
    &get_account::GetAccount,
    &update_profile::UpdateProfile,
    &list_emails::ListEmails,
    &add_email::AddEmail,
    &send_verification::SendVerification,
    &verify_email::VerifyEmail,
    &set_primary_email::SetPrimaryEmail,
    &remove_email::RemoveEmail,
    &get_email::GetEmail,
    &delete_account::DeleteAccount,
    &check_email::CheckEmail,
    &export_account::ExportAccount,
    &recovery_page::RecoveryPage,
    &recover_account::RecoverAccount,
    &find_user_by_email::FindUserByEmail,
    &list_users::ListUsers,
    &set_user_status::SetUserStatus,
    &create_organization::CreateOrganization,
    &list_my_organizations::ListMyOrganizations,
    &get_organization::GetOrganization,
    &update_organization::UpdateOrganization,
    &delete_organization::DeleteOrganization,
    &list_members::ListMembers,
    &set_member_role::SetMemberRole,
    &remove_member::RemoveMember,
    &create_invitation::CreateInvitation,
    &list_invitations::ListInvitations,
    &resend_invitation::ResendInvitation,
    &revoke_invitation::RevokeInvitation,
    &accept_invitation::AcceptInvitation,
    &claim_domain::ClaimDomain,
    &list_domains::ListDomains,
    &verify_domain::VerifyDomain,
    &update_domain::UpdateDomain,
    &remove_domain::RemoveDomain,
    &suggest_organizations::SuggestOrganizations,
    &join_by_domain::JoinByDomain,
    &create_scim_token::CreateScimToken,
    &list_scim_tokens::ListScimTokens,
    &revoke_scim_token::RevokeScimToken,
];
// <<< generated: routes

/// One HTTP route, as its module describes it.
pub trait Route: Sync {
    /// Its catalog entry: name, method, path, access.
    fn function(&self) -> &'static Function;

    /// The request read as the handler reads it before any store call: the
    /// caller, then the route's own values; a 4xx problem when it cannot be.
    /// Under `cfg(fuzzing)` it also holds what it admitted to the raw request.
    fn parse(&self, req: &Request) -> Result<(), Problem>;

    /// What of the request the route reads: what can be refused before the store.
    fn reads(&self) -> Reads;

    /// A request the route answers with success.
    fn example(&self) -> Example;

    /// What the store can refuse the route, beside what every route can be
    /// refused (no identity, DynamoDB busy or failing).
    #[cfg(feature = "aws")]
    fn refusals(&self) -> Vec<crate::StoreError>;

    /// The Lambda handler: the response, never an error.
    #[cfg(feature = "aws")]
    fn handle<'a>(&'a self, app: &'a crate::app::App, req: Request) -> Handled<'a>;
}

/// A handler's response, boxed so that [`ROUTES`] can list every route.
#[cfg(feature = "aws")]
pub type Handled<'a> = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send + 'a>>;

/// The route of a catalog entry, if it is an HTTP route.
pub fn route_of(function: &Function) -> Option<&'static dyn Route> {
    ROUTES.iter().copied().find(|route| route.function() == function)
}

/// What of a request a route reads, and so can refuse before the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// A JSON body: 400, 413 or 415 when it is not one the route takes.
    pub json_body: bool,
    /// `If-Match`: 400, 412 or 428.
    pub if_match: bool,
    /// The path parameters, each parsed with a domain parser (400 naming it).
    pub path: &'static [&'static str],
    /// The query parameters, each parsed with a domain parser (400 naming it).
    pub query: &'static [&'static str],
    /// Every query parameter has a default: a request without any is answered.
    pub query_defaults: bool,
}

impl Reads {
    /// Nothing but the caller.
    pub const CALLER: Self = Self {
        json_body: false,
        if_match: false,
        path: &[],
        query: &[],
        query_defaults: false,
    };

    /// Whether a path or query parameter is parsed.
    pub fn parameter(&self) -> bool {
        !self.path.is_empty() || !self.query.is_empty()
    }
}

/// A request the route answers with `status`, for a caller whose account has
/// the fixtures' shape: a primary, an unverified address issued the fixtures'
/// code, and a verified secondary. An admin route acts on another user, the
/// owner; a user's route on the caller's own account (the owner is the caller).
/// Values are written with placeholders the suites fill:
///
/// - `{unverified}`, `{secondary}`: the owner's addresses' `emailId`s;
/// - `{primary}`: the owner's primary address; `{owner}`: the owner's `sub`;
/// - `{code}`: the code the unverified address was issued;
/// - `{extra}`: an address nobody holds, the caller's own to add;
/// - `{free}`: an address nobody holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// The success status.
    pub status: u16,
    /// Path parameters and their values.
    pub path: &'static [(&'static str, &'static str)],
    /// Query parameters and their values.
    pub query: &'static [(&'static str, &'static str)],
    /// The JSON body.
    pub body: Option<&'static str>,
    /// `If-Match` with the owner's current version.
    pub if_match: bool,
}

impl Example {
    /// A request with nothing but the caller, answered `status`.
    pub const fn bare(status: u16) -> Self {
        Self {
            status,
            path: &[],
            query: &[],
            body: None,
            if_match: false,
        }
    }
}
