//! What the organization routes share: their path parameters, who the
//! caller acts as, how an organization is shown, and the audit of every
//! owner's or admin's action.

use lambda_http::Request;
use serde::Serialize;

use crate::domain::{InvitationId, OrgDomain, OrgId, Organization, Role, ScimTokenId, UserId};
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

/// The `{invitationId}` of the path.
pub fn invitation_param(req: &Request) -> Result<InvitationId, Problem> {
    path_param(req, "invitationId", InvitationId::parse)
}

/// The `{tokenId}` of the path: a SCIM token.
pub fn scim_token_param(req: &Request) -> Result<ScimTokenId, Problem> {
    path_param(req, "tokenId", ScimTokenId::parse)
}

/// The `{domain}` of the path.
pub fn domain_param(req: &Request) -> Result<OrgDomain, Problem> {
    path_param(req, "domain", OrgDomain::parse)
}

/// A page's query of an organization's list: `limit` (1 to 100, 50 by
/// default) and `after`, the previous page's last entry, as `after` parses it.
pub fn page_query<T>(
    req: &Request,
    after: impl Fn(&str) -> Result<T, crate::domain::Invalid>,
) -> Result<(usize, Option<T>), Problem> {
    use super::list_users::query::{DEFAULT_LIMIT, optional_param, parse_limit};
    let limit = match optional_param(req, "limit")? {
        None => DEFAULT_LIMIT,
        Some(raw) => parse_limit(raw).map_err(|e| Problem::validation("limit", e))?,
    };
    let after = optional_param(req, "after")?
        .map(|raw| after(raw).map_err(|e| Problem::validation("after", e)))
        .transpose()?;
    Ok((limit, after))
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
pub use handling::{acting, audited, deliver_invitation};

#[cfg(feature = "aws")]
mod handling {
    use crate::app::App;
    use crate::audit::OrgAction;
    use crate::domain::{Actor, OrgId, UserId};
    use crate::http::{Caller, Failure};
    use crate::mail::{InvitationLink, Mail};
    use crate::store::Invited;

    /// Mails an invitation. A failed delivery loses nothing: the invitation
    /// stands and can be sent again, so it is logged (without the address or
    /// the token), not returned.
    pub async fn deliver_invitation(app: &App, invited: &Invited) {
        let id = invited.invitation.invitation_id;
        let Some(sender) = &app.sender else {
            tracing::error!(invitation_id = %id, "invitation not delivered: this function has no sender (catalog: sends_email)");
            return;
        };
        let accept = InvitationLink {
            token: invited.token.encode(),
            page: app.invitation_page.clone(),
        };
        let mail = Mail::Invitation {
            invitation_id: id,
            org_name: &invited.org_name,
            role: invited.invitation.role,
            accept: &accept,
            valid_until: invited.invitation.expires_at,
        };
        if let Err(err) = sender.send(&invited.invitation.email, &mail).await {
            tracing::error!(invitation_id = %id, cause = %crate::error::chain(&err), "invitation not delivered");
        }
    }

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
