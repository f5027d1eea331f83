//! The local mail outbox of `make dev`: every message the functions sent through
//! SES, listed at `GET /local/outbox` (JSON, or the outbox page for a browser).
//!
//! Under `make dev` the functions that send mail use the real SES sender
//! (`user_service::mail::SesSender`: SESv2 SendEmail from `SENDER_ADDRESS`,
//! through `SES_CONFIGURATION_SET`, with its `purpose` tag) against moto's SES
//! (`AWS_ENDPOINT_URL_SESV2`), not a sender kind of their own. So the deployed
//! code path runs as deployed: the rendering, the SESv2 request, the identity
//! and the configuration set. And the deployed binaries contain no outbox at
//! all: it lives only here, in the local API (never deployed), and reads moto,
//! so a deployed stack can never use it.
//!
//! moto keeps every message its SES accepted and shows them in its state
//! (`GET /moto-api/data.json`, `ses.Message`: `id`, `source`, `subject`, the
//! HTML body when both bodies are sent, `destinations.ToAddresses`), with no
//! time. The poller reads that state every 250 ms and stamps each message with
//! the time it first saw it: `sentAt` is when the outbox saw the message, at most
//! one poll interval after moto accepted it. moto renders its whole state for
//! that answer, which grows with everything it ever held (every message of the
//! events' queue): when one answer takes longer than a quarter of the interval,
//! the poller waits four times as long as it took, so moto spends at most a
//! fifth of its time on the outbox. The last [`KEPT`] messages are kept, newest
//! first in the listing.
//!
//! Nothing here logs a recipient, a subject or a body: a poll that fails is
//! logged once per streak of failures, by moto's address alone.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Response, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use user_service::domain::Timestamp;

/// Messages kept for `GET /local/outbox`; older ones are dropped.
pub const KEPT: usize = 1000;

/// How often moto's state is read, when it answers quickly.
pub const POLL: Duration = Duration::from_millis(250);

/// The longest one read of moto's state may take.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// One message SES accepted, as the outbox lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// moto's message id (SES's `MessageId`).
    pub id: String,
    pub to: Vec<String>,
    pub from: String,
    pub subject: String,
    /// The HTML body, as moto holds it.
    pub body: String,
    /// The body as plain text: [`html_to_text`] of `body`.
    pub text: String,
    /// When the outbox first saw the message (within one poll of moto accepting it).
    pub sent_at: Timestamp,
}

/// moto's state, as far as the outbox reads it.
#[derive(Debug, Default, Deserialize)]
struct MotoState {
    #[serde(default)]
    ses: MotoSes,
}

#[derive(Debug, Default, Deserialize)]
struct MotoSes {
    #[serde(rename = "Message", default)]
    messages: Vec<MotoMessage>,
}

/// One of moto's `ses.Message` entries.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct MotoMessage {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub destinations: Option<MotoDestinations>,
}

#[derive(Debug, Default, Clone, Deserialize)]
pub struct MotoDestinations {
    #[serde(rename = "ToAddresses", default)]
    pub to_addresses: Option<Vec<String>>,
}

#[derive(Debug, thiserror::Error)]
enum PollError {
    #[error("moto did not answer: {0}")]
    Transport(#[from] reqwest::Error),
    /// Where, not what: serde_json's message can quote a value (an address).
    #[error("moto's state is not what the outbox reads ({category:?} at line {line}, column {column})")]
    Shape {
        category: serde_json::error::Category,
        line: usize,
        column: usize,
    },
}

/// What the outbox holds: the messages (oldest first) and how far into moto's
/// list of messages it has read.
#[derive(Debug, Default)]
struct Seen {
    messages: Vec<Message>,
    /// How many of moto's messages have been stamped. moto only appends to its
    /// list, so the new ones are the ones past this.
    consumed: usize,
    /// moto's id of the last message stamped: when it is no longer at its place,
    /// moto was reset or restarted, and its list starts afresh.
    last_id: Option<String>,
}

impl Seen {
    /// Stamps the messages of moto's list not seen yet with `now`.
    fn ingest(&mut self, moto: &[MotoMessage], now: Timestamp) {
        let continues = self.consumed <= moto.len()
            && self
                .consumed
                .checked_sub(1)
                .is_none_or(|last| moto[last].id == self.last_id);
        if !continues {
            self.consumed = 0;
        }
        for message in &moto[self.consumed..] {
            let body = message.body.clone().unwrap_or_default();
            self.messages.push(Message {
                id: message.id.clone().unwrap_or_default(),
                to: message
                    .destinations
                    .as_ref()
                    .and_then(|d| d.to_addresses.clone())
                    .unwrap_or_default(),
                from: message.source.clone().unwrap_or_default(),
                subject: message.subject.clone().unwrap_or_default(),
                text: html_to_text(&body),
                body,
                sent_at: now,
            });
        }
        self.consumed = moto.len();
        self.last_id = moto.last().and_then(|m| m.id.clone());
        let excess = self.messages.len().saturating_sub(KEPT);
        self.messages.drain(..excess);
    }
}

/// The messages moto's SES accepted, as the poller found them.
pub struct Outbox {
    client: reqwest::Client,
    /// moto's state: `{endpoint}/moto-api/data.json`.
    state_url: String,
    seen: Mutex<Seen>,
}

impl Outbox {
    /// The outbox of the moto at `endpoint` (`AWS_ENDPOINT_URL_SESV2`); it holds
    /// nothing until [`Outbox::run`] polls.
    pub fn new(endpoint: &str) -> Self {
        Self {
            client: reqwest::Client::builder()
                .timeout(READ_TIMEOUT)
                .build()
                .unwrap_or_default(),
            state_url: format!("{}/moto-api/data.json", endpoint.trim_end_matches('/')),
            seen: Mutex::new(Seen::default()),
        }
    }

    /// The messages kept, newest first; only those to `to` (any case) when given.
    pub fn messages(&self, to: Option<&str>) -> Vec<Message> {
        let to = to.map(str::trim).filter(|t| !t.is_empty()).map(str::to_lowercase);
        self.seen
            .lock()
            .map(|seen| {
                seen.messages
                    .iter()
                    .rev()
                    .filter(|m| {
                        to.as_ref()
                            .is_none_or(|to| m.to.iter().any(|t| t.to_lowercase() == *to))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Takes moto's list of messages as one poll read it, at `now`.
    pub fn ingest(&self, moto: &[MotoMessage], now: Timestamp) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.ingest(moto, now);
        }
    }

    /// Polls moto until the process ends: every [`POLL`], or less often while
    /// moto's state is slow to render.
    pub async fn run(&self) {
        let mut failing = false;
        loop {
            let started = Instant::now();
            match self.poll().await {
                Ok(()) if failing => {
                    failing = false;
                    tracing::info!(url = %self.state_url, "moto answers the outbox again");
                }
                Ok(()) => {}
                // The error names moto's URL, never a message.
                Err(err) if !failing => {
                    failing = true;
                    tracing::warn!(url = %self.state_url, error = %err, "the outbox cannot read moto's SES; it keeps trying");
                }
                Err(_) => {}
            }
            tokio::time::sleep(POLL.max(started.elapsed() * 4)).await;
        }
    }

    /// One read of moto's state.
    async fn poll(&self) -> Result<(), PollError> {
        let bytes = self
            .client
            .get(&self.state_url)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        let state: MotoState = serde_json::from_slice(&bytes).map_err(|err| PollError::Shape {
            category: err.classify(),
            line: err.line(),
            column: err.column(),
        })?;
        self.ingest(&state.ses.messages, Timestamp::now());
        Ok(())
    }
}

/// `GET /local/outbox`'s query.
#[derive(Debug, Default, Deserialize)]
pub struct Filter {
    /// Only the messages to this address (any case).
    pub to: Option<String>,
}

/// `GET /local/outbox` over `outbox`, to merge into the local API's router.
/// The route holds the outbox alone, not the API's whole state.
pub fn router<S: Clone + Send + Sync + 'static>(outbox: Arc<Outbox>) -> Router<S> {
    Router::new().route("/local/outbox", get(list)).with_state(outbox)
}

/// `GET /local/outbox`: the outbox page for a browser, else `{"messages": [...]}`.
async fn list(State(outbox): State<Arc<Outbox>>, Query(filter): Query<Filter>, headers: HeaderMap) -> Response<Body> {
    answer(&outbox, &headers, filter.to.as_deref())
}

/// The answer to `GET /local/outbox` with these headers and this filter.
pub fn answer(outbox: &Outbox, headers: &HeaderMap, to: Option<&str>) -> Response<Body> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let mut response = if prefers_html(accept) {
        crate::page::serve("text/html; charset=utf-8", crate::page::OUTBOX_HTML)
    } else {
        let mut json = Json(serde_json::json!({ "messages": outbox.messages(to) })).into_response();
        json.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        json
    };
    response
        .headers_mut()
        .insert(header::VARY, HeaderValue::from_static("accept"));
    response
}

/// Whether the request is a browser's navigation: its `Accept` lists
/// `text/html` first, as every browser's does. curl (`*/*`), no header, and the
/// outbox page's own requests (`application/json`) get JSON.
pub fn prefers_html(accept: Option<&str>) -> bool {
    accept
        .and_then(|accept| accept.split(',').next())
        .and_then(|first| first.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("text/html"))
}

/// The plain text of an HTML mail, as a mail client without HTML shows it: a
/// blank line between paragraphs, entities decoded.
pub fn html_to_text(html: &str) -> String {
    let text = nanohtml2text::html2text(html).replace("\r\n", "\n");
    text.lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moto(id: &str, to: &str, subject: &str, body: &str) -> MotoMessage {
        MotoMessage {
            id: Some(id.to_owned()),
            source: Some("no-reply@user-service.localhost".to_owned()),
            subject: Some(subject.to_owned()),
            body: Some(body.to_owned()),
            destinations: Some(MotoDestinations {
                to_addresses: Some(vec![to.to_owned()]),
            }),
        }
    }

    fn at(raw: &str) -> Timestamp {
        Timestamp::parse(raw).unwrap()
    }

    /// The code mail as shared/src/mail.rs renders its HTML.
    const CODE_HTML: &str = "<!doctype html><html><body style=\"font-family:sans-serif;font-size:16px;line-height:1.5\">\
        <p>Your verification code is</p>\
        <p style=\"font-size:28px;font-weight:bold;letter-spacing:4px\">042917</p>\
        <p>Enter it to confirm that this email address is yours and add it to your account. \
        It expires in 15 minutes; after that, ask for a new one.</p>\
        <p>If you did not ask for it, ignore this message: the address is not added \
        to any account unless the code is entered. Never share the code.</p></body></html>";

    #[test]
    fn the_code_mail_reads_as_paragraphs() {
        assert_eq!(
            html_to_text(CODE_HTML),
            "Your verification code is\n\n042917\n\n\
             Enter it to confirm that this email address is yours and add it to your account. \
             It expires in 15 minutes; after that, ask for a new one.\n\n\
             If you did not ask for it, ignore this message: the address is not added \
             to any account unless the code is entered. Never share the code."
        );
    }

    #[test]
    fn the_services_own_mail_becomes_its_text_body() {
        // The rendered HTML reads as the rendered text, paragraph for paragraph.
        let user = user_service::domain::UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let rendered = user_service::mail::Mail::PrimaryChanged {
            user_id: &user,
            recovery: None,
        }
        .render();
        assert_eq!(html_to_text(&rendered.html), rendered.text.trim_end());
    }

    #[test]
    fn entities_and_breaks_read_as_text() {
        assert_eq!(
            html_to_text("<p>Fish &amp; chips &lt;b&gt; a<br>b</p>\n  <p>   spaced    out  </p>"),
            "Fish & chips <b> a\nb\n\nspaced out"
        );
        assert_eq!(html_to_text("plain text"), "plain text");
        assert_eq!(html_to_text(""), "");
    }

    #[test]
    fn browsers_get_the_page_everything_else_json() {
        let firefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        let chrome = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,\
                      image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7";
        for accept in [firefox, chrome, "text/html", "TEXT/HTML; charset=utf-8"] {
            assert!(prefers_html(Some(accept)), "{accept}");
        }
        for accept in [
            None,
            Some("*/*"),
            Some("application/json"),
            Some("application/json, text/html"),
            Some("text/plain"),
            Some(""),
        ] {
            assert!(!prefers_html(accept), "{accept:?}");
        }
    }

    #[test]
    fn each_message_is_stamped_once_when_first_seen_newest_first() {
        let outbox = Outbox::new("http://127.0.0.1:5050/");
        assert_eq!(outbox.state_url, "http://127.0.0.1:5050/moto-api/data.json");
        let first = moto("m1", "ada@example.com", "One", "<p>1</p>");
        let second = moto("m2", "Ada.Work@Example.com", "Two", "<p>2</p>");
        outbox.ingest(std::slice::from_ref(&first), at("2026-11-25T10:00:00.000Z"));
        outbox.ingest(&[first.clone(), second.clone()], at("2026-11-25T10:00:00.250Z"));
        outbox.ingest(&[first.clone(), second.clone()], at("2026-11-25T10:00:00.500Z"));
        let all = outbox.messages(None);
        let stamps: Vec<(&str, String)> = all.iter().map(|m| (m.id.as_str(), m.sent_at.to_string())).collect();
        assert_eq!(
            stamps,
            [
                ("m2", "2026-11-25T10:00:00.250Z".to_owned()),
                ("m1", "2026-11-25T10:00:00.000Z".to_owned())
            ]
        );
        assert_eq!(all[1].text, "1");
        assert_eq!(all[1].from, "no-reply@user-service.localhost");

        // moto restarted: its list starts again, with new ids.
        let after = moto("m3", "grace@example.com", "Three", "<p>3</p>");
        outbox.ingest(std::slice::from_ref(&after), at("2026-11-25T10:00:01.000Z"));
        let ids: Vec<String> = outbox.messages(None).into_iter().map(|m| m.id).collect();
        assert_eq!(ids, ["m3", "m2", "m1"]);
    }

    #[test]
    fn the_outbox_keeps_the_last_thousand() {
        let outbox = Outbox::new("http://127.0.0.1:5050");
        let many: Vec<MotoMessage> = (0..KEPT + 5)
            .map(|i| moto(&format!("m{i}"), "ada@example.com", "S", "<p>x</p>"))
            .collect();
        outbox.ingest(&many[..10], at("2026-11-25T10:00:00.000Z"));
        outbox.ingest(&many, at("2026-11-25T10:00:01.000Z"));
        let kept = outbox.messages(None);
        assert_eq!(kept.len(), KEPT);
        assert_eq!(kept[0].id, format!("m{}", KEPT + 4));
        assert_eq!(kept[KEPT - 1].id, "m5");
        // Dropped messages are not taken for new ones at the next poll.
        outbox.ingest(&many, at("2026-11-25T10:00:02.000Z"));
        assert_eq!(outbox.messages(None).len(), KEPT);
    }

    #[test]
    fn the_filter_matches_a_recipient_in_any_case() {
        let outbox = Outbox::new("http://127.0.0.1:5050");
        outbox.ingest(
            &[
                moto("m1", "ada@example.com", "One", "<p>1</p>"),
                moto("m2", "Ada.Work@Example.com", "Two", "<p>2</p>"),
                moto("m3", "ada.work@example.com", "Three", "<p>3</p>"),
            ],
            at("2026-11-25T10:00:00.000Z"),
        );
        let ids = |to: Option<&str>| -> Vec<String> { outbox.messages(to).into_iter().map(|m| m.id).collect() };
        assert_eq!(ids(Some("ADA.work@example.com")), ["m3", "m2"]);
        assert_eq!(ids(Some(" ada@example.com ")), ["m1"]);
        assert_eq!(ids(Some("ada")), Vec::<String>::new());
        assert_eq!(ids(Some("")), ["m3", "m2", "m1"]);
        assert_eq!(ids(None), ["m3", "m2", "m1"]);
    }

    #[test]
    fn moto_state_is_read_leniently() {
        let state: MotoState = serde_json::from_str(
            r#"{"sqs": {"Message": [{"body": "not mail"}]},
                "ses": {"Message": [{"id": "m1", "source": "s@x.example", "subject": null,
                                     "body": "<p>b</p>", "destinations": {"ToAddresses": ["a@x.example"]}},
                                    {"id": "m2"}],
                        "RawMessage": []}}"#,
        )
        .unwrap();
        let outbox = Outbox::new("http://127.0.0.1:5050");
        outbox.ingest(&state.ses.messages, at("2026-11-25T10:00:00.000Z"));
        let messages = outbox.messages(None);
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[1].to, ["a@x.example"]);
        assert!(messages[0].to.is_empty());
        let empty: MotoState = serde_json::from_str("{}").unwrap();
        assert!(empty.ses.messages.is_empty());
    }

    async fn body_of(response: Response<Body>) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn the_answer_is_negotiated_and_filtered() {
        let outbox = Outbox::new("http://127.0.0.1:5050");
        outbox.ingest(
            &[
                moto(
                    "m1",
                    "ada@example.com",
                    "Your primary email address was changed",
                    "<p>n</p>",
                ),
                moto("m2", "ada.work@example.com", "Your code", CODE_HTML),
            ],
            at("2026-11-25T10:00:00.123Z"),
        );
        let mut browser = HeaderMap::new();
        browser.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/html,application/xhtml+xml,*/*;q=0.8"),
        );
        let page = answer(&outbox, &browser, Some("ada@example.com"));
        assert_eq!(page.headers()[header::CONTENT_TYPE], "text/html; charset=utf-8");
        assert!(page.headers().contains_key(header::CONTENT_SECURITY_POLICY));
        assert_eq!(page.headers()[header::VARY], "accept");
        assert_eq!(body_of(page).await, crate::page::OUTBOX_HTML);

        let mut script = HeaderMap::new();
        script.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        for headers in [script, HeaderMap::new()] {
            let json = answer(&outbox, &headers, Some("ADA.WORK@example.com"));
            assert_eq!(json.headers()[header::CONTENT_TYPE], "application/json");
            assert_eq!(json.headers()[header::VARY], "accept");
            let listed: serde_json::Value = serde_json::from_str(&body_of(json).await).unwrap();
            assert_eq!(
                listed,
                serde_json::json!({"messages": [{
                    "id": "m2",
                    "to": ["ada.work@example.com"],
                    "from": "no-reply@user-service.localhost",
                    "subject": "Your code",
                    "body": CODE_HTML,
                    "text": html_to_text(CODE_HTML),
                    "sentAt": "2026-11-25T10:00:00.123Z",
                }]})
            );
        }
    }
}
