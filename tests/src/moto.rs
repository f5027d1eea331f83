//! moto's server mode, the AWS API emulator for what DynamoDB Local does not
//! cover (Secrets Manager here; SES and Cognito too), started per test on
//! 127.0.0.1 and stopped with the test.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use aws_config::{BehaviorVersion, Region, SdkConfig};

use crate::{process, wait};

/// How to get moto, for every failure message.
pub const HOW_TO_INSTALL: &str = "moto_server is not on PATH: run `make test` (installs everything), or \
`make tools` and put .venv/bin on PATH";

/// The bus and the events' source of the tests.
pub const EVENT_BUS: &str = "user-service-test-events";
pub const EVENT_SOURCE: &str = "urn:user-service:test";

pub struct Moto {
    child: Child,
    pub endpoint: String,
}

impl Moto {
    /// Starts `moto_server` on a port the OS picks (port 0) and reads the port
    /// from its first lines: a port chosen here and bound later could be taken by
    /// another test's server in between.
    pub fn start() -> Self {
        use std::io::BufRead;
        crate::logs::capture();
        let mut cmd = Command::new("moto_server");
        cmd.args(["-H", "127.0.0.1", "-p", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{HOW_TO_INSTALL} ({e})"));
        let stderr = child.stderr.take().unwrap();
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        // Reads moto's log to its end, so a full pipe never stalls the server.
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(port) = line
                    .split("Running on http://127.0.0.1:")
                    .nth(1)
                    .and_then(|rest| rest.trim().parse::<u16>().ok())
                {
                    let _ = port_tx.send(port);
                }
            }
        });
        let port = port_rx
            .recv_timeout(wait::GENEROUS)
            .unwrap_or_else(|e| panic!("moto_server did not say its port ({e}): {HOW_TO_INSTALL}"));
        let moto = Self {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        wait::until("moto_server to answer", wait::GENEROUS, || {
            std::net::TcpStream::connect(("127.0.0.1", port)).ok()
        });
        moto
    }

    /// A bus in moto's EventBridge whose every event reaches a queue, read
    /// back with the local API's watcher (as `make dev` does), and the
    /// publisher's view of the bus.
    pub async fn event_bus(
        &self,
        personal: user_service::events::Personal,
    ) -> (user_service::bus::Bus, local_api::events::LocalEvents) {
        let sdk = self.sdk_config();
        let watcher = local_api::events::LocalEvents::set_up(&sdk, EVENT_BUS, EVENT_SOURCE, false)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let bus = user_service::bus::Bus::new(
            aws_sdk_eventbridge::Client::new(&sdk),
            EVENT_BUS,
            EVENT_SOURCE,
            personal,
        );
        (bus, watcher)
    }

    /// An SDK configuration that sends every service to this emulator.
    pub fn sdk_config(&self) -> SdkConfig {
        SdkConfig::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(crate::local_aws::region()))
            .credentials_provider(aws_credential_types::provider::SharedCredentialsProvider::new(
                crate::local_aws::credentials(),
            ))
            .endpoint_url(&self.endpoint)
            .build()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        process::stop_group(&mut self.child, &mut [], Duration::from_secs(10));
    }
}

/// The From address of the tests' mail; verified in moto by `ses_sender`.
pub const SENDER: &str = "no-reply@example.com";
pub const CONFIGURATION_SET: &str = "user-service";

/// One message moto's SES accepted.
#[derive(Debug, Clone)]
pub struct SentMail {
    pub to: Vec<String>,
    pub from: String,
    pub subject: String,
    /// The HTML body (moto keeps one body: the HTML one when both are sent).
    pub body: String,
}

impl SentMail {
    /// The six-digit code in a verification message.
    pub fn code(&self) -> Option<String> {
        code_in(&self.body)
    }

    /// The token in an invitation: the one run of 86 URL-safe base64
    /// characters (a link's fragment, or the token given to paste).
    pub fn invitation_token(&self) -> Option<String> {
        self.body
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .find(|run| run.len() == 86)
            .map(str::to_owned)
    }
}

/// The first run of exactly six digits in a message's text or HTML: its code.
pub fn code_in(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(5)).find_map(|i| {
        let run = &bytes[i..i + 6];
        let bounded = |j: Option<usize>| j.and_then(|j| bytes.get(j)).is_none_or(|b| !b.is_ascii_digit());
        (run.iter().all(u8::is_ascii_digit) && bounded(i.checked_sub(1)) && bounded(Some(i + 6)))
            .then(|| String::from_utf8_lossy(run).into_owned())
    })
}

impl Moto {
    fn sesv2(&self) -> aws_sdk_sesv2::Client {
        aws_sdk_sesv2::Client::new(&self.sdk_config())
    }

    /// An SES sender whose identity and configuration set exist in moto.
    pub async fn ses_sender(&self) -> user_service::mail::SesSender {
        let ses = self.sesv2();
        ses.create_email_identity()
            .email_identity("example.com")
            .send()
            .await
            .unwrap();
        ses.create_configuration_set()
            .configuration_set_name(CONFIGURATION_SET)
            .send()
            .await
            .unwrap();
        self.unverified_ses_sender()
    }

    /// An SES sender whose identity was never verified: SES rejects every message.
    pub fn unverified_ses_sender(&self) -> user_service::mail::SesSender {
        self.sender_from(SENDER)
    }

    /// An SES sender from `from`, through the tests' configuration set.
    pub fn sender_from(&self, from: &str) -> user_service::mail::SesSender {
        user_service::mail::SesSender::new(self.sesv2(), from, CONFIGURATION_SET).unwrap()
    }

    /// Every message SES accepted, oldest first.
    pub async fn sent_mail(&self) -> Vec<SentMail> {
        let data: serde_json::Value = reqwest::get(format!("{}/moto-api/data.json", self.endpoint))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        data["ses"]["Message"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|m| SentMail {
                to: m["destinations"]["ToAddresses"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_owned())
                    .collect(),
                from: m["source"].as_str().unwrap_or_default().to_owned(),
                subject: m["subject"].as_str().unwrap_or_default().to_owned(),
                body: m["body"].as_str().unwrap_or_default().to_owned(),
            })
            .collect()
    }

    /// The messages sent to `address`.
    pub async fn mail_to(&self, address: &str) -> Vec<SentMail> {
        self.sent_mail()
            .await
            .into_iter()
            .filter(|m| m.to.iter().any(|t| t == address))
            .collect()
    }

    /// A user pool whose usernames are the given subs, as the trigger events
    /// name them (no sign-in attribute: the sub is the username).
    pub async fn pool_of_subs(&self, subs: &[&str]) -> (aws_sdk_cognitoidentityprovider::Client, String) {
        let cognito = aws_sdk_cognitoidentityprovider::Client::new(&self.sdk_config());
        let pool = cognito.create_user_pool().pool_name("users").send().await.unwrap();
        let pool_id = pool.user_pool.unwrap().id.unwrap();
        for sub in subs {
            cognito
                .admin_create_user()
                .user_pool_id(&pool_id)
                .username(*sub)
                .send()
                .await
                .unwrap();
        }
        (cognito, pool_id)
    }

    /// A user pool shaped like the template's (users sign in by email), with one
    /// user per address; returns the pool and each user's `sub`, in order.
    pub async fn user_pool(&self, emails: &[&str]) -> (aws_sdk_cognitoidentityprovider::Client, String, Vec<String>) {
        use aws_sdk_cognitoidentityprovider::types::UsernameAttributeType;
        let cognito = aws_sdk_cognitoidentityprovider::Client::new(&self.sdk_config());
        let pool_id = cognito
            .create_user_pool()
            .pool_name("users")
            .username_attributes(UsernameAttributeType::Email)
            .send()
            .await
            .unwrap()
            .user_pool
            .unwrap()
            .id
            .unwrap();
        let subs = add_users(&cognito, &pool_id, emails).await;
        (cognito, pool_id, subs)
    }
}

/// Users added to `pool` (one shaped like the template's), one per address,
/// verified and with no message sent; their `sub`s, in order.
pub async fn add_users(
    cognito: &aws_sdk_cognitoidentityprovider::Client,
    pool_id: &str,
    emails: &[&str],
) -> Vec<String> {
    use aws_sdk_cognitoidentityprovider::types::{AttributeType, MessageActionType};
    let mut subs = Vec::new();
    for email in emails {
        let user = cognito
            .admin_create_user()
            .user_pool_id(pool_id)
            .username(*email)
            .user_attributes(AttributeType::builder().name("email").value(*email).build().unwrap())
            .user_attributes(
                AttributeType::builder()
                    .name("email_verified")
                    .value("true")
                    .build()
                    .unwrap(),
            )
            .message_action(MessageActionType::Suppress)
            .send()
            .await
            .unwrap()
            .user
            .unwrap();
        subs.push(user.username.unwrap());
    }
    subs
}

/// A Cognito user as the tests check it: email, whether it is verified, enabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CognitoUser {
    pub email: Option<String>,
    pub email_verified: bool,
    pub enabled: bool,
}

/// The user `sub` in `pool`, or `None` once Cognito has no such user.
pub async fn cognito_user(
    cognito: &aws_sdk_cognitoidentityprovider::Client,
    pool: &str,
    sub: &str,
) -> Option<CognitoUser> {
    match cognito.admin_get_user().user_pool_id(pool).username(sub).send().await {
        Ok(user) => {
            let attribute = |name: &str| {
                user.user_attributes()
                    .iter()
                    .find(|a| a.name() == name)
                    .and_then(|a| a.value().map(str::to_owned))
            };
            Some(CognitoUser {
                email: attribute("email"),
                email_verified: attribute("email_verified").as_deref() == Some("true"),
                enabled: user.enabled(),
            })
        }
        Err(err) if err.as_service_error().is_some_and(|e| e.is_user_not_found_exception()) => None,
        Err(err) => panic!("AdminGetUser: {err:?}"),
    }
}
