//! The settings page (`GET /`): the reference client of the HTTP API, served by
//! the local API only. Plain files compiled in (`tools/local-api/page/`), no build
//! step; the script calls the same routes with the same Bearer token a deployed
//! page would. Every file goes out with a Content-Security-Policy that allows
//! only this origin's scripts, styles and requests: nothing inline runs.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode, header};
use axum::routing::get;

/// Only this origin's scripts, styles and requests; no frames, plugins or
/// inline code, and no other site may frame these pages.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'none'";

/// A page file as served: its path, its media type and its text.
struct File {
    path: &'static str,
    media_type: &'static str,
    text: &'static str,
}

const FILES: &[File] = &[
    File {
        path: "/",
        media_type: "text/html; charset=utf-8",
        text: include_str!("../page/index.html"),
    },
    File {
        path: "/settings.js",
        media_type: "text/javascript; charset=utf-8",
        text: include_str!("../page/settings.js"),
    },
    File {
        path: "/outbox.js",
        media_type: "text/javascript; charset=utf-8",
        text: include_str!("../page/outbox.js"),
    },
    File {
        path: "/style.css",
        media_type: "text/css; charset=utf-8",
        text: include_str!("../page/style.css"),
    },
];

/// The outbox's page (`GET /local/outbox` when a browser asks for HTML).
pub const OUTBOX_HTML: &str = include_str!("../page/outbox.html");

/// `text` as `media_type`, uncached (a rebuilt local API serves the new page at
/// once), under the page's policy.
pub fn serve(media_type: &'static str, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// Every page file at its path, to merge into the local API's router.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    FILES.iter().fold(Router::new(), |router, file| {
        router.route(file.path, get(move || async move { serve(file.media_type, file.text) }))
    })
}
