//! The audit trail of admin actions: one INFO event each, users by `sub` alone.
//! Written by the admin handlers, and by the HTTP edge for a caller refused at
//! admission (not in the admin group, or an admin whose account is no longer
//! active), so probing the admin routes leaves a trace too.

use crate::domain::UserId;
use crate::metrics::{self, Metric};

/// The tracing target of the audit trail: the log filter keeps it on at
/// every level (`app::LogSettings`).
pub const TARGET: &str = "audit";

/// An admin action and how it ended, for the audit trail.
pub(crate) struct AdminAction<'a> {
    /// `lookup`, `suspend`, `reactivate`, `delete`, `set_status` for a
    /// request too malformed to say, or `admit` for a caller the route did not
    /// admit.
    pub(crate) action: &'static str,
    pub(crate) admin: &'a UserId,
    /// The user acted on; `None` when there is none (a lookup that found
    /// nobody: never the address searched for).
    pub(crate) target: Option<&'a UserId>,
    /// `found`, `not_found`, `suspended`, `reactivated`, `deleted`, or the
    /// problem code of a refusal or failure.
    pub(crate) outcome: &'a str,
    /// The metric it counts; `None` for an action that changed nothing.
    pub(crate) metric: Option<Metric>,
}

impl AdminAction<'_> {
    /// One INFO event with target `audit`, users by `sub` alone, and its metric.
    pub(crate) fn record(self) {
        if let Some(metric) = self.metric {
            metrics::count(metric);
        }
        tracing::info!(
            target: TARGET,
            audit = "admin_action",
            action = self.action,
            admin = self.admin.as_str(),
            target = self.target.map(UserId::as_str),
            outcome = self.outcome,
            "admin action"
        );
    }
}

/// An organization owner's or admin's action (or a deployment admin's on any
/// organization), for the audit trail: users by `sub`, the organization by id.
pub(crate) struct OrgAction<'a> {
    /// `rename`, `delete`, `set_role`, `remove_member`, `leave`.
    pub(crate) action: &'static str,
    pub(crate) actor: &'a crate::domain::Actor,
    pub(crate) org: crate::domain::OrgId,
    /// The member acted on, if any.
    pub(crate) target: Option<&'a UserId>,
    /// `done`, `unchanged`, or the problem code of a refusal or failure.
    pub(crate) outcome: &'a str,
}

impl OrgAction<'_> {
    /// One INFO event with target `audit`; a deployment admin's override says so.
    pub(crate) fn record(self) {
        let deployment_admin = matches!(self.actor, crate::domain::Actor::DeploymentAdmin(_));
        tracing::info!(
            target: TARGET,
            audit = "organization_action",
            action = self.action,
            actor = self.actor.user().as_str(),
            deployment_admin,
            org = %self.org,
            target = self.target.map(UserId::as_str),
            outcome = self.outcome,
            "organization action"
        );
    }
}
