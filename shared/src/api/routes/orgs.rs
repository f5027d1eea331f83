//! What the organization routes share: their path parameters, who the
//! caller acts as, how an organization is shown, and the audit of every
//! owner's or admin's action.

use lambda_http::Request;
use serde::Serialize;

use crate::domain::{OrgId, Organization, Role, UserId};
use crate::http::Problem;
use crate::http::request::path_param;

/// The `{orgId}` of the path.
pub fn org_param(req: &Request) -> Result<OrgId, Problem> {
    path_param(req, "orgId", OrgId::parse)
}

/// The `{userId}` of the path: a member, by their sub.
pub fn member_param(req: &Request) -> Result<UserId, Problem> {
    path_param(req, "userId", UserId::parse_sub)
}

/// An organization as its members see it, with the caller's role (none for
/// a deployment admin who is no member).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationView<'a> {
    /// The organization.
    #[serde(flatten)]
    pub organization: &'a Organization,
    /// The caller's role in it.
    pub role: Option<Role>,
}

#[cfg(feature = "aws")]
pub use handling::{acting, audited};

#[cfg(feature = "aws")]
mod handling {
    use crate::app::App;
    use crate::audit::OrgAction;
    use crate::domain::{Actor, OrgId, UserId};
    use crate::http::{Caller, Failure};

    /// Who the caller acts as: a deployment admin (`ADMIN_GROUP`) on any
    /// organization, audited, whose own profile each write checks; anyone
    /// else through their membership, which each write checks.
    pub fn acting(app: &App, caller: &Caller) -> Actor {
        if caller.is_in(&app.admin_group) {
            Actor::DeploymentAdmin(caller.user_id.clone())
        } else {
            Actor::Member(caller.user_id.clone())
        }
    }

    /// Records an owner's or admin's action and how it ended, then hands the result on.
    pub fn audited<T>(
        action: &'static str,
        actor: &Actor,
        org: OrgId,
        target: Option<&UserId>,
        result: Result<T, Failure>,
    ) -> Result<T, Failure> {
        let outcome = match &result {
            Ok(_) => "done",
            Err(failure) => failure.problem.code,
        };
        OrgAction {
            action,
            actor,
            org,
            target,
            outcome,
        }
        .record();
        result
    }
}
