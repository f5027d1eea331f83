//! What a function initialises once per execution environment.

use crate::catalog::Function;
use crate::clock::Clock;
use crate::config::{ClientTimeouts, ConfigError, StoreConfig};
use crate::identity::UserPool;
use crate::mail::Sender;
use crate::store::{Store, sdk_config};

/// Everything a handler needs, built once at cold start.
#[derive(Debug, Clone)]
pub struct App {
    pub store: Store,
    /// Members of this Cognito group may use the admin routes.
    pub admin_group: String,
    /// Mail delivery, for the functions whose catalog entry sends mail; no
    /// other function builds an SES client.
    pub sender: Option<Sender>,
    /// The time every handler decides by; tests set it.
    pub clock: Clock,
    /// The Cognito user pool, for the functions whose catalog entry calls it.
    pub users: Option<UserPool>,
}

pub const DEFAULT_ADMIN_GROUP: &str = "admin";

impl App {
    pub fn new(store: Store) -> Self {
        Self {
            store,
            admin_group: DEFAULT_ADMIN_GROUP.to_owned(),
            sender: Some(Sender::Log),
            clock: Clock::System,
            users: None,
        }
    }

    /// Tracing, configuration and the SDK clients of `function`, from the
    /// environment.
    pub async fn from_env(function: &Function) -> Result<Self, ConfigError> {
        init_tracing();
        Self::from_lookup(function, |name: &str| std::env::var(name).ok()).await
    }

    /// Configuration and the SDK clients of `function`, from `lookup`. Each
    /// client, and the secret, is set up only where the catalog says the function
    /// uses it: no other function's init pays for it.
    pub async fn from_lookup(
        function: &Function,
        lookup: impl Fn(&str) -> Option<String> + Copy,
    ) -> Result<Self, ConfigError> {
        let config = StoreConfig::from_lookup(lookup)?;
        let timeouts = ClientTimeouts::from_lookup(lookup)?;
        let admin_group = lookup("ADMIN_GROUP")
            .map(|g| g.trim().to_owned())
            .filter(|g| !g.is_empty())
            .unwrap_or_else(|| DEFAULT_ADMIN_GROUP.to_owned());
        let sdk = sdk_config(timeouts).await;
        let mut store = Store::new(aws_sdk_dynamodb::Client::new(&sdk), config);
        if function.reads_verification_key {
            store = store.with_key(crate::secrets::verification_key(lookup, &sdk).await?);
        }
        let sender = if function.sends_email {
            Some(Sender::from_lookup(lookup, &sdk)?)
        } else {
            None
        };
        let users = if function.cognito_actions.is_empty() {
            None
        } else {
            Some(UserPool::from_lookup(lookup, &sdk)?)
        };
        tracing::info!(function = function.name, table = %store.config().table_name, "initialised");
        Ok(Self {
            store,
            admin_group,
            sender,
            clock: Clock::System,
            users,
        })
    }
}

/// JSON lines on stdout (CloudWatch adds nothing but the line), with the
/// current span's fields (request id, sub) on every line. `RUST_LOG` filters.
pub fn init_tracing() {
    let _ = tracing::subscriber::set_global_default(json_subscriber(std::io::stdout));
}

/// The log format, for `init_tracing` and for tests that read what is logged.
pub fn json_subscriber<W>(writer: W) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,aws_smithy_runtime=warn,aws_config=warn,aws_sdk_dynamodb=warn"));
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(true)
        .with_span_list(false)
        .flatten_event(true)
        .with_target(false)
        .with_ansi(false)
        .with_writer(writer)
        .finish()
}
