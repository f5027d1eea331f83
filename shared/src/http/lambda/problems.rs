//! The one place store errors become HTTP problems: each `StoreError` with its
//! status, stable code and words for the client. 5xx problems keep the cause
//! for the log and never show it.

use lambda_http::http::StatusCode;

use crate::StoreError;
use crate::http::{Failure, Problem};

impl From<StoreError> for Failure {
    fn from(err: StoreError) -> Self {
        let problem = Problem::from(&err);
        let cause: Option<Box<dyn std::error::Error + Send + Sync>> =
            problem.status.is_server_error().then(|| Box::new(err) as _);
        Self {
            problem: Box::new(problem),
            cause,
        }
    }
}

impl From<&StoreError> for Problem {
    fn from(err: &StoreError) -> Self {
        use StatusCode as S;
        use StoreError as E;
        match err {
            E::NotFound => Self::new(S::NOT_FOUND, "NOT_FOUND", "Not found", "No such user or address."),
            E::AccountInactive => Self::new(
                S::FORBIDDEN,
                "ACCOUNT_INACTIVE",
                "Account inactive",
                "The account is suspended; it can be read but not changed.",
            ),
            E::AdminInactive => Self::forbidden_inactive_admin(),
            E::NothingToMatch => Self::new(
                S::PRECONDITION_FAILED,
                "VERSION_MISMATCH",
                "Version mismatch",
                "There is no profile for If-Match: * to match.",
            ),
            E::EmailTaken => Self::new(
                S::CONFLICT,
                "EMAIL_TAKEN",
                "Email taken",
                "Another account uses this address.",
            ),
            E::AlreadyAdded => Self::new(
                S::CONFLICT,
                "EMAIL_ALREADY_ADDED",
                "Email already added",
                "The address is on your account already.",
            ),
            &E::NotAllowed(refusal) => {
                let mut problem = Self::new(
                    S::UNPROCESSABLE_ENTITY,
                    "ADDRESS_NOT_ALLOWED",
                    "Address not allowed",
                    refusal.to_string(),
                );
                problem.reason = Some(crate::http::problem::Reason::Address(refusal));
                problem
            }
            &E::DomainNotClaimable(refusal) => {
                let mut problem = Self::new(
                    S::UNPROCESSABLE_ENTITY,
                    "DOMAIN_NOT_ALLOWED",
                    "Domain not allowed",
                    refusal.to_string(),
                );
                problem.reason = Some(crate::http::problem::Reason::Domain(refusal));
                problem
            }
            E::LimitReached => Self::new(
                S::CONFLICT,
                "EMAIL_LIMIT_REACHED",
                "Email limit reached",
                "Remove an address before adding another.",
            ),
            E::NotVerified => Self::new(
                S::CONFLICT,
                "EMAIL_NOT_VERIFIED",
                "Email not verified",
                "Verify the address before making it primary.",
            ),
            E::AlreadyVerified => Self::new(
                S::CONFLICT,
                "EMAIL_ALREADY_VERIFIED",
                "Email already verified",
                "The address is verified; no code is needed.",
            ),
            E::PrimaryEmail => Self::new(
                S::CONFLICT,
                "PRIMARY_EMAIL",
                "Primary email",
                "Make another address primary before removing this one.",
            ),
            E::SessionRevoked => Self::new(
                S::UNAUTHORIZED,
                "SESSION_REVOKED",
                "Session revoked",
                "The account was recovered since this session signed in. Sign in again.",
            ),
            E::RecoveryLinkInvalid => Self::new(
                S::NOT_FOUND,
                "RECOVERY_LINK_INVALID",
                "Recovery link not valid",
                "This recovery link is unknown, was used already, or its time has passed.",
            ),
            E::SignInAddressPending => Self::new(
                S::CONFLICT,
                "SIGN_IN_ADDRESS_PENDING",
                "Sign-in address pending",
                "You still sign in with this address: the change of your primary address has not reached sign-in yet. Try again shortly; if it persists, it is repaired within a day.",
            ),
            E::OrganizationNotFound => Self::new(
                S::NOT_FOUND,
                "ORGANIZATION_NOT_FOUND",
                "Organization not found",
                "No such organization, or you are not a member of it.",
            ),
            E::MemberNotFound => Self::new(
                S::NOT_FOUND,
                "MEMBER_NOT_FOUND",
                "Member not found",
                "The organization has no such member.",
            ),
            E::RoleRequired => Self::new(
                S::FORBIDDEN,
                "ROLE_REQUIRED",
                "Role required",
                "Your role in this organization does not allow this.",
            ),
            E::LastOwner => Self::new(
                S::CONFLICT,
                "LAST_OWNER",
                "Last owner",
                "An organization must keep an owner: make another member an owner first.",
            ),
            E::MemberSuspended => Self::new(
                S::CONFLICT,
                "MEMBER_SUSPENDED",
                "Member suspended",
                "The organization's directory suspended this membership: it cannot be made admin or owner until the directory reactivates it.",
            ),
            E::SlugTaken => Self::new(
                S::CONFLICT,
                "SLUG_TAKEN",
                "Slug taken",
                "Another organization uses this slug.",
            ),
            E::InvitationNotFound => Self::new(
                S::NOT_FOUND,
                "INVITATION_NOT_FOUND",
                "Invitation not found",
                "This invitation is unknown, was revoked or used already, or a newer mail replaced it.",
            ),
            E::InvitationExpired => Self::new(
                S::GONE,
                "INVITATION_EXPIRED",
                "Invitation expired",
                "This invitation has expired: ask the organization to send it again.",
            ),
            E::InvitationAddressNotHeld => Self::new(
                S::FORBIDDEN,
                "INVITATION_ADDRESS_NOT_HELD",
                "Invitation for another address",
                "This invitation is for an address your account does not hold verified: add and verify it first.",
            ),
            E::DomainTaken => Self::new(
                S::CONFLICT,
                "DOMAIN_TAKEN",
                "Domain taken",
                "An organization holds this domain already.",
            ),
            E::DomainNotFound => Self::new(
                S::NOT_FOUND,
                "DOMAIN_NOT_FOUND",
                "Domain not found",
                "The organization has no such domain.",
            ),
            E::DomainNotProven => Self::new(
                S::CONFLICT,
                "DOMAIN_NOT_PROVEN",
                "Domain not proven",
                "Name one of your own addresses at this domain, verified with its code.",
            ),
            E::DomainNotVerified => Self::new(
                S::CONFLICT,
                "DOMAIN_NOT_VERIFIED",
                "Domain not verified",
                "Verify the domain before its users can enroll.",
            ),
            E::DomainLimitReached => Self::new(
                S::CONFLICT,
                "DOMAIN_LIMIT_REACHED",
                "Domain limit reached",
                "Remove a domain before claiming another.",
            ),
            E::ScimTokenNotFound => Self::new(
                S::NOT_FOUND,
                "SCIM_TOKEN_NOT_FOUND",
                "SCIM token not found",
                "The organization has no such SCIM token: it was never made or has been revoked.",
            ),
            E::ScimTokenLimitReached => Self::new(
                S::CONFLICT,
                "SCIM_TOKEN_LIMIT_REACHED",
                "SCIM token limit reached",
                "Revoke a SCIM token before making another.",
            ),
            E::DirectoryNameTaken => Self::new(
                S::CONFLICT,
                "DIRECTORY_NAME_TAKEN",
                "Directory name taken",
                "The organization's directory already names another member so.",
            ),
            E::ScimTokenInvalid => Self::new(
                S::UNAUTHORIZED,
                "SCIM_TOKEN_INVALID",
                "SCIM token not valid",
                "The bearer token is not a live SCIM token of an organization.",
            ),
            &E::TooManyScimAttempts { retry_after_secs } => Self::new(
                S::TOO_MANY_REQUESTS,
                "TOO_MANY_REQUESTS",
                "Too many requests",
                "Too many SCIM requests with a token that is not valid came from here. Wait the Retry-After seconds.",
            )
            .retry_after(retry_after_secs),
            E::NotEnrollable => Self::new(
                S::FORBIDDEN,
                "ENROLLMENT_NOT_OPEN",
                "Enrollment not open",
                "This organization does not enroll users at this address's domain: ask it for an invitation.",
            ),
            E::OrganizationLimitReached => Self::new(
                S::CONFLICT,
                "ORGANIZATION_LIMIT_REACHED",
                "Organization limit reached",
                "Leave an organization before creating or joining another.",
            ),
            E::OrganizationFull => Self::new(
                S::CONFLICT,
                "ORGANIZATION_FULL",
                "Organization full",
                "The organization has the most members it may: one must leave before another joins.",
            ),
            &E::OrganizationVersionMismatch { current } => Self::new(
                S::PRECONDITION_FAILED,
                "VERSION_MISMATCH",
                "Version mismatch",
                format!("The organization changed; it is at version {current}. Read it again and retry."),
            ),
            &E::VersionMismatch { current } => Self::new(
                S::PRECONDITION_FAILED,
                "VERSION_MISMATCH",
                "Version mismatch",
                format!("The profile changed; it is at version {current}. Read it again and retry."),
            ),
            &E::VerificationFailed { attempts_left } => {
                let mut problem = Self::new(
                    S::BAD_REQUEST,
                    "VERIFICATION_FAILED",
                    "Verification failed",
                    format!("The code is wrong. {attempts_left} attempts left."),
                );
                problem.attempts_left = Some(attempts_left);
                problem
            }
            E::VerificationExpired => Self::new(
                S::GONE,
                "VERIFICATION_EXPIRED",
                "Verification expired",
                "The code has expired. Request a new one.",
            ),
            &E::TooManyAttempts { retry_after_secs } => Self::new(
                S::TOO_MANY_REQUESTS,
                "TOO_MANY_ATTEMPTS",
                "Too many attempts",
                "Too many wrong codes. Wait the Retry-After seconds, then request a new code.",
            )
            .retry_after(retry_after_secs),
            &E::TooManyRequests { retry_after_secs } => Self::new(
                S::TOO_MANY_REQUESTS,
                "TOO_MANY_REQUESTS",
                "Too many requests",
                "Too many codes were asked for this address. Wait the Retry-After seconds.",
            )
            .retry_after(retry_after_secs),
            &E::TooManyInvitations { retry_after_secs } => Self::new(
                S::TOO_MANY_REQUESTS,
                "TOO_MANY_REQUESTS",
                "Too many requests",
                "Too many invitations were sent to this address, or by this organization, in the last 24 hours. Wait the Retry-After seconds.",
            )
            .retry_after(retry_after_secs),
            &E::TooManyChecks { retry_after_secs } => Self::new(
                S::TOO_MANY_REQUESTS,
                "TOO_MANY_REQUESTS",
                "Too many requests",
                "Too many availability checks. Wait the Retry-After seconds.",
            )
            .retry_after(retry_after_secs),
            &E::TooManyExports { retry_after_secs } => Self::new(
                S::TOO_MANY_REQUESTS,
                "TOO_MANY_REQUESTS",
                "Too many requests",
                "Too many exports of your account. Wait the Retry-After seconds.",
            )
            .retry_after(retry_after_secs),
            &E::TooManyRecoveryAttempts { retry_after_secs } => Self::new(
                S::TOO_MANY_REQUESTS,
                "TOO_MANY_REQUESTS",
                "Too many requests",
                "Too many recovery links that did not work came from here. Wait the Retry-After seconds.",
            )
            .retry_after(retry_after_secs),
            E::Contended | E::Unavailable(_) => Self::unavailable(),
            E::Dynamo(_)
            | E::UnexpectedCancellation(_)
            | E::Inconsistent(_)
            | E::Superseded
            | E::ErasedBefore
            | E::Build(_)
            | E::Corrupt(_)
            | E::NoRandomSource
            | E::NoVerificationKey => Self::internal(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::http::problem::{CODES, edge_problems};

    fn every_store_error() -> Vec<StoreError> {
        use aws_sdk_dynamodb::error::{BuildError, SdkError};

        use crate::store::DynamoError;
        let dynamo = || Box::new(DynamoError::GetItem(SdkError::timeout_error("timed out")));
        let all = vec![
            StoreError::NotFound,
            StoreError::AccountInactive,
            StoreError::AdminInactive,
            StoreError::NothingToMatch,
            StoreError::EmailTaken,
            StoreError::AlreadyAdded,
            StoreError::NotAllowed(crate::address_policy::Refusal::Subaddress),
            StoreError::LimitReached,
            StoreError::NotVerified,
            StoreError::AlreadyVerified,
            StoreError::PrimaryEmail,
            StoreError::SignInAddressPending,
            StoreError::RecoveryLinkInvalid,
            StoreError::SessionRevoked,
            StoreError::VersionMismatch { current: 2 },
            StoreError::OrganizationNotFound,
            StoreError::MemberNotFound,
            StoreError::RoleRequired,
            StoreError::LastOwner,
            StoreError::MemberSuspended,
            StoreError::SlugTaken,
            StoreError::OrganizationLimitReached,
            StoreError::OrganizationFull,
            StoreError::InvitationNotFound,
            StoreError::InvitationExpired,
            StoreError::InvitationAddressNotHeld,
            StoreError::DomainTaken,
            StoreError::DomainNotClaimable(crate::org_policy::DomainRefusal::ConsumerDomain),
            StoreError::DomainNotFound,
            StoreError::DomainNotProven,
            StoreError::DomainNotVerified,
            StoreError::DomainLimitReached,
            StoreError::NotEnrollable,
            StoreError::ScimTokenNotFound,
            StoreError::ScimTokenLimitReached,
            StoreError::ScimTokenInvalid,
            StoreError::DirectoryNameTaken,
            StoreError::TooManyScimAttempts { retry_after_secs: 5 },
            StoreError::OrganizationVersionMismatch { current: 2 },
            StoreError::VerificationFailed { attempts_left: 1 },
            StoreError::VerificationExpired,
            StoreError::TooManyAttempts { retry_after_secs: 5 },
            StoreError::TooManyRequests { retry_after_secs: 5 },
            StoreError::TooManyInvitations { retry_after_secs: 5 },
            StoreError::TooManyChecks { retry_after_secs: 5 },
            StoreError::TooManyExports { retry_after_secs: 5 },
            StoreError::TooManyRecoveryAttempts { retry_after_secs: 5 },
            StoreError::NoVerificationKey,
            StoreError::NoRandomSource,
            StoreError::Contended,
            StoreError::Unavailable(dynamo()),
            StoreError::Dynamo(dynamo()),
            StoreError::UnexpectedCancellation("reason".into()),
            StoreError::Inconsistent("why"),
            StoreError::Superseded,
            StoreError::ErasedBefore,
            StoreError::Build(BuildError::missing_field("field", "why")),
            StoreError::Corrupt(<serde_dynamo::Error as serde::de::Error>::custom("bad item")),
        ];
        for err in &all {
            match err {
                StoreError::NotFound
                | StoreError::AccountInactive
                | StoreError::AdminInactive
                | StoreError::NothingToMatch
                | StoreError::EmailTaken
                | StoreError::AlreadyAdded
                | StoreError::NotAllowed(_)
                | StoreError::LimitReached
                | StoreError::NotVerified
                | StoreError::AlreadyVerified
                | StoreError::PrimaryEmail
                | StoreError::SignInAddressPending
                | StoreError::RecoveryLinkInvalid
                | StoreError::SessionRevoked
                | StoreError::VersionMismatch { .. }
                | StoreError::OrganizationNotFound
                | StoreError::MemberNotFound
                | StoreError::RoleRequired
                | StoreError::LastOwner
                | StoreError::MemberSuspended
                | StoreError::SlugTaken
                | StoreError::OrganizationLimitReached
                | StoreError::OrganizationFull
                | StoreError::InvitationNotFound
                | StoreError::InvitationExpired
                | StoreError::InvitationAddressNotHeld
                | StoreError::DomainTaken
                | StoreError::DomainNotClaimable(_)
                | StoreError::DomainNotFound
                | StoreError::DomainNotProven
                | StoreError::DomainNotVerified
                | StoreError::DomainLimitReached
                | StoreError::NotEnrollable
                | StoreError::ScimTokenNotFound
                | StoreError::ScimTokenLimitReached
                | StoreError::ScimTokenInvalid
                | StoreError::DirectoryNameTaken
                | StoreError::TooManyScimAttempts { .. }
                | StoreError::OrganizationVersionMismatch { .. }
                | StoreError::VerificationFailed { .. }
                | StoreError::VerificationExpired
                | StoreError::TooManyAttempts { .. }
                | StoreError::TooManyRequests { .. }
                | StoreError::TooManyInvitations { .. }
                | StoreError::TooManyChecks { .. }
                | StoreError::TooManyExports { .. }
                | StoreError::TooManyRecoveryAttempts { .. }
                | StoreError::NoVerificationKey
                | StoreError::NoRandomSource
                | StoreError::Contended
                | StoreError::Unavailable(_)
                | StoreError::Dynamo(_)
                | StoreError::UnexpectedCancellation(_)
                | StoreError::Inconsistent(_)
                | StoreError::Superseded
                | StoreError::ErasedBefore
                | StoreError::Build(_)
                | StoreError::Corrupt(_) => {}
            }
        }
        all
    }

    fn every_store_error_problem() -> Vec<Problem> {
        every_store_error().iter().map(Problem::from).collect()
    }

    #[test]
    fn the_codes_listed_are_exactly_those_the_code_emits() {
        let listed: BTreeSet<&str> = CODES.iter().copied().collect();
        let emitted: BTreeSet<&str> = edge_problems()
            .into_iter()
            .chain(every_store_error_problem())
            .map(|p| p.code)
            .collect();
        assert_eq!(emitted, listed, "CODES and what the code emits differ");
    }

    #[test]
    fn a_code_always_has_the_same_status() {
        let mut seen = BTreeMap::new();
        for problem in edge_problems().into_iter().chain(every_store_error_problem()) {
            let status = *seen.entry(problem.code).or_insert(problem.status);
            assert_eq!(status, problem.status, "{} answers two statuses", problem.code);
        }
    }

    /// A refused invitation says it was the invitations' cap, not the codes'
    /// (the same `TOO_MANY_REQUESTS`, its own sentence and wait).
    #[test]
    fn the_invitation_cap_has_its_own_sentence() {
        let invitations = Problem::from(&StoreError::TooManyInvitations { retry_after_secs: 7 });
        let codes = Problem::from(&StoreError::TooManyRequests { retry_after_secs: 7 });
        assert_eq!(
            (invitations.status, invitations.code, invitations.retry_after_secs),
            (StatusCode::TOO_MANY_REQUESTS, "TOO_MANY_REQUESTS", Some(7))
        );
        assert!(
            invitations.detail.starts_with("Too many invitations"),
            "{}",
            invitations.detail
        );
        assert!(!invitations.detail.contains("codes"), "{}", invitations.detail);
        assert_ne!(invitations.detail, codes.detail);
    }

    /// Promoting a suspended membership is a conflict with the membership's
    /// state, its own code.
    #[test]
    fn a_suspended_member_is_its_own_conflict() {
        let problem = Problem::from(&StoreError::MemberSuspended);
        assert_eq!(
            (problem.status, problem.code),
            (StatusCode::CONFLICT, "MEMBER_SUSPENDED")
        );
    }
}
