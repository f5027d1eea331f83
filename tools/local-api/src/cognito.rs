//! Local stand-ins for Cognito sign-up and sign-in. Sign-up runs the real
//! pre-sign-up and post-confirmation functions with events shaped as Cognito
//! sends them, then issues a token; /local/token issues one for an existing user.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Response, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use user_service::domain::EmailAddress;

use crate::event::json_response;
use crate::invoke::InvokeError;
use crate::server::Shared;

const USER_POOL_ID: &str = "local_UserPool";
const CLIENT_ID: &str = "local-client";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignUp {
    email: String,
    given_name: Option<String>,
    family_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    email: String,
    #[serde(default)]
    groups: Vec<String>,
}

fn header(trigger: &str, sub: &str) -> Value {
    json!({
        "version": "1",
        "region": "us-east-1",
        "userPoolId": USER_POOL_ID,
        "userName": sub,
        "callerContext": { "awsSdkVersion": "aws-sdk-unknown-unknown", "clientId": CLIENT_ID },
        "triggerSource": trigger,
    })
}

fn pre_sign_up_event(sub: &str, attributes: &Value) -> Value {
    let mut event = header("PreSignUp_SignUp", sub);
    event["request"] = json!({ "userAttributes": attributes, "validationData": null });
    event["response"] = json!({ "autoConfirmUser": false, "autoVerifyEmail": false, "autoVerifyPhone": false });
    event
}

fn post_confirmation_event(sub: &str, attributes: &Value) -> Value {
    let mut confirmed = attributes.clone();
    confirmed["sub"] = json!(sub);
    confirmed["email_verified"] = json!("true");
    confirmed["cognito:user_status"] = json!("CONFIRMED");
    let mut event = header("PostConfirmation_ConfirmSignUp", sub);
    event["request"] = json!({ "userAttributes": confirmed, "clientMetadata": {} });
    event["response"] = json!({});
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
            let status = if code == "EMAIL_TAKEN" {
                StatusCode::CONFLICT
            } else {
                StatusCode::BAD_REQUEST
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

pub async fn sign_up(State(shared): State<Shared>, Json(body): Json<SignUp>) -> Response<Body> {
    if EmailAddress::parse(&body.email).is_err() {
        return problem(
            StatusCode::BAD_REQUEST,
            "VALIDATION_FAILED",
            "email: not a valid address",
        );
    }
    let sub = uuid::Uuid::new_v4().to_string();
    let mut attributes = json!({ "email": body.email });
    if let Some(given) = &body.given_name {
        attributes["given_name"] = json!(given);
    }
    if let Some(family) = &body.family_name {
        attributes["family_name"] = json!(family);
    }
    if let Err(err) = shared
        .lambda
        .invoke("pre-sign-up", &pre_sign_up_event(&sub, &attributes))
        .await
    {
        return refused(err);
    }
    if let Err(err) = shared
        .lambda
        .invoke("post-confirmation", &post_confirmation_event(&sub, &attributes))
        .await
    {
        return refused(err);
    }
    issue(&shared, &sub, &[], StatusCode::CREATED)
}

pub async fn token(State(shared): State<Shared>, Json(body): Json<TokenRequest>) -> Response<Body> {
    let Ok(email) = EmailAddress::parse(&body.email) else {
        return problem(
            StatusCode::BAD_REQUEST,
            "VALIDATION_FAILED",
            "email: not a valid address",
        );
    };
    match shared.store.find_by_email(&email).await {
        Ok(account) => issue(&shared, account.profile.user_id.as_str(), &body.groups, StatusCode::OK),
        Err(user_service::StoreError::NotFound) => {
            problem(StatusCode::NOT_FOUND, "NOT_FOUND", "no user has this address")
        }
        Err(err) => {
            tracing::error!(cause = %user_service::error_chain(&err), "token lookup failed");
            problem(
                StatusCode::SERVICE_UNAVAILABLE,
                "SERVICE_UNAVAILABLE",
                "DynamoDB Local is not answering",
            )
        }
    }
}

fn issue(shared: &Shared, sub: &str, groups: &[String], status: StatusCode) -> Response<Body> {
    match shared.key.issue(sub, groups) {
        Ok(token) => json_response(status, &json!({ "sub": sub, "token": token, "groups": groups })),
        Err(err) => {
            tracing::error!(cause = %user_service::error_chain(&err), "token not issued");
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL",
                "the token could not be signed",
            )
        }
    }
}
