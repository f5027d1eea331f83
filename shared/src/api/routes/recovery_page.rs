//! GET /recovery: the page a recovery link opens. It asks before it recovers,
//! so a mail scanner that opens the link changes nothing, and posts the token
//! it reads from the link's fragment, which browsers never send to a server
//! (nor put in a Referer): the token stays out of every access log.

use super::{Example, Reads};
use crate::catalog;

route! {
    /// GET /recovery.
    RecoveryPage: catalog::RECOVERY_PAGE,
    reads: Reads::CALLER,
    example: Example::bare(200),
    refusals: [],
}

/// The page's script: reads `#token=…`, asks, posts it, says what happened.
pub const SCRIPT: &str = r#"
const token = new URLSearchParams(location.hash.slice(1)).get("token");
history.replaceState(null, "", location.pathname);
const say = (text) => { document.getElementById("status").textContent = text; };
const button = document.getElementById("recover");
if (!token) { say("This link has no recovery token. Open the link from the email again."); button.hidden = true; }
button.addEventListener("click", async () => {
  button.disabled = true;
  say("Taking your account back…");
  try {
    const res = await fetch(location.pathname, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
    });
    const body = await res.json().catch(() => ({}));
    if (res.ok) {
      button.hidden = true;
      say(`Done. ${body.email} is your primary address again, and everyone was signed out. Sign in with it: you will be asked to choose a new password.`);
    } else if (res.status === 404) {
      say("This link does not work: it was used already, its time has passed, or the account is gone.");
    } else if (res.status === 429) {
      say("Too many links that did not work came from here. Try again later.");
    } else {
      button.disabled = false;
      say("Something went wrong. Try again in a moment.");
    }
  } catch {
    button.disabled = false;
    say("The service could not be reached. Try again in a moment.");
  }
});
"#;

/// The page, with [`SCRIPT`] inline (the Content-Security-Policy names its hash).
pub fn page() -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Take your account back</title></head>\
         <body style=\"font-family:sans-serif;max-width:36em;margin:3em auto;line-height:1.5\">\
         <h1>Take your account back</h1>\
         <p>The primary email address of your account was changed. If you did not make that change, \
         this puts it back: this address becomes the primary one again, the addresses added with the \
         change are removed, everyone is signed out, and you choose a new password at your next sign-in.</p>\
         <p><button id=\"recover\" type=\"button\">Take my account back</button></p>\
         <p id=\"status\" role=\"status\" aria-live=\"polite\"></p>\
         <script>{SCRIPT}</script></body></html>"
    )
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;
    use std::sync::LazyLock;

    use base64::Engine;
    use lambda_http::http::{HeaderValue, StatusCode, header};
    use lambda_http::{Body, Request, Response};
    use sha2::Digest;

    use crate::app::App;
    use crate::http::lambda::serve_anyone;

    /// Only the page's own script runs, and it talks to this origin alone.
    static POLICY: LazyLock<String> = LazyLock::new(|| {
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(super::SCRIPT.as_bytes()));
        format!(
            "default-src 'none'; script-src 'sha256-{hash}'; style-src 'unsafe-inline'; connect-src 'self'; \
             base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
    });

    /// The Lambda entry point of GET /recovery: the page.
    pub async fn handle(_app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve_anyone(req, |_| async {
            let mut response = Response::new(Body::Text(super::page()));
            *response.status_mut() = StatusCode::OK;
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
            headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
            if let Ok(policy) = HeaderValue::from_str(&POLICY) {
                headers.insert(header::CONTENT_SECURITY_POLICY, policy);
            }
            Ok(response)
        })
        .await
    }
}
