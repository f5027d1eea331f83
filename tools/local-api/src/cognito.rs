//! Local stand-ins for Cognito: sign-up, sign-in and two admin calls, running
//! the real trigger functions with events shaped as Cognito sends them. The
//! users live in the local pool; a sign-in runs post-authentication (the repair
//! path) before it issues an access token, as Cognito does.

use std::collections::HashMap;

use aws_lambda_events::cognito::{
    CognitoEventUserPoolsCallerContext, CognitoEventUserPoolsHeader, CognitoEventUserPoolsPostAuthentication,
    CognitoEventUserPoolsPostAuthenticationTriggerSource as PostAuthenticationTrigger,
    CognitoEventUserPoolsPostConfirmation,
    CognitoEventUserPoolsPostConfirmationTriggerSource as PostConfirmationTrigger, CognitoEventUserPoolsPreSignup,
    CognitoEventUserPoolsPreSignupTriggerSource as PreSignupTrigger,
};
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Response, StatusCode};
use serde::Deserialize;
use serde_json::json;
use user_service::catalog::{self, Trigger};
use user_service::domain::EmailAddress;

use crate::gateway::json_response;
use crate::invoke::InvokeError;
use crate::pool::PoolUser;
use crate::state::Shared;

const CLIENT_ID: &str = "local-client";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignUp {
    email: String,
    // No names: the app client cannot write them (template.yaml's
    // WriteAttributes); they are set with PATCH /me, as in the cloud.
    /// Stands for a post-confirmation that failed after Cognito's retries: the
    /// user is confirmed in the pool with no profile, and gets no token here.
    #[serde(default)]
    simulate_post_confirmation_failure: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdminCreateUser {
    email: String,
    email_verified: bool,
    given_name: Option<String>,
    family_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdminVerifyEmail {
    email: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenRequest {
    email: String,
    #[serde(default)]
    groups: Vec<String>,
    /// A session this old (seconds, at most a day): the token a refresh gives
    /// that long after the sign-in, whose `auth_time` a route needing a recent
    /// sign-in refuses. To try the settings page's sign-in-again path.
    #[serde(default)]
    signed_in_seconds_ago: u64,
}

/// What every trigger event starts with. The structs are the ones the trigger
/// functions parse (#[non_exhaustive]: built from Default, field by field).
fn header<T: Default>(pool_id: &str, trigger: T, sub: &str) -> CognitoEventUserPoolsHeader<T> {
    let mut caller = CognitoEventUserPoolsCallerContext::default();
    caller.awssdk_version = Some("aws-sdk-unknown-unknown".into());
    caller.client_id = Some(CLIENT_ID.into());
    let mut header = CognitoEventUserPoolsHeader::default();
    header.version = Some("1".into());
    header.trigger_source = Some(trigger);
    header.region = Some("us-east-1".into());
    header.user_pool_id = Some(pool_id.into());
    header.caller_context = caller;
    header.user_name = Some(sub.into());
    header
}

fn pre_sign_up_event(
    pool_id: &str,
    trigger: PreSignupTrigger,
    sub: &str,
    attributes: HashMap<String, String>,
) -> CognitoEventUserPoolsPreSignup {
    let mut event = CognitoEventUserPoolsPreSignup::default();
    event.cognito_event_user_pools_header = header(pool_id, trigger, sub);
    event.request.user_attributes = attributes;
    event
}

fn post_confirmation_event(pool_id: &str, user: &PoolUser) -> CognitoEventUserPoolsPostConfirmation {
    let mut event = CognitoEventUserPoolsPostConfirmation::default();
    event.cognito_event_user_pools_header = header(pool_id, PostConfirmationTrigger::ConfirmSignUp, &user.sub);
    event.request.user_attributes = user.attributes();
    event
}

fn post_authentication_event(pool_id: &str, user: &PoolUser) -> CognitoEventUserPoolsPostAuthentication {
    let mut event = CognitoEventUserPoolsPostAuthentication::default();
    event.cognito_event_user_pools_header = header(pool_id, PostAuthenticationTrigger::Authentication, &user.sub);
    event.request.user_attributes = user.attributes();
    event
}

fn problem(status: StatusCode, code: &str, detail: &str) -> Response<Body> {
    let mut response = json_response(
        status,
        &json!({ "type": "about:blank", "title": code, "status": status.as_u16(), "detail": detail, "code": code }),
    );
    response.headers_mut().insert(
        "content-type",
        axum::http::HeaderValue::from_static("application/problem+json"),
    );
    response
}

/// Cognito's answer when a trigger refuses: the code the function's message starts with.
fn refused(err: InvokeError) -> Response<Body> {
    match err {
        InvokeError::Function { message, .. } => {
            let code = message.split(':').next().unwrap_or("SIGN_UP_FAILED").trim().to_owned();
            let status = match code.as_str() {
                "EMAIL_TAKEN" => StatusCode::CONFLICT,
                "ACCOUNT_DELETED" => StatusCode::FORBIDDEN,
                "SERVICE_UNAVAILABLE" => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::BAD_REQUEST,
            };
            problem(status, &code, &message)
        }
        InvokeError::Transport(err) => {
            tracing::error!(error = %err, "cargo lambda watch is not answering");
            problem(
                StatusCode::BAD_GATEWAY,
                "LAMBDA_UNREACHABLE",
                "cargo lambda watch is not answering",
            )
        }
    }
}

fn invalid_email() -> Response<Body> {
    problem(
        StatusCode::BAD_REQUEST,
        "VALIDATION_FAILED",
        "email: not a valid address",
    )
}

fn pool_failure(err: &std::io::Error) -> Response<Body> {
    tracing::error!(error = %err, "the local user pool could not be saved");
    problem(
        StatusCode::INTERNAL_SERVER_ERROR,
        "INTERNAL",
        "the local user pool could not be saved",
    )
}

/// Sign-up, confirmation and sign-in in one call, as a newcomer would do them.
pub async fn sign_up(State(shared): State<Shared>, Json(body): Json<SignUp>) -> Response<Body> {
    let Ok(email) = EmailAddress::parse(&body.email) else {
        return invalid_email();
    };
    let user = PoolUser {
        sub: uuid::Uuid::new_v4().to_string(),
        email: email.as_str().to_owned(),
        email_verified: true,
        given_name: None,
        family_name: None,
    };
    // Cognito passes the address as typed; the pool keeps it normalized.
    let mut attributes = user.attributes();
    attributes.insert("email".into(), body.email);
    if let Err(err) = shared
        .lambda
        .invoke(
            trigger_function(Trigger::CognitoPreSignUp),
            &pre_sign_up_event(&shared.user_pool_id, PreSignupTrigger::SignUp, &user.sub, attributes),
        )
        .await
    {
        return refused(err);
    }
    if let Err(response) = save(&shared, &user).await {
        return response;
    }
    if body.simulate_post_confirmation_failure {
        return json_response(StatusCode::CREATED, &json!({ "sub": user.sub }));
    }
    if let Err(err) = shared
        .lambda
        .invoke(
            trigger_function(Trigger::CognitoPostConfirmation),
            &post_confirmation_event(&shared.user_pool_id, &user),
        )
        .await
    {
        return refused(err);
    }
    let signed = Signed {
        status: StatusCode::CREATED,
        signed_in_ago: 0,
        password_reset: false,
    };
    sign_in(&shared, &user, &[], signed).await
}

/// The function Cognito invokes for `trigger`, as the catalog says. A catalog
/// without one fails the invocation (an empty name), never the local API.
fn trigger_function(trigger: Trigger) -> &'static str {
    catalog::by_trigger(trigger).map_or("", |f| f.name)
}

/// Sign-in: post-authentication runs first (the repair path), then a token.
pub async fn token(State(shared): State<Shared>, Json(body): Json<TokenRequest>) -> Response<Body> {
    let Ok(email) = EmailAddress::parse(&body.email) else {
        return invalid_email();
    };
    // A session at most a day old: an access token lives a day at most.
    let signed_in_ago = body.signed_in_seconds_ago.min(86_400);
    let mut user = shared.pool.find(email.as_str()).await;
    let Some(mirror) = &shared.mirror else {
        return match user {
            Some(user) => {
                let signed = Signed {
                    status: StatusCode::OK,
                    signed_in_ago,
                    password_reset: false,
                };
                sign_in(&shared, &user, &body.groups, signed).await
            }
            None => no_such_user(),
        };
    };
    // Cognito's `email` follows the primary: the address it holds now signs in.
    if user.is_none() {
        user = match mirror.sub_of(email.as_str()).await {
            Ok(Some(sub)) => shared.pool.find_sub(&sub).await,
            Ok(None) => None,
            Err(err) => return mirror_failure(&err),
        };
    }
    let Some(mut user) = user else {
        return no_such_user();
    };
    match mirror.get(&user.sub).await {
        Err(err) => mirror_failure(&err),
        Ok(None) => problem(StatusCode::BAD_REQUEST, "UserNotFoundException", "User does not exist."),
        Ok(Some(held)) if !held.enabled => {
            problem(StatusCode::BAD_REQUEST, "NotAuthorizedException", "User is disabled.")
        }
        Ok(Some(held)) => {
            if let Some(now) = held.email.filter(|now| *now != user.email) {
                user.email = now;
                if let Err(err) = shared.pool.put(user.clone()).await {
                    return pool_failure(&err);
                }
            }
            // A recovered account: Cognito would refuse the sign-in
            // (PasswordResetRequiredException) until the user chose a new
            // password through the code sent to this address. Local sign-in has
            // no password: once post-authentication lets the user in, it
            // completes the reset and says so.
            if let Err(refusal) = authenticate(&shared, &user).await {
                return refusal;
            }
            if held.reset_required
                && let Err(err) = mirror.set_password(&user.sub).await
            {
                return mirror_failure(&err);
            }
            let signed = Signed {
                status: StatusCode::OK,
                signed_in_ago,
                password_reset: held.reset_required,
            };
            issue(&shared, &user, &body.groups, signed)
        }
    }
}

fn no_such_user() -> Response<Body> {
    problem(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        "no user of the local pool has this address",
    )
}

fn mirror_failure(err: &crate::mirror::MirrorError) -> Response<Body> {
    tracing::error!(error = %err, "moto's Cognito did not answer");
    problem(
        StatusCode::BAD_GATEWAY,
        "COGNITO_UNREACHABLE",
        "moto's Cognito did not answer; is make dev's moto running?",
    )
}

/// Keeps the user in the local pool and in its mirror in moto's Cognito.
async fn save(shared: &Shared, user: &PoolUser) -> Result<(), Response<Body>> {
    shared.pool.put(user.clone()).await.map_err(|err| pool_failure(&err))?;
    if let Some(mirror) = &shared.mirror {
        mirror.put(user).await.map_err(|err| mirror_failure(&err))?;
    }
    Ok(())
}

/// AdminCreateUser: pre-sign-up runs (PreSignUp_AdminCreateUser); no confirmation follows.
pub async fn admin_create_user(State(shared): State<Shared>, Json(body): Json<AdminCreateUser>) -> Response<Body> {
    let Ok(email) = EmailAddress::parse(&body.email) else {
        return invalid_email();
    };
    let user = PoolUser {
        sub: uuid::Uuid::new_v4().to_string(),
        email: email.as_str().to_owned(),
        email_verified: body.email_verified,
        given_name: body.given_name,
        family_name: body.family_name,
    };
    let event = pre_sign_up_event(
        &shared.user_pool_id,
        PreSignupTrigger::AdminCreateUser,
        &user.sub,
        user.attributes(),
    );
    if let Err(err) = shared
        .lambda
        .invoke(trigger_function(Trigger::CognitoPreSignUp), &event)
        .await
    {
        return refused(err);
    }
    if let Err(response) = save(&shared, &user).await {
        return response;
    }
    json_response(StatusCode::CREATED, &json!({ "sub": user.sub }))
}

/// Cognito marks the user's address verified (`email_verified = true`).
pub async fn admin_verify_email(State(shared): State<Shared>, Json(body): Json<AdminVerifyEmail>) -> Response<Body> {
    let Ok(email) = EmailAddress::parse(&body.email) else {
        return invalid_email();
    };
    let Some(mut user) = shared.pool.find(email.as_str()).await else {
        return problem(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "no user of the local pool has this address",
        );
    };
    user.email_verified = true;
    if let Err(err) = shared.pool.put(user.clone()).await {
        return pool_failure(&err);
    }
    if let Some(mirror) = &shared.mirror
        && let Err(err) = mirror.verify_email(&user.sub).await
    {
        return mirror_failure(&err);
    }
    json_response(StatusCode::OK, &json!({ "emailVerified": true }))
}

/// How a sign-in answers: its status, how long ago its session signed in, and
/// whether it completed a password reset (a recovered account's first sign-in).
struct Signed {
    status: StatusCode,
    signed_in_ago: u64,
    password_reset: bool,
}

async fn sign_in(shared: &Shared, user: &PoolUser, groups: &[String], signed: Signed) -> Response<Body> {
    match authenticate(shared, user).await {
        Ok(()) => issue(shared, user, groups, signed),
        Err(refusal) => refusal,
    }
}

/// Post-authentication, as Cognito runs it before it issues tokens: its
/// refusal is the sign-in's.
async fn authenticate(shared: &Shared, user: &PoolUser) -> Result<(), Response<Body>> {
    shared
        .lambda
        .invoke(
            trigger_function(Trigger::CognitoPostAuthentication),
            &post_authentication_event(&shared.user_pool_id, user),
        )
        .await
        .map(|_| ())
        .map_err(refused)
}

fn issue(shared: &Shared, user: &PoolUser, groups: &[String], signed: Signed) -> Response<Body> {
    match shared.key.issue(&user.sub, groups, signed.signed_in_ago) {
        Ok(token) => json_response(
            signed.status,
            &json!({ "sub": user.sub, "token": token, "groups": groups, "passwordReset": signed.password_reset }),
        ),
        Err(err) => {
            tracing::error!(cause = %user_service::error::chain(&err), "token not issued");
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL",
                "the token could not be signed",
            )
        }
    }
}
