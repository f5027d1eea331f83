//! The service as the tests drive it: an [`App`] on a fresh table with a manual
//! clock, one method per HTTP route, and the Cognito triggers and scheduled or
//! stream functions, all dispatched by catalog entry.
//!
//! ```ignore
//! let app = TestApp::spawn().await;
//! app.sign_up(ADA, "ada@example.com").await;
//! let reply = app.add_email(ADA, "ada.work@example.com").await;
//! reply.assert_status(201);
//! ```
//!
//! The per-route methods load the route's event from `events/` and set what the
//! route takes; [`TestApp::send`] takes a hand-shaped [`Event`] (bad bodies,
//! missing headers, odd content types, other claims).

use std::ops::{Deref, DerefMut};

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use aws_lambda_events::event::streams::DynamoDbEventResponse;
use lambda_http::{Body, Request, Response};
use lambda_runtime::{Context, Diagnostic, LambdaEvent};
use serde_json::{Value, json};
use user_service::catalog::{self, Function};
use user_service::clock::Clock;
use user_service::config::StoreConfig;
use user_service::{App, Store, api};

use crate::http::{Event, Reply};
use crate::{ddb, events, invariants};

/// How long the tests' triggers may take: their work is not timed, and a
/// DynamoDB Local slowed by a loaded machine must not fail it.
pub const TRIGGER_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// An [`App`] with a method per route. Derefs to the `App`, so tests keep
/// `app.store`, `app.clock.advance(..)`, and may set `app.users` or `app.sender`.
#[derive(Debug, Clone)]
pub struct TestApp {
    app: App,
}

impl Deref for TestApp {
    type Target = App;
    fn deref(&self) -> &App {
        &self.app
    }
}

impl DerefMut for TestApp {
    fn deref_mut(&mut self) -> &mut App {
        &mut self.app
    }
}

/// An `App` as it is, clock included (e.g. one whose client records its calls).
impl From<App> for TestApp {
    fn from(app: App) -> Self {
        crate::logs::capture();
        Self { app }
    }
}

impl TestApp {
    /// A fresh table with the default configuration, and a manual clock.
    pub async fn spawn() -> Self {
        Self::on(ddb::store().await)
    }

    /// A fresh table with the configuration adjusted by `adjust`, and a manual clock.
    pub async fn spawn_with(adjust: impl FnOnce(&mut StoreConfig)) -> Self {
        Self::on(ddb::store_with(adjust).await)
    }

    /// A fresh table under the deployment's address `policy`, and a manual clock.
    pub async fn spawn_with_policy(policy: user_service::address_policy::AddressPolicy) -> Self {
        Self::on(ddb::store().await.with_policy(policy))
    }

    /// Handlers read the time from the App: a manual clock makes it move only
    /// when a test says so (`app.clock.advance(seconds)`). Triggers get
    /// [`TRIGGER_WAIT`] rather than Cognito's 5 s: a test whose subject is that
    /// wait sets `app.trigger_wait` back to `COGNITO_WAITS`.
    pub fn on(store: Store) -> Self {
        Self::from(App {
            clock: Clock::manual(crate::start_time()),
            trigger_wait: TRIGGER_WAIT,
            ..App::new(store)
        })
    }

    // ---- SCIM ----

    /// A SCIM request under `/scim/v2/` (`path` after it), with `token` as
    /// its bearer (`None`: no `Authorization`), from `source_ip`, with
    /// `headers` beside; dispatched as `make dev`'s API does.
    pub async fn scim(&self, request: ScimRequest<'_>) -> Reply {
        use lambda_http::RequestExt;
        use lambda_http::aws_lambda_events::apigw::{
            ApiGatewayV2httpRequestContext, ApiGatewayV2httpRequestContextHttpDescription,
        };
        use lambda_http::request::RequestContext;
        let (path, query) = request.path.split_once('?').unwrap_or((request.path, ""));
        let mut builder = lambda_http::http::Request::builder()
            .method(request.method)
            .uri(format!("https://api.example/scim/v2/{}", request.path))
            .header("host", "api.example");
        if let Some(token) = request.token {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        if request.body.is_some() {
            builder = builder.header("content-type", "application/scim+json");
        }
        for (name, value) in request.headers {
            builder = builder.header(*name, *value);
        }
        let body = request.body.map_or(Body::Empty, |b| Body::Text(b.to_string()));
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(&s.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        };
        let mut params: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            params.entry(decode(k)).or_default().push(decode(v));
        }
        let query = params;
        let mut http = ApiGatewayV2httpRequestContextHttpDescription::default();
        http.source_ip = Some(request.source_ip.to_owned());
        let mut context = ApiGatewayV2httpRequestContext::default();
        context.http = http;
        let req: Request = builder
            .body(body)
            .expect("a request")
            .with_query_string_parameters(query)
            .with_request_context(RequestContext::ApiGatewayV2(context));
        let response = api::scim::dispatch(&self.app, req, path)
            .await
            .unwrap_or_else(|never| match never {});
        Reply::from(response)
    }

    // ---- HTTP ----

    /// `event` delivered to `function`'s handler, as API Gateway would.
    /// Panics for a function that is not an HTTP route.
    pub async fn send(&self, function: &Function, event: Event) -> Reply {
        let response = dispatch(&self.app, function, event.request())
            .await
            .unwrap_or_else(|| panic!("{} is not an HTTP route", function.name));
        Reply::from(response)
    }

    /// The route's event from `events/`, as `sub`, signed in at the app's
    /// clock: a test that moves its clock keeps a recent sign-in.
    fn event(&self, function: &Function, sub: &str) -> Event {
        Event::of(function)
            .caller(sub)
            .signed_in_at(self.clock.now().unix_seconds())
    }

    /// GET /me
    pub async fn get_profile(&self, sub: &str) -> Reply {
        let f = &catalog::GET_PROFILE;
        self.send(f, self.event(f, sub)).await
    }

    /// GET /me/account
    pub async fn get_account(&self, sub: &str) -> Reply {
        let f = &catalog::GET_ACCOUNT;
        self.send(f, self.event(f, sub)).await
    }

    /// PATCH /me with `If-Match: <if_match>` (the header as sent, e.g. `"\"1\""`).
    pub async fn update_profile(&self, sub: &str, if_match: &str, body: Value) -> Reply {
        let f = &catalog::UPDATE_PROFILE;
        let event = self.event(f, sub).header("if-match", if_match).body(body);
        self.send(f, event).await
    }

    /// GET /me/emails
    pub async fn list_emails(&self, sub: &str) -> Reply {
        let f = &catalog::LIST_EMAILS;
        self.send(f, self.event(f, sub)).await
    }

    /// POST /me/emails
    pub async fn add_email(&self, sub: &str, email: &str) -> Reply {
        let f = &catalog::ADD_EMAIL;
        let event = self.event(f, sub).body(json!({ "email": email }));
        self.send(f, event).await
    }

    /// POST /me/emails, which must answer 201: the new address's emailId.
    pub async fn add_address(&self, sub: &str, email: &str) -> String {
        let reply = self.add_email(sub, email).await;
        reply.assert_status(201);
        reply.body["emailId"].as_str().unwrap().to_owned()
    }

    /// POST /me/emails/{emailId}/verification
    pub async fn send_verification(&self, sub: &str, email_id: &str) -> Reply {
        let f = &catalog::SEND_VERIFICATION;
        let event = self.event(f, sub).path_param("emailId", email_id);
        self.send(f, event).await
    }

    /// POST /me/emails/{emailId}/verify
    pub async fn verify_email(&self, sub: &str, email_id: &str, code: &str) -> Reply {
        let f = &catalog::VERIFY_EMAIL;
        let event = self
            .event(f, sub)
            .path_param("emailId", email_id)
            .body(json!({ "code": code }));
        self.send(f, event).await
    }

    /// PUT /me/primary-email
    pub async fn set_primary_email(&self, sub: &str, email_id: &str) -> Reply {
        let f = &catalog::SET_PRIMARY_EMAIL;
        let event = self.event(f, sub).body(json!({ "emailId": email_id }));
        self.send(f, event).await
    }

    /// DELETE /me/emails/{emailId}
    pub async fn remove_email(&self, sub: &str, email_id: &str) -> Reply {
        let f = &catalog::REMOVE_EMAIL;
        let event = self.event(f, sub).path_param("emailId", email_id);
        self.send(f, event).await
    }

    /// GET /me/emails/{emailId}
    pub async fn get_email(&self, sub: &str, email_id: &str) -> Reply {
        let f = &catalog::GET_EMAIL;
        let event = self.event(f, sub).path_param("emailId", email_id);
        self.send(f, event).await
    }

    /// DELETE /me with `If-Match: <if_match>` (the header as sent).
    pub async fn delete_account(&self, sub: &str, if_match: &str) -> Reply {
        let f = &catalog::DELETE_ACCOUNT;
        let event = self.event(f, sub).header("if-match", if_match);
        self.send(f, event).await
    }

    /// POST /recovery with `token`, from `source_ip`: no caller, the link is the proof.
    pub async fn recover_account_from(&self, token: &str, source_ip: &str) -> Reply {
        let f = &catalog::RECOVER_ACCOUNT;
        let mut event = Event::of(f).anonymous().body(json!({ "token": token }));
        event.0["requestContext"]["http"]["sourceIp"] = json!(source_ip);
        self.send(f, event).await
    }

    /// POST /recovery with `token`, from the event file's address.
    pub async fn recover_account(&self, token: &str) -> Reply {
        self.recover_account_from(token, "203.0.113.24").await
    }

    /// GET /recovery: the page a recovery link opens.
    pub async fn recovery_page(&self) -> Reply {
        let f = &catalog::RECOVERY_PAGE;
        self.send(f, Event::of(f).anonymous()).await
    }

    /// GET /emails/availability?email=…
    pub async fn check_email(&self, sub: &str, email: &str) -> Reply {
        let f = &catalog::CHECK_EMAIL;
        let event = self.event(f, sub).query("email", email);
        self.send(f, event).await
    }

    /// GET /me/export
    pub async fn export_account(&self, sub: &str) -> Reply {
        let f = &catalog::EXPORT_ACCOUNT;
        self.send(f, self.event(f, sub)).await
    }

    /// GET /admin/users?email=…, as `admin_sub` in the event's groups (`[admin]`).
    pub async fn find_user_by_email(&self, admin_sub: &str, email: &str) -> Reply {
        let f = &catalog::FIND_USER_BY_EMAIL;
        let event = self.event(f, admin_sub).query("email", email);
        self.send(f, event).await
    }

    /// GET /admin/user-list with exactly `params` as its query (the event's own
    /// are dropped), as `admin_sub` in the event's groups (`[admin]`).
    pub async fn list_users(&self, admin_sub: &str, params: &[(&str, &str)]) -> Reply {
        let f = &catalog::LIST_USERS;
        let event = self.event(f, admin_sub).queries(params);
        self.send(f, event).await
    }

    /// PUT /admin/users/{userId}/status, as `admin_sub` in the event's groups (`[admin]`).
    pub async fn set_user_status(&self, admin_sub: &str, user: &str, status: &str) -> Reply {
        let f = &catalog::SET_USER_STATUS;
        let event = self
            .event(f, admin_sub)
            .path_param("userId", user)
            .body(json!({ "status": status }));
        self.send(f, event).await
    }

    /// POST /organizations
    pub async fn create_organization(&self, sub: &str, name: &str, slug: &str) -> Reply {
        let f = &catalog::CREATE_ORGANIZATION;
        let event = self.event(f, sub).body(json!({ "name": name, "slug": slug }));
        self.send(f, event).await
    }

    /// GET /me/organizations
    pub async fn list_my_organizations(&self, sub: &str) -> Reply {
        let f = &catalog::LIST_MY_ORGANIZATIONS;
        self.send(f, self.event(f, sub)).await
    }

    /// GET /organizations/{orgId}
    pub async fn get_organization(&self, sub: &str, org: &str) -> Reply {
        let f = &catalog::GET_ORGANIZATION;
        self.send(f, self.event(f, sub).path_param("orgId", org)).await
    }

    /// PATCH /organizations/{orgId} with `If-Match: <if_match>` (the header as sent).
    pub async fn update_organization(&self, sub: &str, org: &str, if_match: &str, body: Value) -> Reply {
        let f = &catalog::UPDATE_ORGANIZATION;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .header("if-match", if_match)
            .body(body);
        self.send(f, event).await
    }

    /// DELETE /organizations/{orgId} with `If-Match: <if_match>` (the header as sent).
    pub async fn delete_organization(&self, sub: &str, org: &str, if_match: &str) -> Reply {
        let f = &catalog::DELETE_ORGANIZATION;
        let event = self.event(f, sub).path_param("orgId", org).header("if-match", if_match);
        self.send(f, event).await
    }

    /// GET /organizations/{orgId}/members with exactly `params` as its query.
    pub async fn list_members(&self, sub: &str, org: &str, params: &[(&str, &str)]) -> Reply {
        let f = &catalog::LIST_MEMBERS;
        let event = self.event(f, sub).path_param("orgId", org).queries(params);
        self.send(f, event).await
    }

    /// PUT /organizations/{orgId}/members/{userId}/role
    pub async fn set_member_role(&self, sub: &str, org: &str, member: &str, role: &str) -> Reply {
        let f = &catalog::SET_MEMBER_ROLE;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .path_param("userId", member)
            .body(json!({ "role": role }));
        self.send(f, event).await
    }

    /// DELETE /organizations/{orgId}/members/{userId}
    pub async fn remove_member(&self, sub: &str, org: &str, member: &str) -> Reply {
        let f = &catalog::REMOVE_MEMBER;
        let event = self.event(f, sub).path_param("orgId", org).path_param("userId", member);
        self.send(f, event).await
    }

    /// POST /organizations/{orgId}/invitations
    pub async fn create_invitation(&self, sub: &str, org: &str, email: &str, role: &str) -> Reply {
        let f = &catalog::CREATE_INVITATION;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .body(json!({ "email": email, "role": role }));
        self.send(f, event).await
    }

    /// GET /organizations/{orgId}/invitations with exactly `params` as its query.
    pub async fn list_invitations(&self, sub: &str, org: &str, params: &[(&str, &str)]) -> Reply {
        let f = &catalog::LIST_INVITATIONS;
        let event = self.event(f, sub).path_param("orgId", org).queries(params);
        self.send(f, event).await
    }

    /// POST /organizations/{orgId}/invitations/{invitationId}/resend
    pub async fn resend_invitation(&self, sub: &str, org: &str, invitation: &str) -> Reply {
        let f = &catalog::RESEND_INVITATION;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .path_param("invitationId", invitation);
        self.send(f, event).await
    }

    /// DELETE /organizations/{orgId}/invitations/{invitationId}
    pub async fn revoke_invitation(&self, sub: &str, org: &str, invitation: &str) -> Reply {
        let f = &catalog::REVOKE_INVITATION;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .path_param("invitationId", invitation);
        self.send(f, event).await
    }

    /// POST /invitations/accept
    pub async fn accept_invitation(&self, sub: &str, token: &str) -> Reply {
        let f = &catalog::ACCEPT_INVITATION;
        self.send(f, self.event(f, sub).body(json!({ "token": token }))).await
    }

    /// POST /organizations/{orgId}/domains
    pub async fn claim_domain(&self, sub: &str, org: &str, domain: &str) -> Reply {
        let f = &catalog::CLAIM_DOMAIN;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .body(json!({ "domain": domain }));
        self.send(f, event).await
    }

    /// GET /organizations/{orgId}/domains
    pub async fn list_domains(&self, sub: &str, org: &str) -> Reply {
        let f = &catalog::LIST_DOMAINS;
        self.send(f, self.event(f, sub).path_param("orgId", org)).await
    }

    /// POST /organizations/{orgId}/domains/{domain}/verification
    pub async fn verify_domain(&self, sub: &str, org: &str, domain: &str, email_id: &str) -> Reply {
        let f = &catalog::VERIFY_DOMAIN;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .path_param("domain", domain)
            .body(json!({ "emailId": email_id }));
        self.send(f, event).await
    }

    /// PATCH /organizations/{orgId}/domains/{domain}
    pub async fn update_domain(&self, sub: &str, org: &str, domain: &str, enrollment: &str) -> Reply {
        let f = &catalog::UPDATE_DOMAIN;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .path_param("domain", domain)
            .body(json!({ "enrollment": enrollment }));
        self.send(f, event).await
    }

    /// DELETE /organizations/{orgId}/domains/{domain}
    pub async fn remove_domain(&self, sub: &str, org: &str, domain: &str) -> Reply {
        let f = &catalog::REMOVE_DOMAIN;
        let event = self.event(f, sub).path_param("orgId", org).path_param("domain", domain);
        self.send(f, event).await
    }

    /// POST /organizations/{orgId}/scim-tokens
    pub async fn create_scim_token(&self, sub: &str, org: &str, name: &str) -> Reply {
        let f = &catalog::CREATE_SCIM_TOKEN;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .body(json!({ "name": name }));
        self.send(f, event).await
    }

    /// GET /organizations/{orgId}/scim-tokens
    pub async fn list_scim_tokens(&self, sub: &str, org: &str) -> Reply {
        let f = &catalog::LIST_SCIM_TOKENS;
        self.send(f, self.event(f, sub).path_param("orgId", org)).await
    }

    /// DELETE /organizations/{orgId}/scim-tokens/{tokenId}
    pub async fn revoke_scim_token(&self, sub: &str, org: &str, token_id: &str) -> Reply {
        let f = &catalog::REVOKE_SCIM_TOKEN;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .path_param("tokenId", token_id);
        self.send(f, event).await
    }

    /// GET /me/organization-suggestions
    pub async fn suggest_organizations(&self, sub: &str) -> Reply {
        let f = &catalog::SUGGEST_ORGANIZATIONS;
        self.send(f, self.event(f, sub)).await
    }

    /// POST /organizations/{orgId}/enrollment
    pub async fn join_by_domain(&self, sub: &str, org: &str, email_id: &str) -> Reply {
        let f = &catalog::JOIN_BY_DOMAIN;
        let event = self
            .event(f, sub)
            .path_param("orgId", org)
            .body(json!({ "emailId": email_id }));
        self.send(f, event).await
    }

    /// The route's event as `sub` in the deployment's admin group, for a
    /// deployment admin acting on an organization.
    pub fn as_deployment_admin(&self, function: &Function, sub: &str) -> Event {
        self.event(function, sub).groups("[admin]")
    }

    // ---- Cognito triggers, the sweep and the stream ----

    /// `event` delivered to `function`, a Cognito trigger or the scheduled sweep,
    /// with a default Lambda context. Panics for any other function.
    pub async fn invoke(&self, function: &Function, event: Value) -> Result<Value, Diagnostic> {
        let app = &self.app;
        let event = LambdaEvent::new(event, Context::default());
        match function.trigger {
            catalog::Trigger::CognitoPreSignUp => api::events::pre_sign_up::handle(app, event).await,
            catalog::Trigger::CognitoPostConfirmation => api::events::post_confirmation::handle(app, event).await,
            catalog::Trigger::CognitoPostAuthentication => api::events::post_authentication::handle(app, event).await,
            catalog::Trigger::CognitoUserMigration => api::events::migrate_user::handle(app, event).await,
            catalog::Trigger::Schedule { .. } if *function == catalog::RECONCILE_USERS => {
                Box::pin(api::events::reconcile_users::handle(app, event)).await
            }
            catalog::Trigger::Schedule { .. } if *function == catalog::PURGE_ORGANIZATIONS => {
                Box::pin(api::events::purge_organizations::handle(app, event)).await
            }
            _ => panic!("{} takes no JSON event", function.name),
        }
    }

    /// PreSignUp for `sub` with `email`.
    pub async fn pre_sign_up(&self, sub: &str, email: &str) -> Result<Value, Diagnostic> {
        let f = &catalog::PRE_SIGN_UP;
        self.invoke(f, cognito_event(f, sub, email)).await
    }

    /// PostConfirmation (ConfirmSignUp) for `sub` with a verified `email`.
    pub async fn post_confirmation(&self, sub: &str, email: &str) -> Result<Value, Diagnostic> {
        let f = &catalog::POST_CONFIRMATION;
        self.invoke(f, cognito_event(f, sub, email)).await
    }

    /// Signs a user up the way Cognito would: a PostConfirmation delivery, which
    /// must succeed. It runs under the app's `trigger_wait` ([`TRIGGER_WAIT`]
    /// in tests), not Cognito's 5 s: set-up is not a test of the machine's speed.
    /// A `SERVICE_UNAVAILABLE` (the store's retries ran out while a loaded
    /// machine paused DynamoDB Local) is delivered again, as Cognito retries a
    /// trigger; the trigger's work is idempotent.
    pub async fn sign_up(&self, sub: &str, email: &str) {
        const DELIVERIES: u32 = 5;
        for delivery in 1..=DELIVERIES {
            match self.post_confirmation(sub, email).await {
                Ok(_) => return,
                Err(err) if err.error_type == "SERVICE_UNAVAILABLE" && delivery < DELIVERIES => {}
                Err(err) => panic!("sign-up succeeds: {err:?}"),
            }
        }
    }

    /// An organization for a directory: `owner` signs up as `owner@{domain}`,
    /// makes it (named and slugged after `slug`), proves `domain` with that
    /// address and makes a SCIM token. Its client, and the token as a
    /// directory sends it.
    pub async fn directory_organization(
        &self,
        owner: &str,
        domain: &str,
        slug: &str,
    ) -> (user_service::store::ScimClient, String) {
        use user_service::domain::{Actor, OrgDomain, OrgId, ScimTokenName, UserId};
        self.sign_up(owner, &format!("owner@{domain}")).await;
        let reply = self.create_organization(owner, slug, slug).await;
        reply.assert_status(201);
        let org = OrgId::parse(reply.body["orgId"].as_str().unwrap()).unwrap();
        let owner = UserId::parse_sub(owner).unwrap();
        let actor = Actor::Member(owner.clone());
        let domain = OrgDomain::parse(domain).unwrap();
        let now = self.clock.now();
        self.store.claim_domain(&actor, org, &domain, now).await.unwrap();
        let proof = self.store.list_emails(&owner).await.unwrap()[0].email_id;
        self.store
            .verify_domain(&actor, org, &domain, proof, now)
            .await
            .unwrap();
        let name = ScimTokenName::parse("Okta").unwrap();
        let made = self.store.create_scim_token(&actor, org, &name, now).await.unwrap();
        let client = user_service::store::ScimClient {
            org,
            token: made.info.token_id,
        };
        (client, made.token.encode())
    }

    /// The emailId of the user's record of `address`, from GET /me/emails.
    pub async fn email_id_of(&self, sub: &str, address: &str) -> String {
        let reply = self.list_emails(sub).await;
        let emails = reply.body["emails"].as_array().cloned().unwrap_or_default();
        let record = emails
            .iter()
            .find(|e| e["email"] == address)
            .unwrap_or_else(|| panic!("{sub} has no record of {address}: {reply:?}"));
        record["emailId"].as_str().unwrap().to_owned()
    }

    /// What the stream consumer records once Cognito holds the user's primary:
    /// after it, the former primary may be removed.
    pub async fn cognito_holds_primary(&self, sub: &str) {
        let user = user_service::domain::UserId::parse(sub).unwrap();
        let profile = self.store.get_profile(&user).await.unwrap();
        let primary = profile.email.expect("an active user has a primary");
        self.store.confirm_cognito_email(&user, &primary).await.unwrap();
    }

    /// A sign-in as Cognito reports it: PostAuthentication with the user's
    /// attributes as Cognito holds them.
    pub async fn post_authentication(&self, sub: &str, email: &str, verified: bool) -> Result<Value, Diagnostic> {
        let f = &catalog::POST_AUTHENTICATION;
        let mut event = cognito_event(f, sub, email);
        event["request"]["userAttributes"]["email_verified"] = json!(verified.to_string());
        self.invoke(f, event).await
    }

    /// reconcile-users on the schedule's event from `events/`, with no
    /// deadline: the run goes on until the pass is complete.
    pub async fn reconcile_users(&self) -> Result<Value, Diagnostic> {
        let f = &catalog::RECONCILE_USERS;
        self.invoke(f, events::load(f.name)).await
    }

    /// One run of reconcile-users on the schedule's event, as Lambda invokes
    /// it with `limit` to its deadline and a request id of its own.
    pub async fn reconcile_run(&self, limit: std::time::Duration) -> Result<Value, Diagnostic> {
        let f = &catalog::RECONCILE_USERS;
        self.reconcile_event(events::load(f.name), Some(limit)).await
    }

    /// reconcile-users on CloudTrail's record of `sub`'s DeleteUser call
    /// (`events/reconcile-users-delete-user.json`); `None` leaves the record
    /// without a sub.
    pub async fn cognito_delete_user_record(&self, sub: Option<&str>) -> Result<Value, Diagnostic> {
        let mut event = events::load("reconcile-users-delete-user");
        match sub {
            Some(sub) => event["detail"]["additionalEventData"]["sub"] = json!(sub),
            None => event["detail"]["additionalEventData"] = json!({}),
        }
        self.reconcile_event(event, None).await
    }

    /// `event` delivered to reconcile-users with a fresh request id and, with
    /// `limit`, a deadline that far away.
    pub async fn reconcile_event(&self, event: Value, limit: Option<std::time::Duration>) -> Result<Value, Diagnostic> {
        let mut context = Context::default();
        context.request_id = uuid::Uuid::new_v4().to_string();
        if let Some(limit) = limit {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            context.deadline = u64::try_from((now + limit).as_millis()).unwrap_or(u64::MAX);
        }
        Box::pin(api::events::reconcile_users::handle(
            &self.app,
            LambdaEvent::new(event, context),
        ))
        .await
    }

    /// A batch of the table's stream, delivered to the consumer.
    pub async fn sync_cognito_email(
        &self,
        event: LambdaEvent<StreamEvent>,
    ) -> Result<DynamoDbEventResponse, Diagnostic> {
        Box::pin(api::events::sync_cognito_email::handle(&self.app, event)).await
    }

    /// A scheduled run of the deleted organizations' purge.
    /// Its handler directly, not through [`TestApp::invoke`]: a workload's
    /// spawned tasks run it, and `invoke`'s future is not `Send` for them.
    pub async fn purge_organizations(&self) -> Result<Value, Diagnostic> {
        let f = &catalog::PURGE_ORGANIZATIONS;
        let event = LambdaEvent::new(events::load(f.name), Context::default());
        Box::pin(api::events::purge_organizations::handle(&self.app, event)).await
    }

    /// The table stream's domain events: the app needs its bus (`with_bus`).
    pub async fn publish_events(&self, event: LambdaEvent<StreamEvent>) -> Result<DynamoDbEventResponse, Diagnostic> {
        Box::pin(api::events::publish_events::handle(&self.app, event)).await
    }

    // ---- The table ----

    /// How many items the table holds.
    pub async fn item_count(&self) -> usize {
        invariants::item_count(&self.store).await
    }

    /// Fails the test if the table breaks an invariant.
    pub async fn assert_invariants(&self) {
        invariants::assert_store_holds(&self.store).await;
    }
}

/// `function`'s Cognito event from `events/` (`events/<name>.json`), for `sub`
/// with `email`.
pub fn cognito_event(function: &Function, sub: &str, email: &str) -> Value {
    let mut event = events::load(function.name);
    event["userName"] = json!(sub);
    if event["request"]["userAttributes"].get("sub").is_some() {
        event["request"]["userAttributes"]["sub"] = json!(sub);
    }
    event["request"]["userAttributes"]["email"] = json!(email);
    event
}

/// The handler of an HTTP route, through the routes' list; `None` for any other function.
async fn dispatch(app: &App, function: &Function, req: Request) -> Option<Response<Body>> {
    let response = match api::scim::ScimRoute::of(function) {
        Some(scim) => scim.handle(app, req).await,
        None => api::routes::route_of(function)?.handle(app, req).await,
    };
    Some(response.unwrap_or_else(|never| match never {}))
}

/// A SCIM request, for [`TestApp::scim`].
#[derive(Debug, Clone, Copy)]
pub struct ScimRequest<'a> {
    /// `GET`, `POST`, ...
    pub method: &'a str,
    /// After `/scim/v2/`, with its query (`Users?filter=...`).
    pub path: &'a str,
    /// The bearer token, if any.
    pub token: Option<&'a str>,
    /// The JSON body, if any.
    pub body: Option<&'a Value>,
    /// Headers beside (`If-Match`).
    pub headers: &'a [(&'a str, &'a str)],
    /// The caller's address, as API Gateway sees it.
    pub source_ip: &'a str,
}

impl<'a> ScimRequest<'a> {
    /// `method` on `path` with `token`, from 192.0.2.1, nothing beside.
    pub fn new(method: &'a str, path: &'a str, token: Option<&'a str>) -> Self {
        Self {
            method,
            path,
            token,
            body: None,
            headers: &[],
            source_ip: "192.0.2.1",
        }
    }

    /// With `body`.
    pub fn body(self, body: &'a Value) -> Self {
        Self {
            body: Some(body),
            ..self
        }
    }

    /// With `headers` beside.
    pub fn headers(self, headers: &'a [(&'a str, &'a str)]) -> Self {
        Self { headers, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An App whose store is never reached: every request below is refused
    /// before the handler reads anything.
    fn unreachable_app() -> TestApp {
        TestApp::from(App::new(Store::new(ddb::client(), StoreConfig::new("never-read"))))
    }

    #[tokio::test]
    async fn every_http_route_is_dispatched_and_nothing_else() {
        let app = unreachable_app();
        let mut routes = 0;
        for function in catalog::FUNCTIONS {
            let catalog::Trigger::Http { method, path, access } = function.trigger else {
                assert!(
                    dispatch(&app, function, Event::load("get-profile").request())
                        .await
                        .is_none(),
                    "{} is not an HTTP route",
                    function.name
                );
                continue;
            };
            if function.is_scim() {
                // A directory's route: its handler in api::scim, not the routes' list.
                assert!(api::scim::ScimRoute::of(function).is_some(), "{}", function.name);
                assert!(api::routes::route_of(function).is_none(), "{}", function.name);
                continue;
            }
            routes += 1;
            assert!(api::routes::route_of(function).is_some(), "{} is listed", function.name);
            // The route's event is the route's: the per-route methods send it.
            let event = Event::of(function);
            assert_eq!(event.0["routeKey"], format!("{method} {path}"), "{}", function.name);
            // Without a caller every route answers 401, from the handler's own
            // `serve`: it was dispatched to a handler, not refused here. A
            // route anyone may call reads no caller (its module says what it answers).
            if access != catalog::Access::Anyone {
                let reply = app.send(function, event.anonymous()).await;
                reply.assert_problem(401, "UNAUTHENTICATED");
            }
        }
        assert_eq!(routes, api::routes::ROUTES.len());
    }

    #[tokio::test]
    async fn admin_routes_refuse_a_caller_outside_the_group() {
        // A caller without groups: the admin routes refuse before any read.
        let app = unreachable_app();
        for function in catalog::FUNCTIONS {
            let catalog::Trigger::Http { access, .. } = function.trigger else {
                continue;
            };
            if access == catalog::Access::Admin {
                let reply = app.send(function, Event::of(function).no_groups()).await;
                reply.assert_problem(403, "FORBIDDEN");
            }
        }
    }
}
