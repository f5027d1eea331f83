//! The local HTTP API: routes from template.yaml, the JWT authorizer, and the
//! local Cognito routes.

use std::collections::HashMap;
use std::net::SocketAddr;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{ConnectInfo, Request};
use axum::http::{Response, StatusCode};
use axum::routing::post;

use crate::auth::claims_as_api_gateway;
use crate::event::{Incoming, api_gateway_v2, http_response};
use crate::gateway::gateway_message;
use crate::invoke::InvokeError;
use crate::routes::Route;
use crate::state::Shared;

/// API Gateway's payload limit.
const MAX_BODY: usize = 10 * 1024 * 1024;

pub fn router(shared: Shared) -> Router {
    let state = shared.clone();
    shared
        .routes
        .router(move |route, params, request| proxy(state.clone(), route, params, request))
        .route("/local/sign-up", post(crate::cognito::sign_up))
        .route("/local/token", post(crate::cognito::token))
        .route("/local/admin-create-user", post(crate::cognito::admin_create_user))
        .route("/local/admin-verify-email", post(crate::cognito::admin_verify_email))
        .route("/local/events", axum::routing::get(local_events))
        .merge(crate::outbox::router(shared.outbox.clone()))
        .merge(crate::openapi::router())
        .merge(crate::page::router())
        .layer(axum::middleware::from_fn(loopback_hosts_only))
        .with_state(shared)
}

/// Refuses a request that names any host but this machine's loopback. The
/// local API mints tokens (admin ones too) and lists codes to anyone who asks:
/// a web page the developer visits could rebind its own name to 127.0.0.1 and
/// read them (DNS rebinding). Its requests name that page's host; a browser at
/// the local API, curl and the tests name 127.0.0.1 or localhost.
async fn loopback_hosts_only(request: Request, next: axum::middleware::Next) -> Response<Body> {
    let host = request
        .headers()
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if is_loopback_host(host) {
        next.run(request).await
    } else {
        tracing::warn!("a request naming another host than 127.0.0.1 or localhost refused");
        gateway_message(
            StatusCode::FORBIDDEN,
            "Forbidden: the local API answers only 127.0.0.1 and localhost",
        )
    }
}

/// `127.0.0.1`, `localhost` or `[::1]`, with or without a port (parsed as a
/// URI authority, so nothing may trail the name but a port).
pub fn is_loopback_host(host: &str) -> bool {
    host.parse::<axum::http::uri::Authority>().is_ok_and(|authority| {
        !authority.as_str().contains('@')
            && matches!(
                authority.host().to_ascii_lowercase().as_str(),
                "127.0.0.1" | "localhost" | "[::1]"
            )
    })
}

/// Every API route: authorize, build the event, invoke, answer.
async fn proxy(shared: Shared, route: Route, params: HashMap<String, String>, request: Request) -> Response<Body> {
    let (parts, body) = request.into_parts();
    // The JWT authorizer: no valid token, no invocation.
    let token = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")));
    let claims = match token.map(|t| shared.key.verify(t.trim())) {
        // A route open to anyone reads no token, whatever is sent.
        _ if route.public => Default::default(),
        Some(Ok(claims)) => claims,
        Some(Err(_)) | None => {
            tracing::info!(route = %route.key(), "unauthorized request refused before any function");
            return gateway_message(StatusCode::UNAUTHORIZED, "Unauthorized");
        }
    };
    let Ok(bytes) = to_bytes(body, MAX_BODY).await else {
        return gateway_message(StatusCode::PAYLOAD_TOO_LARGE, "Request Entity Too Large");
    };
    let host = parts
        .headers
        .get("host")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1")
        .to_owned();
    let incoming = Incoming {
        method: &parts.method,
        uri: &parts.uri,
        headers: &parts.headers,
        body: &bytes,
        source_ip: parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or_else(|| "127.0.0.1".into(), |peer| peer.ip().to_string()),
        host,
    };
    let event = api_gateway_v2(&route, params, claims_as_api_gateway(&claims), &incoming);
    match shared.lambda.invoke(&route.function, &event).await {
        Ok(payload) => http_response(&payload),
        Err(InvokeError::Function { error_type, .. }) => {
            tracing::error!(function = %route.function, error_type, "function error: API Gateway answers 500");
            gateway_message(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
        }
        Err(InvokeError::Transport(err)) => {
            tracing::error!(function = %route.function, error = %err, "cargo lambda watch is not answering");
            gateway_message(StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable")
        }
    }
}

/// `GET /local/events`: the domain events so far, oldest first.
async fn local_events(axum::extract::State(shared): axum::extract::State<Shared>) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "events": shared.events.all() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_pass() {
        for host in [
            "127.0.0.1",
            "127.0.0.1:3000",
            "localhost:3000",
            "LOCALHOST",
            "[::1]:3000",
            "[::1]",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "",
            "evil.example",
            "evil.example:3000",
            "127.0.0.1.evil.example",
            "localhost.evil.example:3000",
            "10.0.0.5:3000",
            "[::2]:3000",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
