//! The floor of a Rust Lambda function that reads DynamoDB: a client from
//! `aws_config::load_from_env` and one consistent GetItem. The event names the
//! key (`{"key": {"<attribute>": "<string>", …}}`), so the key schema is spelled
//! by the bench, from keys.rs, and not here.
use aws_sdk_dynamodb::types::AttributeValue;
use lambda_runtime::{Error, LambdaEvent, run, service_fn};
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let client = aws_sdk_dynamodb::Client::new(&aws_config::load_from_env().await);
    let table = std::env::var("TABLE_NAME")?;
    let client = &client;
    let table = table.as_str();
    run(service_fn(move |event: LambdaEvent<Value>| async move {
        let key = event.payload["key"]
            .as_object()
            .map(|key| {
                key.iter()
                    .map(|(name, value)| {
                        (
                            name.clone(),
                            AttributeValue::S(value.as_str().unwrap_or_default().to_owned()),
                        )
                    })
                    .collect()
            })
            .ok_or("the event has no key")?;
        let out = client
            .get_item()
            .table_name(table)
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .await?;
        Ok::<_, Error>(json!({ "found": out.item.is_some() }))
    }))
    .await
}
