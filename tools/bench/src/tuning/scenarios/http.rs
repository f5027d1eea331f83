//! The HTTP routes' scenarios: the sample request of events/, from a caller
//! whose account makes it succeed. A route that writes, counts or is limited
//! per user gets a fresh user each time; the reads go to one reader.

use serde_json::{Value, json};
use user_service::catalog::Function;
use user_service::domain::{EmailAddress, EmailId, NewOrganization, OrgId, OrgName, Role, Slug, Timestamp, UserId};
use user_service::verification::VerificationCode;

use super::{Account, World, no_scenario};
use crate::user::{ADA, with_sub};

/// The id the samples name the address by in their paths.
const SAMPLE_EMAIL_ID: &str = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
/// The organization, and the member, the organization samples name in their paths.
const SAMPLE_ORG_ID: &str = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c";
const SAMPLE_MEMBER: &str = "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b";
/// The domain the domain samples name in their paths.
const SAMPLE_DOMAIN: &str = "acme.example";
/// The invitation the invitation samples name in their paths.
const SAMPLE_INVITATION_ID: &str = "6b1d9e2f-4c3a-4b8e-9f0a-1c2d3e4f5a6b";

/// The SCIM token the token samples name in their paths.
const SAMPLE_SCIM_TOKEN_ID: &str = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5e";

/// How long before send-verification's invocation its address was added
/// with its first code: past the resend interval (60 s by default), well
/// within the hour an unverified address is held.
const ADDED_SECONDS_AGO: i64 = 120;

impl World {
    pub(super) async fn http_event(&self, f: &Function) -> Value {
        match f.name {
            "get-profile" | "get-account" | "list-emails" => self.http(f, &self.reader.user),
            "get-email" => {
                let mut event = self.http(f, &self.reader.user);
                set_email_id(&mut event, self.reader.second.expect("the reader's second address"));
                event
            }
            // If-Match names the fresh user's version.
            "update-profile" | "delete-account" => {
                let fresh = self.account(false).await;
                let version = self
                    .store
                    .get_profile(&fresh.user)
                    .await
                    .unwrap_or_else(|e| panic!("a fresh profile: {e}"))
                    .version;
                let mut event = self.http(f, &fresh.user);
                event["headers"]["if-match"] = json!(format!("\"{version}\""));
                event
            }
            // A fresh address nobody holds.
            "add-email" => {
                let fresh = self.account(false).await;
                let mut event = self.http(f, &fresh.user);
                set_body(&mut event, &json!({ "email": self.names.address("added") }));
                event
            }
            "check-email" => {
                let fresh = self.account(false).await;
                let mut event = self.http(f, &fresh.user);
                set_query(&mut event, "email", &self.names.address("checked"));
                event
            }
            "export-account" => {
                let fresh = self.account(false).await;
                self.http(f, &fresh.user)
            }
            // An address added a while ago: a new code is due.
            "send-verification" => {
                let (fresh, _, id) = self.added(Timestamp::now().plus_seconds(-ADDED_SECONDS_AGO)).await;
                let mut event = self.http(f, &fresh.user);
                set_email_id(&mut event, id);
                event
            }
            // An address just added, with the code made here that its owner got.
            "verify-email" => {
                let (fresh, code, id) = self.added(Timestamp::now()).await;
                let mut event = self.http(f, &fresh.user);
                set_email_id(&mut event, id);
                set_body(&mut event, &json!({ "code": code.reveal() }));
                event
            }
            "set-primary-email" => {
                let fresh = self.account(true).await;
                let mut event = self.http(f, &fresh.user);
                let id = fresh.second.expect("a second address").to_string();
                set_body(&mut event, &json!({ "emailId": id }));
                event
            }
            "remove-email" => {
                let fresh = self.account(true).await;
                let mut event = self.http(f, &fresh.user);
                set_email_id(&mut event, fresh.second.expect("a second address"));
                event
            }
            // The page reads nothing; no caller.
            "recovery-page" => self.sample(f.name),
            // A fresh user's switch to their second address, undone by its link.
            "recover-account" => {
                let fresh = self.account(true).await;
                let now = Timestamp::now();
                let second = fresh.second.expect("a second address");
                let switched = self
                    .store
                    .set_primary(&fresh.user, second, now)
                    .await
                    .unwrap_or_else(|e| panic!("a switch: {e}"));
                let (token, _) = self
                    .store
                    .issue_recovery_token(&fresh.user, switched.version, now)
                    .await
                    .unwrap_or_else(|e| panic!("a recovery token: {e}"))
                    .expect("a fresh switch takes a token");
                let mut event = self.sample(f.name);
                set_body(&mut event, &json!({ "token": token.encode() }));
                event
            }
            "find-user-by-email" => {
                let mut event = self.http(f, &self.admin.user);
                set_query(&mut event, "email", self.reader.email.as_str());
                event
            }
            "list-users" => self.http(f, &self.admin.user),
            // The admin suspends a fresh user.
            "set-user-status" => {
                let target = self.account(false).await;
                let mut event = self.http(f, &self.admin.user);
                event["pathParameters"]["userId"] = json!(target.user.as_str());
                for pointer in ["/rawPath", "/requestContext/http/path"] {
                    replace_in(&mut event, pointer, ADA, target.user.as_str());
                }
                event
            }
            // An organization of a fresh owner's own.
            "create-organization" => {
                let fresh = self.account(false).await;
                let mut event = self.http(f, &fresh.user);
                set_body(&mut event, &json!({ "name": "Acme", "slug": self.names.slug() }));
                event
            }
            "list-my-organizations" => self.http(f, &self.reader.user),
            "get-organization" | "list-members" | "update-organization" | "delete-organization" => {
                let (owner, org) = self.organization().await;
                let mut event = self.http(f, &owner.user);
                set_path(&mut event, SAMPLE_ORG_ID, &org.to_string());
                if event["headers"]["if-match"].is_string() {
                    event["headers"]["if-match"] = json!("\"1\"");
                }
                event
            }
            // A member of a fresh owner's organization: made an admin, or removed.
            "set-member-role" | "remove-member" => {
                let (owner, org) = self.organization().await;
                let member = self.account(false).await;
                self.store
                    .join_organization(org, &member.user, Role::Member, Timestamp::now())
                    .await
                    .unwrap_or_else(|e| panic!("a member: {e}"));
                let mut event = self.http(f, &owner.user);
                set_path(&mut event, SAMPLE_ORG_ID, &org.to_string());
                set_path(&mut event, SAMPLE_MEMBER, member.user.as_str());
                event
            }
            // A fresh organization invites a fresh address.
            "create-invitation" => {
                let (owner, org) = self.organization().await;
                let mut event = self.http(f, &owner.user);
                set_path(&mut event, SAMPLE_ORG_ID, &org.to_string());
                set_body(
                    &mut event,
                    &json!({ "email": self.names.address("invitee"), "role": "member" }),
                );
                event
            }
            "list-invitations" => {
                let (owner, org) = self.organization().await;
                let mut event = self.http(f, &owner.user);
                set_path(&mut event, SAMPLE_ORG_ID, &org.to_string());
                event
            }
            // A fresh organization's one pending invitation.
            "resend-invitation" | "revoke-invitation" => {
                let (owner, org) = self.organization().await;
                let to = EmailAddress::parse(&self.names.address("invitee")).expect("an address");
                let invited = self.invite(&owner, org, &to).await;
                let mut event = self.http(f, &owner.user);
                set_path(&mut event, SAMPLE_ORG_ID, &org.to_string());
                set_path(
                    &mut event,
                    SAMPLE_INVITATION_ID,
                    &invited.invitation.invitation_id.to_string(),
                );
                event
            }
            // A fresh user accepts an invitation to their primary.
            "accept-invitation" => {
                let (owner, org) = self.organization().await;
                let invitee = self.account(false).await;
                let invited = self.invite(&owner, org, &invitee.email).await;
                let mut event = self.http(f, &invitee.user);
                set_body(&mut event, &json!({ "token": invited.token.encode() }));
                event
            }
            // A fresh organization claims a fresh domain.
            "claim-domain" | "list-domains" => {
                let (owner, org) = self.organization().await;
                let mut event = self.http(f, &owner.user);
                set_path(&mut event, SAMPLE_ORG_ID, &org.to_string());
                if f.name == "claim-domain" {
                    set_body(&mut event, &json!({ "domain": self.names.domain() }));
                }
                event
            }
            // A fresh organization's pending domain, and its owner's verified address there.
            "verify-domain" | "update-domain" | "remove-domain" => {
                let (owner, org, domain, at) = self.domain(f.name != "verify-domain").await;
                let mut event = self.http(f, &owner.user);
                set_path(&mut event, SAMPLE_ORG_ID, &org.to_string());
                set_path(&mut event, SAMPLE_DOMAIN, domain.as_str());
                if f.name == "verify-domain" {
                    set_body(&mut event, &json!({ "emailId": at.to_string() }));
                }
                event
            }
            // A fresh user at an inviting domain: their suggestions, or their enrollment.
            "suggest-organizations" | "join-by-domain" => {
                let (_, org, domain, _) = self.domain(true).await;
                let owner = Account {
                    user: self.account(false).await.user,
                    email: EmailAddress::parse(&format!("someone-{}@{domain}", self.names.slug())).expect("an address"),
                    second: None,
                };
                let at = self.verified(&owner.user, &owner.email).await;
                let mut event = self.http(f, &owner.user);
                if f.name == "join-by-domain" {
                    set_path(&mut event, SAMPLE_ORG_ID, &org.to_string());
                    set_body(&mut event, &json!({ "emailId": at.to_string() }));
                }
                event
            }
            // A fresh organization: a token made, the list, a token revoked.
            "create-scim-token" | "list-scim-tokens" | "revoke-scim-token" => {
                let (owner, org) = self.organization().await;
                let mut event = self.http(f, &owner.user);
                set_path(&mut event, SAMPLE_ORG_ID, &org.to_string());
                if f.name == "revoke-scim-token" {
                    let actor = user_service::domain::Actor::Member(owner.user.clone());
                    let name = user_service::domain::ScimTokenName::parse("Okta").expect("a name");
                    let made = self
                        .store
                        .create_scim_token(&actor, org, &name, Timestamp::now())
                        .await
                        .unwrap_or_else(|e| panic!("a SCIM token: {e}"));
                    set_path(&mut event, SAMPLE_SCIM_TOKEN_ID, &made.info.token_id.to_string());
                }
                event
            }
            _ => no_scenario(f),
        }
    }

    /// A fresh organization with a domain, proved by its owner's verified
    /// address there (the address's id); verified and inviting when `open`.
    pub(super) async fn domain(&self, open: bool) -> (Account, OrgId, user_service::domain::OrgDomain, EmailId) {
        let (owner, org) = self.organization().await;
        let domain = user_service::domain::OrgDomain::parse(&self.names.domain()).expect("a domain");
        let actor = user_service::domain::Actor::Member(owner.user.clone());
        self.store
            .claim_domain(&actor, org, &domain, Timestamp::now())
            .await
            .unwrap_or_else(|e| panic!("a domain: {e}"));
        let address = EmailAddress::parse(&format!("it@{domain}")).expect("an address");
        let at = self.verified(&owner.user, &address).await;
        if open {
            self.store
                .verify_domain(&actor, org, &domain, at, Timestamp::now())
                .await
                .unwrap_or_else(|e| panic!("a verified domain: {e}"));
            self.store
                .set_enrollment(&actor, org, &domain, user_service::domain::Enrollment::Invite)
                .await
                .unwrap_or_else(|e| panic!("an inviting domain: {e}"));
        }
        (owner, org, domain, at)
    }

    /// `address` added to `user`'s account and verified with its code.
    pub(super) async fn verified(&self, user: &UserId, address: &EmailAddress) -> EmailId {
        let code = VerificationCode::parse("111111").expect("a code");
        let id = self
            .store
            .add_email(user, address, &code, Timestamp::now())
            .await
            .unwrap_or_else(|e| panic!("an address: {e}"))
            .email_id;
        self.store
            .verify_email(user, id, &code, Timestamp::now())
            .await
            .unwrap_or_else(|e| panic!("a verified address: {e}"));
        id
    }

    /// `owner` invites `to` to `org`, as a member.
    async fn invite(&self, owner: &Account, org: OrgId, to: &EmailAddress) -> user_service::store::Invited {
        self.store
            .invite(
                &user_service::domain::Actor::Member(owner.user.clone()),
                org,
                to,
                Role::Member,
                Timestamp::now(),
            )
            .await
            .unwrap_or_else(|e| panic!("an invitation: {e}"))
    }

    /// A fresh user's own organization.
    pub(super) async fn organization(&self) -> (Account, OrgId) {
        let owner = self.account(false).await;
        let new = NewOrganization {
            name: OrgName::parse("Acme").expect("a name"),
            slug: Slug::parse(&self.names.slug()).expect("a slug"),
        };
        let org = self
            .store
            .create_organization(&owner.user, &new, Timestamp::now())
            .await
            .unwrap_or_else(|e| panic!("an organization: {e}"))
            .org_id;
        (owner, org)
    }

    /// The sample of a route, from `caller`.
    fn http(&self, f: &Function, caller: &UserId) -> Value {
        with_sub(self.sample(f.name), caller.as_str())
    }

    /// A fresh user with an unverified address added at `at`, and the code it was sent.
    async fn added(&self, at: Timestamp) -> (Account, VerificationCode, EmailId) {
        let fresh = self.account(false).await;
        let address = EmailAddress::parse(&self.names.address("added")).expect("an address");
        let code = VerificationCode::generate().expect("a code");
        let added = self
            .store
            .add_email(&fresh.user, &address, &code, at)
            .await
            .unwrap_or_else(|e| panic!("an added address: {e}"));
        (fresh, code, added.email_id)
    }
}

/// The sample's address record, in the path, replaced by `id`.
fn set_email_id(event: &mut Value, id: EmailId) {
    let id = id.to_string();
    event["pathParameters"]["emailId"] = json!(id);
    for pointer in ["/rawPath", "/requestContext/http/path"] {
        replace_in(event, pointer, SAMPLE_EMAIL_ID, &id);
    }
}

/// A path parameter the sample names `from`, and its paths, made `to`.
pub(super) fn set_path(event: &mut Value, from: &str, to: &str) {
    if let Some(params) = event["pathParameters"].as_object_mut() {
        for value in params.values_mut() {
            if value == from {
                *value = json!(to);
            }
        }
    }
    for pointer in ["/rawPath", "/requestContext/http/path"] {
        replace_in(event, pointer, from, to);
    }
}

fn replace_in(event: &mut Value, pointer: &str, from: &str, to: &str) {
    if let Some(Value::String(text)) = event.pointer_mut(pointer) {
        *text = text.replace(from, to);
    }
}

pub(super) fn set_body(event: &mut Value, body: &Value) {
    let text = body.to_string();
    event["headers"]["content-length"] = json!(text.len().to_string());
    event["body"] = json!(text);
}

/// The one query parameter; of an address, only the `@` needs escaping.
fn set_query(event: &mut Value, name: &str, value: &str) {
    event["rawQueryString"] = json!(format!("{name}={}", value.replace('@', "%40")));
    event["queryStringParameters"] = json!({ name: value });
}
