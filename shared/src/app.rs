//! What a function initialises once per execution environment.

use crate::bus::Bus;
use crate::catalog::Function;
use crate::clock::Clock;
use crate::config::{ClientTimeouts, ConfigError, ReconcileConfig, StoreConfig};
use crate::identity::UserPool;
use crate::mail::Sender;
use crate::metrics::Emf;
use crate::store::{Store, lambda_sdk_config};
use crate::verification_key::VerificationKey;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use aws_config::SdkConfig;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;

/// Everything a handler needs, built once at cold start.
#[derive(Debug, Clone)]
pub struct App {
    /// The table, through which every read and write goes.
    pub store: Store,
    /// Members of this Cognito group may use the admin routes.
    pub admin_group: String,
    /// How recent a sign-in the changes that can hand over an account need
    /// (`REAUTHENTICATION_WINDOW_SECONDS`); read only by the functions that make them.
    pub reauthentication_window: Duration,
    /// Mail delivery, for the functions whose catalog entry sends mail; no
    /// other function builds an SES client.
    pub sender: Option<Sender>,
    /// The page a recovery link opens (`ADDRESS_RECOVERY_URL`), for the
    /// functions that send mail; without it a notice goes without a link.
    pub recovery_page: Option<String>,
    /// The page an invitation's link opens (`INVITATION_URL`), for the
    /// functions that send mail; without it the mail gives the token to paste.
    pub invitation_page: Option<String>,
    /// The time every handler decides by; tests set it.
    pub clock: Clock,
    /// The Cognito user pool, for the functions whose catalog entry calls it.
    pub users: Option<UserPool>,
    /// How the reconcile runs its pass (the defaults elsewhere).
    pub reconcile: ReconcileConfig,
    /// The event bus, for the function whose catalog entry publishes events.
    pub bus: Option<Bus>,
    /// The business metrics' recorder, flushed after every invocation
    /// ([`App::metered`]); `None` where none is installed (tests, tools), and
    /// counting does nothing.
    pub metrics: Option<Emf>,
    /// How long Cognito waits for a trigger ([`COGNITO_WAITS`]): a trigger's
    /// work, retries included, stops in time to answer within it. Tests whose
    /// subject is not that wait give their set-up longer, so that a loaded
    /// machine's emulator cannot fail it.
    pub trigger_wait: Duration,
}

/// Cognito waits this long for a trigger, whatever the function's timeout.
pub const COGNITO_WAITS: Duration = Duration::from_secs(5);

/// The admin group when `ADMIN_GROUP` is unset.
pub const DEFAULT_ADMIN_GROUP: &str = crate::config::ADMIN_GROUP.default_str();

/// How recent a sign-in must be when `REAUTHENTICATION_WINDOW_SECONDS` is unset.
pub const DEFAULT_REAUTHENTICATION_WINDOW: Duration =
    Duration::from_secs(crate::config::REAUTHENTICATION_WINDOW_SECONDS.default_number() as u64);

impl App {
    /// An app on `store` with the defaults tests start from: log sender, system clock, no Cognito, no metrics.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            admin_group: DEFAULT_ADMIN_GROUP.to_owned(),
            reauthentication_window: DEFAULT_REAUTHENTICATION_WINDOW,
            sender: Some(Sender::Log),
            recovery_page: None,
            invitation_page: None,
            clock: Clock::System,
            users: None,
            reconcile: ReconcileConfig::default(),
            bus: None,
            metrics: None,
            trigger_wait: COGNITO_WAITS,
        }
    }

    /// Tracing, configuration and the SDK clients a function's catalog entry
    /// names, from the environment. `main` passes
    /// `const { Clients::of(&catalog::NAME) }`: see [`Clients`].
    pub async fn from_env(clients: Clients) -> Result<Self, ConfigError> {
        init_tracing();
        let lookup = |name: &str| std::env::var(name).ok();
        let metrics = Emf::from_lookup(lookup, clients.function.name);
        let app = Self::with_clients(clients, &lookup).await?;
        Ok(Self { metrics, ..app })
    }

    /// One invocation: `handler` on `event`, then the metrics it counted
    /// written as one EMF document, before the answer goes back to Lambda,
    /// whatever the outcome. `main` runs every handler through it:
    /// `run(service_fn(|req| app.metered(add_email::handle, req)))`.
    pub async fn metered<'a, E, F: Future>(&'a self, handler: impl FnOnce(&'a App, E) -> F, event: E) -> F::Output {
        let outcome = handler(self, event).await;
        if let Some(metrics) = &self.metrics {
            metrics.flush();
        }
        outcome
    }

    /// Configuration and the SDK clients of `function`, from `lookup`. Each
    /// client, and the secret, is set up only where the catalog says the function
    /// uses it: no other function's init pays for it.
    pub async fn from_lookup(
        function: &'static Function,
        lookup: impl Fn(&str) -> Option<String> + Copy + Sync,
    ) -> Result<Self, ConfigError> {
        Self::with_clients(Clients::of(function), &lookup).await
    }

    async fn with_clients(clients: Clients, lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let function = clients.function;
        let config = StoreConfig::from_lookup(lookup)?;
        let timeouts = ClientTimeouts::from_lookup(lookup)?;
        let admin_group = crate::config::optional(lookup, crate::config::ADMIN_GROUP)
            .unwrap_or_else(|| DEFAULT_ADMIN_GROUP.to_owned());
        let reauthentication_window = if function.needs_recent_sign_in {
            crate::config::seconds(lookup, crate::config::REAUTHENTICATION_WINDOW_SECONDS)?
        } else {
            DEFAULT_REAUTHENTICATION_WINDOW
        };
        let sdk = lambda_sdk_config(timeouts).await;
        let policy = crate::address_policy::AddressPolicy::from_lookup(lookup)?;
        let mut store = Store::new(aws_sdk_dynamodb::Client::new(&sdk), config).with_policy(policy);
        if open_at_init(lookup) {
            store.open_connection(function.dynamodb_actions).await;
        }
        if let Some(key) = clients.key {
            store = store.with_key(key(lookup, &sdk).await?);
        }
        let sender = clients.sender.map(|sender| sender(lookup, &sdk)).transpose()?;
        let recovery_page = sender
            .is_some()
            .then(|| crate::config::optional(lookup, crate::config::ADDRESS_RECOVERY_URL))
            .flatten()
            .filter(|page| !page.trim().is_empty());
        let invitation_page = sender
            .is_some()
            .then(|| crate::config::optional(lookup, crate::config::INVITATION_URL))
            .flatten()
            .filter(|page| !page.trim().is_empty());
        let users = clients.users.map(|users| users(lookup, &sdk)).transpose()?;
        let bus = clients.bus.map(|bus| bus(lookup, &sdk)).transpose()?;
        let reconcile = if function.runs_the_reconcile() {
            ReconcileConfig::from_lookup(lookup)?
        } else {
            ReconcileConfig::default()
        };
        tracing::info!(function = function.name, table = %store.config().table_name, "initialised");
        Ok(Self {
            store,
            admin_group,
            reauthentication_window,
            sender,
            recovery_page,
            invitation_page,
            clock: Clock::System,
            users,
            reconcile,
            bus,
            metrics: None,
            trigger_wait: COGNITO_WAITS,
        })
    }
}

fn open_at_init(lookup: Lookup<'_>) -> bool {
    crate::config::flag(lookup, crate::config::DYNAMODB_CONNECT_AT_INIT)
}

type Lookup<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);
type Init<T> = fn(Lookup<'_>, &SdkConfig) -> Result<T, ConfigError>;
type KeyFuture<'a> = Pin<Box<dyn Future<Output = Result<VerificationKey, ConfigError>> + Send + 'a>>;

/// The clients a function sets up beside DynamoDB, chosen from its catalog entry
/// at compile time. Each constructor is referenced only where the entry says the
/// function uses it, so a binary links only the SDKs it calls: get-profile
/// carries no SES, Cognito or Secrets Manager client (`make bench` measured
/// what that saves). `main` evaluates it in a `const` block.
#[derive(Clone, Copy)]
pub struct Clients {
    function: &'static Function,
    key: Option<for<'a> fn(Lookup<'a>, &'a SdkConfig) -> KeyFuture<'a>>,
    sender: Option<Init<Sender>>,
    users: Option<Init<UserPool>>,
    bus: Option<Init<Bus>>,
}

impl Clients {
    /// The clients `function`'s catalog entry calls for; `const`, so the others are never linked.
    pub const fn of(function: &'static Function) -> Self {
        Self {
            function,
            key: if function.reads_verification_key {
                Some(verification_key)
            } else {
                None
            },
            sender: if function.sends_email { Some(sender) } else { None },
            users: if function.cognito_actions.is_empty() {
                None
            } else if function.is_cognito_trigger() {
                Some(event_user_pool)
            } else {
                Some(user_pool)
            },
            bus: if function.publishes_events { Some(bus) } else { None },
        }
    }
}

fn verification_key<'a>(lookup: Lookup<'a>, sdk: &'a SdkConfig) -> KeyFuture<'a> {
    Box::pin(crate::secrets::verification_key(lookup, sdk))
}

fn sender(lookup: Lookup<'_>, sdk: &SdkConfig) -> Result<Sender, ConfigError> {
    Sender::from_lookup(lookup, sdk)
}

fn bus(lookup: Lookup<'_>, sdk: &SdkConfig) -> Result<Bus, ConfigError> {
    Bus::from_lookup(lookup, sdk)
}

fn user_pool(lookup: Lookup<'_>, sdk: &SdkConfig) -> Result<UserPool, ConfigError> {
    UserPool::from_lookup(lookup, sdk)
}

fn event_user_pool(_: Lookup<'_>, sdk: &SdkConfig) -> Result<UserPool, ConfigError> {
    Ok(UserPool::from_events(aws_sdk_cognitoidentityprovider::Client::new(sdk)))
}

/// Logs on stdout as the platform asks: Lambda sets `AWS_LAMBDA_LOG_FORMAT`
/// and `AWS_LAMBDA_LOG_LEVEL` from the function's LoggingConfig (LogFormat,
/// ApplicationLogLevel), so the template controls them. `RUST_LOG`, when set,
/// is a full filter for local runs and wins. The current span's fields
/// (request id, sub) are on every line.
pub fn init_tracing() {
    let settings = LogSettings::from_lookup(|name| std::env::var(name).ok());
    let subscriber: Box<dyn tracing::Subscriber + Send + Sync> = if settings.json {
        Box::new(json_subscriber_with(settings.filter, std::io::stdout))
    } else {
        Box::new(text_subscriber(settings.filter, std::io::stdout))
    };
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// The log filter and format, read from the environment once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    /// What is logged, as `level` and `target=level` directives (RUST_LOG's syntax).
    pub filter: String,
    /// Whether lines are JSON (the default) rather than text.
    pub json: bool,
}

impl LogSettings {
    /// The platform's log level and format from `lookup`; a non-empty `RUST_LOG` replaces the filter.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        // The platform's names (TRACE … FATAL); FATAL has no tracing level.
        let level = match lookup(crate::config::AWS_LAMBDA_LOG_LEVEL.name())
            .unwrap_or_default()
            .to_ascii_uppercase()
            .as_str()
        {
            "TRACE" => "trace",
            "DEBUG" => "debug",
            "WARN" => "warn",
            "ERROR" | "FATAL" => "error",
            _ => "info",
        };
        // DEBUG and TRACE are for the service's own code: what the
        // dependencies log at those levels (the SDK's requests and responses,
        // the runtime's events) holds request bodies, which hold personal
        // data. They stay at INFO, and the SDK's own lines, noise below WARN,
        // at WARN. A RUST_LOG set by hand overrides all of it.
        let own = env!("CARGO_CRATE_NAME");
        let sdk = if matches!(level, "warn" | "error") {
            level
        } else {
            "warn"
        };
        let base = if matches!(level, "debug" | "trace") {
            format!("info,{own}={level}")
        } else {
            level.to_owned()
        };
        // The audit trail is kept at every level: WARN or ERROR must not
        // silence who did what as an admin.
        let filter = lookup(crate::config::RUST_LOG.name())
            .filter(|f| !f.trim().is_empty())
            .unwrap_or_else(|| {
                format!(
                    "{base},aws_smithy_runtime={sdk},aws_config={sdk},aws_sdk_dynamodb={sdk},{}=info",
                    crate::audit::TARGET
                )
            });
        // JSON unless the platform says Text: CloudWatch's filters read fields.
        let json = !lookup(crate::config::AWS_LAMBDA_LOG_FORMAT.name()).is_some_and(|f| f.eq_ignore_ascii_case("text"));
        Self { filter, json }
    }
}

/// The JSON format at level INFO, for tests that read what is logged.
pub fn json_subscriber<W>(writer: W) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    json_subscriber_with(LogSettings::from_lookup(|_| None).filter, writer)
}

fn json_subscriber_with<W>(filter: String, writer: W) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    // fmt's own ceiling is INFO unless raised: the filter below decides.
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .json()
        .with_current_span(true)
        .with_span_list(false)
        .flatten_event(true)
        .with_target(false)
        .with_ansi(false)
        .with_writer(writer)
        .finish()
        .with(targets(&filter))
}

/// The filter: `level` and `target=level` directives, as RUST_LOG spells them.
/// `Targets` rather than `EnvFilter`: no regular-expression engine in every
/// binary (`make bench` measured the size), and span or field directives are
/// not needed here. A filter that does not parse logs at INFO.
fn targets(filter: &str) -> Targets {
    filter
        .parse()
        .unwrap_or_else(|_| Targets::new().with_default(tracing::Level::INFO))
}

fn text_subscriber<W>(filter: String, writer: W) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_target(false)
        .with_ansi(false)
        .with_writer(writer)
        .finish()
        .with(targets(&filter))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a subscriber at `level` prints of a DEBUG line of the service's
    /// own code and one of a dependency's.
    fn printed_at(level: &str) -> String {
        let buffer = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let sink = std::sync::Arc::clone(&buffer);
        let writer = move || SharedBuffer(std::sync::Arc::clone(&sink));
        let filter = settings(&[("AWS_LAMBDA_LOG_LEVEL", level)]).filter;
        tracing::subscriber::with_default(json_subscriber_with(filter, writer), || {
            tracing::debug!(target: "user_service::store", "own line");
            tracing::debug!(target: "aws_smithy_runtime::client", "sdk line");
            tracing::debug!(target: "hyper_util::client", "http line");
            tracing::info!(target: "lambda_runtime", "runtime line");
        });
        let bytes = buffer.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct SharedBuffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for SharedBuffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn debug_reaches_the_services_own_lines_and_no_dependencys() {
        // Before, fmt's own ceiling (INFO) dropped every DEBUG line whatever LogLevel said.
        let debug = printed_at("DEBUG");
        assert!(debug.contains("own line") && debug.contains("runtime line"), "{debug}");
        assert!(!debug.contains("sdk line") && !debug.contains("http line"), "{debug}");
        let info = printed_at("INFO");
        assert!(!info.contains("own line") && info.contains("runtime line"), "{info}");
    }

    fn settings(vars: &[(&str, &str)]) -> LogSettings {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        LogSettings::from_lookup(move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn the_platform_sets_level_and_format() {
        let s = settings(&[("AWS_LAMBDA_LOG_LEVEL", "DEBUG"), ("AWS_LAMBDA_LOG_FORMAT", "JSON")]);
        // DEBUG reaches the service's own code; dependencies stay at INFO.
        assert!(s.filter.starts_with("info,user_service=debug,"), "{}", s.filter);
        assert!(s.filter.contains("aws_smithy_runtime=warn"));
        let s = settings(&[("AWS_LAMBDA_LOG_LEVEL", "TRACE")]);
        assert!(s.filter.starts_with("info,user_service=trace,"), "{}", s.filter);
        assert!(s.json);
        let s = settings(&[("AWS_LAMBDA_LOG_LEVEL", "ERROR"), ("AWS_LAMBDA_LOG_FORMAT", "Text")]);
        assert!(
            s.filter.starts_with("error,") && s.filter.contains("aws_config=error"),
            "{}",
            s.filter
        );
        assert!(!s.json);
        assert!(
            settings(&[("AWS_LAMBDA_LOG_LEVEL", "FATAL")])
                .filter
                .starts_with("error,")
        );
    }

    #[test]
    fn the_audit_trail_is_kept_at_every_level() {
        for level in ["WARN", "ERROR", "FATAL", "INFO", "DEBUG"] {
            let filter = settings(&[("AWS_LAMBDA_LOG_LEVEL", level)]).filter;
            assert!(filter.ends_with(",audit=info"), "{level}: {filter}");
            // And a line on that target is printed under it, beside a dropped INFO line.
            let buffer = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
            let sink = std::sync::Arc::clone(&buffer);
            let writer = move || SharedBuffer(std::sync::Arc::clone(&sink));
            tracing::subscriber::with_default(json_subscriber_with(filter, writer), || {
                tracing::info!(target: crate::audit::TARGET, "an admin action");
                tracing::info!(target: "user_service::other", "an info line");
            });
            let printed = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
            assert!(printed.contains("an admin action"), "{level}: {printed}");
            assert_eq!(
                printed.contains("an info line"),
                matches!(level, "INFO" | "DEBUG"),
                "{level}"
            );
        }
    }

    #[test]
    fn without_the_platform_it_is_json_at_info_and_rust_log_wins() {
        let s = settings(&[]);
        assert!(s.filter.starts_with("info,") && s.json, "{s:?}");
        let s = settings(&[("AWS_LAMBDA_LOG_LEVEL", "DEBUG"), ("RUST_LOG", "warn")]);
        assert_eq!(s.filter, "warn");
    }
}
