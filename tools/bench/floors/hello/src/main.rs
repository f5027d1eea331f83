//! The floor of a Rust Lambda function: the runtime and nothing else.
use lambda_runtime::{Error, LambdaEvent, run, service_fn};
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    run(service_fn(|_: LambdaEvent<Value>| async {
        Ok::<_, Error>(json!({ "message": "hello" }))
    }))
    .await
}
