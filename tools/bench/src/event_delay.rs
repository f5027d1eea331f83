//! The domain events' delay on this machine, end to end: a sign-up written to
//! DynamoDB Local; its stream records read by the mapping `make dev` runs
//! (tools/local-api, polling every 200 ms); publish-events' handler,
//! in-process; moto's EventBridge; a rule to moto's SQS; the event received.
//! Each write waits for its event before the next, so no batching hides a
//! delay.

use std::sync::Arc;
use std::time::{Duration, Instant};

use integration_tests::ddb;
use integration_tests::moto::Moto;
use lambda_runtime::{Context, LambdaEvent};
use user_service::App;
use user_service::catalog;
use user_service::events::Personal;

use crate::plan::Plan;
use crate::stats::{Sample, ms};
use crate::user::seed_user;

pub(crate) async fn section(plan: &Plan) -> String {
    let writes = if plan.smoke { 5 } else { 200 };
    let moto = Moto::start();
    let (bus, watcher) = moto.event_bus(Personal::None).await;
    let store = ddb::store().await;
    let table = store.config().table_name.clone();
    let mut app = App::new(store.clone());
    app.bus = Some(bus);
    let app = Arc::new(app);
    let invoke: local_api::mapping::Invoke = {
        let app = app.clone();
        Arc::new(move |_, event| {
            let app = app.clone();
            Box::pin(async move {
                let batch = serde_json::from_value(event).expect("Lambda's DynamoDB event shape");
                let response = user_service::api::events::publish_events::handle(
                    &app,
                    LambdaEvent::new(batch, Context::default()),
                )
                .await
                .expect("the publisher answers");
                Ok(serde_json::to_value(response).expect("a response serialises"))
            })
        })
    };
    let sqs = aws_sdk_sqs::Client::new(&moto.sdk_config());
    let failures = local_api::mapping::FailureQueue {
        url: local_api::events::create_queue(&sqs, "publish-events-failures")
            .await
            .unwrap(),
        client: sqs,
    };
    let mapping =
        local_api::mapping::Mapping::open(&catalog::PUBLISH_EVENTS, &ddb::endpoint(), &table, invoke, failures)
            .await
            .unwrap();
    let running = tokio::spawn(mapping.run());
    let mut delays = Vec::with_capacity(writes);
    for i in 0..writes {
        let sub = format!("00000000-0000-4000-8000-{i:012x}");
        let started = Instant::now();
        seed_user(&store, &sub, &format!("events{i}@example.com")).await;
        // user.created and email.added: the delay is the later one's.
        let mut arrived = 0;
        while arrived < 2 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "sign-up {i}'s events did not arrive within a minute"
            );
            let received = watcher.receive().await;
            arrived += received.iter().filter(|e| e["subject"] == sub.as_str()).count();
            if received.is_empty() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        delays.push(started.elapsed());
    }
    running.abort();
    let sample = Sample::new(delays);
    format!(
        "## Domain events' delay\n\n\
         From a sign-up's write to both its events received from a queue a rule on the bus feeds, \
         {writes} sign-ups one after another, on this machine (DynamoDB Local, the local mapping \
         polling the stream every 200 ms, publish-events in-process, moto's EventBridge and SQS).\n\n\
         | writes | p50 ms | p99 ms | max ms |\n|---|---|---|---|\n| {writes} | {} | {} | {} |\n\n",
        ms(sample.p50()),
        ms(sample.pct(0.99)),
        ms(sample.max()),
    )
}
