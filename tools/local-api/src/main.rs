//! `local-api`: the HTTP API on 127.0.0.1 for local development (see `make dev`).
// A command-line tool: its banner goes to stdout.
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use local_api::auth::{AUDIENCE, DevKey};
use local_api::invoke::Lambda;
use local_api::routes::Routes;
use local_api::server::router;
use local_api::state::AppState;
use user_service::Store;
use user_service::config::{ClientTimeouts, StoreConfig};
use user_service::store::{dynamodb_client, schema};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Fixed, so tokens stay valid when the port changes.
const ISSUER: &str = "http://127.0.0.1/local-cognito";

/// The HTTP API on 127.0.0.1 for local development (`make dev` starts it).
#[derive(Debug, clap::Parser)]
struct Args {
    /// The port of the HTTP API.
    #[arg(long, env = "LOCAL_API_PORT", default_value_t = 3000)]
    port: u16,
    /// The port of `cargo lambda watch`'s invoke endpoint.
    #[arg(long, env = "LAMBDA_PORT", default_value_t = 9000)]
    lambda_port: u16,
    /// The SAM template the routes come from.
    #[arg(long, default_value = "template.yaml")]
    template: PathBuf,
    /// Where the development key and the local user pool are kept.
    #[arg(long, default_value = ".local")]
    state_dir: PathBuf,
    /// The bus publish-events puts events on, in moto's EventBridge
    /// (AWS_ENDPOINT_URL_EVENTBRIDGE); `GET /local/events` shows them.
    #[arg(long, env = "EVENT_BUS_NAME", default_value = "user-service-local-events")]
    event_bus: String,
    /// The events' source.
    #[arg(long, env = "EVENT_SOURCE", default_value = "urn:user-service:local")]
    event_source: String,
    /// The table stream's consumers to run, as Lambda's event source mappings
    /// would (comma-separated function names); every one the catalog lists
    /// when not given, none with an empty value.
    #[arg(long, value_delimiter = ',')]
    stream_consumers: Option<Vec<String>>,
    /// The user pool in moto's Cognito (AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER)
    /// the local pool is mirrored into, for what calls Cognito; `make dev` makes it.
    #[arg(long, env = "USER_POOL_ID", default_value = "local_UserPool")]
    user_pool_id: String,
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    tracing_subscriber::fmt()
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();
    let Args {
        port,
        lambda_port,
        template,
        state_dir,
        event_bus,
        event_source,
        stream_consumers,
        user_pool_id,
    } = clap::Parser::parse();

    let routes = Routes::from_template(&local_api::template::load(&template)?);
    let issuer = ISSUER.to_owned();
    let key = DevKey::load_or_create(&state_dir.join("dev-jwt.key"), issuer.clone())?;
    let config = StoreConfig::from_env()?;
    let timeouts = ClientTimeouts::from_lookup(|k| std::env::var(k).ok())?;
    let sdk = user_service::store::sdk_config(timeouts).await;
    let client = dynamodb_client(timeouts).await;
    if schema::ensure_table(&client, &config.table_name).await? {
        tracing::info!(table = %config.table_name, "created the table");
    }
    let store = Store::new(client, config.clone());
    // Local only: every AWS service but DynamoDB is moto's, on this machine;
    // nothing here may create a bus or queues in a real account, and the outbox
    // reads moto's SES alone.
    for service in ["EVENTBRIDGE", "SQS", "COGNITO_IDENTITY_PROVIDER", "SESV2"] {
        let name = format!("AWS_ENDPOINT_URL_{service}");
        let endpoint = std::env::var(&name).unwrap_or_default();
        if !(endpoint.starts_with("http://127.0.0.1:") || endpoint.starts_with("http://localhost:")) {
            return Err(format!("{name} must name moto on 127.0.0.1 (make dev sets it), not {endpoint:?}").into());
        }
    }
    let pool = Arc::new(local_api::pool::Pool::load(state_dir.join("cognito-users.json"))?);
    let shared_pool = pool.clone();
    // Every user of the local pool exists in the mirror (moto forgets it when
    // it stops), before the stream's consumers start: the Cognito sync
    // applies the stream's history to it.
    let mirror = local_api::mirror::Mirror::new(&sdk, &user_pool_id);
    for user in pool.all().await {
        mirror.put(&user).await?;
    }
    // A directory's accounts are made in Cognito by address; the template's
    // pool names them by `sub`, which every later call uses: so does the mirror, soon after.
    tokio::spawn(local_api::mirror::adopt_strays(mirror.clone(), shared_pool.clone()));
    let events = Arc::new(local_api::events::LocalEvents::set_up(&sdk, &event_bus, &event_source, true).await?);
    let ddb_endpoint =
        std::env::var("AWS_ENDPOINT_URL_DYNAMODB").unwrap_or_else(|_| "http://127.0.0.1:8000".to_owned());
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    let stream_consumers = stream_consumers.unwrap_or_else(|| {
        user_service::catalog::FUNCTIONS
            .iter()
            .filter(|f| matches!(f.trigger, user_service::catalog::Trigger::TableStream { .. }))
            .map(|f| f.name.to_owned())
            .collect()
    });
    for name in stream_consumers.iter().filter(|n| !n.is_empty()) {
        let function = user_service::catalog::by_name(name).ok_or_else(|| format!("no function {name}"))?;
        let failures = local_api::mapping::FailureQueue {
            client: sqs.clone(),
            url: local_api::events::create_queue(&sqs, &format!("{name}-failures")).await?,
        };
        let mapping = local_api::mapping::Mapping::open(
            function,
            &ddb_endpoint,
            &config.table_name,
            Lambda::new(lambda_port).invoker(),
            failures,
        )
        .await?;
        tokio::spawn(mapping.run());
    }
    tokio::spawn({
        let events = events.clone();
        async move { events.run().await }
    });
    // The mail the functions send through moto's SES, stamped as it appears.
    let outbox = Arc::new(local_api::outbox::Outbox::new(
        &std::env::var("AWS_ENDPOINT_URL_SESV2").unwrap_or_default(),
    ));
    tokio::spawn({
        let outbox = outbox.clone();
        async move { outbox.run().await }
    });

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("local API on http://127.0.0.1:{port} (issuer {issuer}, audience {AUDIENCE})");
    println!("  GET  /               the settings page, the reference client (tools/local-api/page/)");
    for route in routes.all() {
        println!("  {:<40} -> {}", route.key(), route.function);
    }
    println!("  POST /local/sign-up  {{email}} -> {{sub, token}}");
    println!(
        "  POST /local/token    {{email, groups?, signedInSecondsAgo?}} -> {{sub, token}} (a sign-in: runs the PostAuthentication trigger)"
    );
    println!("  POST /local/admin-create-user   {{email, emailVerified, givenName?, familyName?}} -> {{sub}}");
    println!("  POST /local/admin-verify-email  {{email}}");
    println!("  GET  /local/events   the domain events so far (every one is also printed here, as it comes)");
    println!(
        "  GET  /local/outbox   the mail the functions sent through moto's SES, newest first (?to=<address>; a page in a browser)"
    );
    println!(
        "  GET  {}  the contract (openapi.yaml), no token",
        local_api::openapi::PATH
    );
    let shared = Arc::new(AppState {
        routes,
        key,
        lambda: Lambda::new(lambda_port),
        store,
        pool,
        user_pool_id,
        mirror: Some(mirror),
        events,
        outbox,
    });
    axum::serve(
        listener,
        router(shared).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}
