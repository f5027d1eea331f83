//! The mail the service sends, and the sender that delivers it.
//!
//! Two messages: a verification code, and a notice to a former primary address.
//! A code is typed in and carries no link. The notice carries one link, when
//! the switch can still be undone: the way back for the account's owner.

use aws_sdk_sesv2::error::SdkError;
use aws_sdk_sesv2::operation::send_email::SendEmailError;
use aws_sdk_sesv2::types::{Body, Content, Destination, EmailContent, MessageTag};

use crate::config::{
    ALLOW_LOG_SENDER, ConfigError, SENDER_ADDRESS, SES_CONFIGURATION_SET, VERIFICATION_SENDER, flag, optional, required,
};
use crate::domain::{EmailAddress, EmailId, UserId};
use crate::verification::VerificationCode;

/// One message, before rendering.
#[derive(Debug, Clone, Copy)]
pub enum Mail<'a> {
    /// A code that proves the recipient reads `email_id`'s address.
    VerificationCode {
        /// The address the code is for; the log sender logs it beside the code.
        email_id: EmailId,
        /// The code the recipient types in to prove they read the address.
        code: &'a VerificationCode,
        /// How long the code stays valid, stated in the subject and the body.
        valid_for_seconds: i64,
    },
    /// The primary address of `user_id` moved away from the recipient.
    PrimaryChanged {
        /// The account whose primary moved; logged by the log sender, never put in the message.
        user_id: &'a UserId,
        /// The way back, while the switch can be undone.
        recovery: Option<&'a RecoveryLink>,
    },
    /// An organization invites the recipient's address to join it.
    Invitation {
        /// The invitation; logged by the log sender, never the address.
        invitation_id: crate::domain::InvitationId,
        /// The organization's name, as its owners typed it: escaped in the HTML.
        org_name: &'a crate::domain::OrgName,
        /// The role accepting gives.
        role: crate::domain::Role,
        /// The token, and the page that accepts it (`INVITATION_URL`), if any.
        accept: &'a InvitationLink,
        /// Until when it works.
        valid_until: crate::domain::Timestamp,
    },
}

/// How an invitation is accepted: a link to the product's page with the
/// token in its fragment, or, with no page configured, the token to paste.
#[derive(Clone, PartialEq, Eq)]
pub struct InvitationLink {
    /// The encoded token.
    pub token: String,
    /// The page, if configured (`INVITATION_URL`).
    pub page: Option<String>,
}

impl std::fmt::Debug for InvitationLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InvitationLink")
            .field("token", &"<redacted>")
            .field("page", &self.page)
            .finish()
    }
}

/// A recovery link as the notice gives it.
#[derive(Clone, PartialEq, Eq)]
pub struct RecoveryLink {
    /// The page, with the token after `#token=`.
    pub url: String,
    /// Until when it works.
    pub valid_until: crate::domain::Timestamp,
}

impl std::fmt::Debug for RecoveryLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecoveryLink")
            .field("url", &"<redacted>")
            .field("valid_until", &self.valid_until)
            .finish()
    }
}

/// Subject and bodies, as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The subject line, plain text.
    pub subject: String,
    /// The plain-text body, for clients that show no HTML.
    pub text: String,
    /// The HTML body: the same words as `text`.
    pub html: String,
}

impl Mail<'_> {
    /// A stable tag value, for the configuration set's event destinations.
    pub fn purpose(&self) -> &'static str {
        match self {
            Self::VerificationCode { .. } => "verification-code",
            Self::PrimaryChanged { .. } => "primary-changed",
            Self::Invitation { .. } => "invitation",
        }
    }

    /// The message as sent, in English: subject, plain-text and HTML bodies, and no link.
    pub fn render(&self) -> Rendered {
        match self {
            Self::VerificationCode {
                code,
                valid_for_seconds,
                ..
            } => {
                let code = code.reveal();
                let expiry = expires_in(*valid_for_seconds);
                let text = format!(
                    "Your verification code is {code}\n\n\
                     Enter it to confirm that this email address is yours and add it to your account. \
                     It expires in {expiry}; after that, ask for a new one.\n\n\
                     If you did not ask for it, ignore this message: the address is not added \
                     to any account unless the code is entered. Never share the code.\n"
                );
                let html = html_page(&format!(
                    "<p>Your verification code is</p>\
                     <p style=\"font-size:28px;font-weight:bold;letter-spacing:4px\">{code}</p>\
                     <p>Enter it to confirm that this email address is yours and add it to your account. \
                     It expires in {expiry}; after that, ask for a new one.</p>\
                     <p>If you did not ask for it, ignore this message: the address is not added \
                     to any account unless the code is entered. Never share the code.</p>"
                ));
                Rendered {
                    subject: format!("Your code to verify this email address (expires in {expiry})"),
                    text,
                    html,
                }
            }
            Self::PrimaryChanged { recovery: None, .. } => {
                let body = "The primary email address of your account was changed to another address. \
                            This address no longer receives sign-in or password-reset mail for it.";
                let act = "If you made this change, there is nothing to do. If you did not, \
                           someone else may control your account: contact support right away.";
                Rendered {
                    subject: "Your primary email address was changed".to_owned(),
                    text: format!("{body}\n\n{act}\n"),
                    html: html_page(&format!("<p>{body}</p><p>{act}</p>")),
                }
            }
            Self::PrimaryChanged {
                recovery: Some(link), ..
            } => {
                let body = "The primary email address of your account was changed to another address. \
                            This address no longer receives sign-in or password-reset mail for it.";
                let ok = "If you made this change, there is nothing to do.";
                let until = link.valid_until.to_string();
                let act = format!(
                    "If you did not, take your account back with this link before {until} (UTC). \
                     It makes this address the primary one again, removes the addresses added with the change, \
                     signs everyone out, and asks for a new password at the next sign-in. It works once."
                );
                let url = &link.url;
                let href = escape_html(url);
                Rendered {
                    subject: "Your primary email address was changed: was it you?".to_owned(),
                    text: format!("{body}\n\n{ok}\n\n{act}\n\n{url}\n"),
                    html: html_page(&format!(
                        "<p>{body}</p><p>{ok}</p><p>{act}</p><p><a href=\"{href}\">{href}</a></p>"
                    )),
                }
            }
            Self::Invitation {
                org_name,
                role,
                accept,
                valid_until,
                ..
            } => invitation(org_name.as_str(), *role, accept, &valid_until.to_string()),
        }
    }
}

/// An invitation: who invites, the role, and the link or the token; it
/// states that nothing happens unless the recipient accepts, signed in.
fn invitation(org_name: &str, role: crate::domain::Role, accept: &InvitationLink, until: &str) -> Rendered {
    let role = role.as_str();
    let lead = format!("You are invited to join the organization \"{org_name}\" as {role}.");
    let terms = format!(
        "To accept, sign in with the account that holds this email address, verified. \
         The invitation works once, until {until} (UTC). If you do not know this organization, \
         ignore this message: nothing happens unless you accept."
    );
    let (how, how_html) = match &accept.page {
        Some(page) => {
            let url = format!("{page}#token={}", accept.token);
            let href = escape_html(&url);
            (url, format!("<p><a href=\"{href}\">{href}</a></p>"))
        }
        None => {
            let token = &accept.token;
            (
                format!("Your invitation token:\n{token}"),
                format!("<p>Your invitation token:</p><p style=\"font-family:monospace\">{token}</p>"),
            )
        }
    };
    let lead_html = escape_html(&lead);
    Rendered {
        subject: format!("Invitation to join \"{org_name}\""),
        text: format!("{lead}\n\n{terms}\n\n{how}\n"),
        html: html_page(&format!("<p>{lead_html}</p><p>{terms}</p>{how_html}")),
    }
}

/// "15 minutes", "1 hour", "90 seconds": whole units, read at a glance.
fn expires_in(seconds: i64) -> String {
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    match seconds {
        s if s % 3600 == 0 && s > 0 => plural(s / 3600, "hour"),
        s if s % 60 == 0 && s > 0 => plural(s / 60, "minute"),
        s => plural(s, "second"),
    }
}

/// A value for an HTML attribute or text: the recovery page's URL is configured.
fn escape_html(raw: &str) -> String {
    raw.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Every interpolated value is a digit string, fixed text or escaped: nothing else to escape.
fn html_page(content: &str) -> String {
    format!(
        "<!doctype html><html><body style=\"font-family:sans-serif;font-size:16px;line-height:1.5\">\
         {content}</body></html>"
    )
}

/// Where mail goes, chosen by `VERIFICATION_SENDER`.
#[derive(Debug, Clone)]
pub enum Sender {
    /// Amazon SES v2, from a verified identity, through a configuration set.
    Ses(SesSender),
    /// One structured log event per message, for local runs and tests. The one
    /// place a code appears in a log; it starts only with `ALLOW_LOG_SENDER=true`.
    Log,
}

/// Delivers through SES v2 in one attempt, cut to the invocation's deadline.
#[derive(Debug, Clone)]
pub struct SesSender {
    client: aws_sdk_sesv2::Client,
    /// As configured, not normalised: IAM's `ses:FromAddress` condition and
    /// Cognito's `From` compare the string exactly.
    from: String,
    configuration_set: String,
}

/// The longest one send may take. One attempt: an attempt that timed out may
/// have been accepted, and a retry would send the message twice.
const SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A message that may not have gone out; the caller decides whether that fails its work.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// Shown by its error code alone: SES messages name the addresses involved.
    #[error("SES SendEmail failed: {}", crate::error::aws_failure(.0))]
    Ses(Box<SdkError<SendEmailError>>),
    /// The message or its tag could not be put into an SES request; nothing was sent.
    #[error("the message could not be built")]
    Build(#[source] aws_sdk_sesv2::error::BuildError),
}

impl SesSender {
    /// `from` is checked to be an address and kept as written.
    pub fn new(
        client: aws_sdk_sesv2::Client,
        from: &str,
        configuration_set: impl Into<String>,
    ) -> Result<Self, crate::domain::Invalid> {
        EmailAddress::parse(from)?;
        Ok(Self {
            client,
            from: from.trim().to_owned(),
            configuration_set: configuration_set.into(),
        })
    }

    async fn send(&self, to: &EmailAddress, mail: &Mail<'_>) -> Result<(), SendError> {
        let rendered = mail.render();
        let content = |data: String| {
            Content::builder()
                .data(data)
                .charset("UTF-8")
                .build()
                .map_err(SendError::Build)
        };
        let message = aws_sdk_sesv2::types::Message::builder()
            .subject(content(rendered.subject)?)
            .body(
                Body::builder()
                    .text(content(rendered.text)?)
                    .html(content(rendered.html)?)
                    .build(),
            )
            .build();
        let tag = MessageTag::builder()
            .name("purpose")
            .value(mail.purpose())
            .build()
            .map_err(SendError::Build)?;
        self.client
            .send_email()
            .from_email_address(&self.from)
            .destination(Destination::builder().to_addresses(to.as_str()).build())
            .content(EmailContent::builder().simple(message).build())
            .configuration_set_name(&self.configuration_set)
            .email_tags(tag)
            .customize()
            .config_override(aws_sdk_sesv2::config::Builder::default().timeout_config({
                let timeout = crate::deadline::call_timeout(Some(SEND_TIMEOUT)).unwrap_or(SEND_TIMEOUT);
                aws_smithy_types::timeout::TimeoutConfig::builder()
                    .operation_timeout(timeout)
                    .operation_attempt_timeout(timeout)
                    .build()
            }))
            .send()
            .await
            .map_err(|err| SendError::Ses(Box::new(err)))?;
        Ok(())
    }
}

impl Sender {
    /// The sender the environment names. `ses` (the default) needs
    /// `SENDER_ADDRESS` and `SES_CONFIGURATION_SET`; `log` needs
    /// `ALLOW_LOG_SENDER=true`, because nothing else tells a local run from a
    /// deployed one (`cargo lambda watch` sets Lambda's own variables).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
        sdk: &aws_config::SdkConfig,
    ) -> Result<Self, ConfigError> {
        let chosen = optional(&lookup, VERIFICATION_SENDER).unwrap_or_default();
        match chosen.trim() {
            "" | "ses" => {
                let from = required(&lookup, SENDER_ADDRESS, "the verified SES address mail is sent from")?;
                let configuration_set = required(
                    &lookup,
                    SES_CONFIGURATION_SET,
                    "the SES configuration set every message goes through",
                )?;
                let sender =
                    SesSender::new(aws_sdk_sesv2::Client::new(sdk), &from, configuration_set).map_err(|err| {
                        ConfigError::Invalid {
                            name: SENDER_ADDRESS.name(),
                            reason: err.to_string(),
                        }
                    })?;
                Ok(Self::Ses(sender))
            }
            "log" if flag(&lookup, ALLOW_LOG_SENDER) => Ok(Self::Log),
            "log" => Err(ConfigError::Invalid {
                name: VERIFICATION_SENDER.name(),
                reason: format!(
                    "log writes codes to the function log; it starts only with {}=true \
                     (local runs and test stacks)",
                    ALLOW_LOG_SENDER.name()
                ),
            }),
            other => Err(ConfigError::Invalid {
                name: VERIFICATION_SENDER.name(),
                reason: format!("must be ses or log, not {other:?}"),
            }),
        }
    }

    /// Delivers `mail` to `to` in one attempt, or with the log sender, logs it instead.
    pub async fn send(&self, to: &EmailAddress, mail: &Mail<'_>) -> Result<(), SendError> {
        match self {
            Self::Ses(ses) => ses.send(to, mail).await,
            Self::Log => {
                match mail {
                    Mail::VerificationCode { email_id, code, .. } => {
                        tracing::info!(email_id = %email_id, code = code.reveal(), "verification code issued");
                    }
                    Mail::Invitation {
                        invitation_id, accept, ..
                    } => {
                        tracing::info!(
                            invitation_id = %invitation_id,
                            invitation_token = accept.token.as_str(),
                            "invitation sent"
                        );
                    }
                    Mail::PrimaryChanged { user_id, recovery } => {
                        tracing::info!(
                            sub = %user_id,
                            recovery_link = recovery.map(|link| link.url.as_str()),
                            "primary change notice sent to the former primary address"
                        );
                    }
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sdk() -> aws_config::SdkConfig {
        aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build()
    }

    use crate::config::tests::lookup;

    #[test]
    fn the_code_message_says_what_it_is_for_and_when_it_expires() {
        let code = VerificationCode::parse("042917").unwrap();
        let rendered = Mail::VerificationCode {
            email_id: EmailId::new(),
            code: &code,
            valid_for_seconds: 900,
        }
        .render();
        assert_eq!(
            rendered.subject,
            "Your code to verify this email address (expires in 15 minutes)"
        );
        for body in [&rendered.text, &rendered.html] {
            assert!(body.contains("042917"));
            assert!(body.contains("expires in 15 minutes"));
            assert!(body.contains("confirm that this email address is yours"));
            assert!(!body.contains("http"), "no link to act on");
        }
    }

    #[test]
    fn the_notice_carries_no_code_and_no_link() {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let rendered = Mail::PrimaryChanged {
            user_id: &user,
            recovery: None,
        }
        .render();
        assert_eq!(rendered.subject, "Your primary email address was changed");
        for body in [&rendered.text, &rendered.html] {
            assert!(body.contains("If you did not"));
            assert!(!body.contains("http"));
            assert!(!body.contains(user.as_str()), "no identifier to act on");
            assert!(!body.contains("code"), "no code");
        }
        assert!(!rendered.text.bytes().any(|b| b.is_ascii_digit()), "no code");
    }

    #[test]
    fn an_invitation_escapes_its_organization_and_carries_the_link_or_the_token() {
        let name = crate::domain::OrgName::parse("Acme <b>\"&\"</b>").unwrap();
        let until = crate::domain::Timestamp::parse("2026-12-04T10:00:00.000Z").unwrap();
        let linked = InvitationLink {
            token: "tok_-en".into(),
            page: Some("https://app.example.com/join".into()),
        };
        let mail = |accept| Mail::Invitation {
            invitation_id: crate::domain::InvitationId::from_bytes([1; 16]),
            org_name: &name,
            role: crate::domain::Role::Admin,
            accept,
            valid_until: until,
        };
        let rendered = mail(&linked).render();
        assert!(rendered.subject.contains("Acme <b>"));
        assert!(rendered.text.contains("https://app.example.com/join#token=tok_-en"));
        assert!(rendered.text.contains("as admin"));
        assert!(rendered.text.contains("until 2026-12-04T10:00:00.000Z (UTC)"));
        assert!(!rendered.html.contains("<b>"), "the name is escaped in the HTML");
        assert!(rendered.html.contains("Acme &lt;b&gt;"));
        let pasted = InvitationLink {
            token: "tok_-en".into(),
            page: None,
        };
        let rendered = mail(&pasted).render();
        assert!(rendered.text.contains("Your invitation token:\ntok_-en"));
        assert_eq!(mail(&pasted).purpose(), "invitation");
        assert!(!format!("{pasted:?}").contains("tok_-en"), "Debug hides the token");
    }

    #[test]
    fn the_notice_of_an_undoable_switch_carries_its_link_once_escaped() {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let link = RecoveryLink {
            url: "https://app.example.com/recover?a=1&b=\"2\"#token=abc_-".to_owned(),
            valid_until: crate::domain::Timestamp::parse("2026-12-04T10:00:00.000Z").unwrap(),
        };
        let rendered = Mail::PrimaryChanged {
            user_id: &user,
            recovery: Some(&link),
        }
        .render();
        assert!(rendered.subject.contains("was it you?"));
        assert!(rendered.text.contains(&link.url));
        assert!(rendered.text.contains("before 2026-12-04T10:00:00.000Z (UTC)"));
        assert!(rendered.text.contains("It works once."));
        assert!(
            rendered
                .html
                .contains("href=\"https://app.example.com/recover?a=1&amp;b=&quot;2&quot;#token=abc_-\"")
        );
        assert!(!rendered.html.contains("b=\"2\""), "escaped in the HTML");
        assert!(!rendered.text.contains(user.as_str()));
        assert!(!format!("{link:?}").contains("token="), "Debug hides the token");
    }

    #[test]
    fn expiry_reads_in_whole_units() {
        assert_eq!(expires_in(3600), "1 hour");
        assert_eq!(expires_in(7200), "2 hours");
        assert_eq!(expires_in(60), "1 minute");
        assert_eq!(expires_in(90), "90 seconds");
    }

    #[test]
    fn ses_is_the_default_and_needs_its_address_and_configuration_set() {
        let err = Sender::from_lookup(lookup(&[]), &sdk()).unwrap_err().to_string();
        assert!(err.starts_with("SENDER_ADDRESS is not set"), "{err}");
        let err = Sender::from_lookup(lookup(&[(SENDER_ADDRESS.name(), "no-reply@example.com")]), &sdk())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("SES_CONFIGURATION_SET is not set"), "{err}");
        let err = Sender::from_lookup(
            lookup(&[
                (SENDER_ADDRESS.name(), "not an address"),
                (SES_CONFIGURATION_SET.name(), "cs"),
            ]),
            &sdk(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("SENDER_ADDRESS is invalid"), "{err}");
        let sender = Sender::from_lookup(
            lookup(&[
                (SENDER_ADDRESS.name(), "no-reply@example.com"),
                (SES_CONFIGURATION_SET.name(), "cs"),
            ]),
            &sdk(),
        )
        .unwrap();
        assert!(matches!(sender, Sender::Ses(_)));
    }

    #[test]
    fn the_log_sender_starts_only_when_allowed() {
        for allowed in [None, Some("false"), Some("1"), Some("")] {
            let mut vars = vec![(VERIFICATION_SENDER.name(), "log")];
            if let Some(value) = allowed {
                vars.push((ALLOW_LOG_SENDER.name(), value));
            }
            let err = Sender::from_lookup(lookup(&vars), &sdk()).unwrap_err().to_string();
            assert!(err.contains("ALLOW_LOG_SENDER=true"), "{allowed:?}: {err}");
        }
        let sender = Sender::from_lookup(
            lookup(&[(VERIFICATION_SENDER.name(), "log"), (ALLOW_LOG_SENDER.name(), "true")]),
            &sdk(),
        )
        .unwrap();
        assert!(matches!(sender, Sender::Log));
        let err = Sender::from_lookup(lookup(&[(VERIFICATION_SENDER.name(), "smtp")]), &sdk())
            .unwrap_err()
            .to_string();
        assert!(err.contains("must be ses or log"), "{err}");
    }
}
