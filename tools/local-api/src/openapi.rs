//! The contract, openapi.yaml at the repository root, served as JSON at
//! `/openapi.json` without a token: a docs route of the local API only (the
//! deployed HTTP API has no such route, so the document does not list it).

use std::sync::LazyLock;

use axum::Router;
use axum::body::Body;
use axum::http::{Response, StatusCode};
use axum::routing::get;
use serde_json::{Value, json};

use crate::gateway::json_response;

/// Compiled in: the local API serves the document of the code it was built with.
pub const YAML: &str = include_str!("../../../openapi.yaml");

pub const PATH: &str = "/openapi.json";

/// The document as JSON, or why openapi.yaml does not parse.
pub fn document() -> Result<Value, serde_norway::Error> {
    serde_norway::from_str(YAML)
}

static DOCUMENT: LazyLock<Result<Value, String>> = LazyLock::new(|| document().map_err(|err| err.to_string()));

async fn serve() -> Response<Body> {
    match &*DOCUMENT {
        Ok(document) => json_response(StatusCode::OK, document),
        Err(err) => {
            tracing::error!(error = %err, "openapi.yaml does not parse");
            json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &json!({ "message": "openapi.yaml does not parse" }),
            )
        }
    }
}

/// `GET /openapi.json`, to merge into the local API's router.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route(PATH, get(serve))
}

/// Serves only `/openapi.json` on `listener`, for tests that need no functions.
pub async fn serve_docs(listener: std::net::TcpListener) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    axum::serve(listener, router::<()>()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_parses() {
        let document = document().unwrap();
        assert_eq!(document["openapi"], "3.1.0");
    }
}
