//! Invoking a function through cargo lambda watch's Lambda invoke endpoint.

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum InvokeError {
    #[error("the invoke endpoint could not be reached")]
    Transport(#[from] reqwest::Error),
    /// The function returned an error (a Cognito trigger refusing, say).
    #[error("{error_type}: {message}")]
    Function { error_type: String, message: String },
}

#[derive(Debug, Clone)]
pub struct Lambda {
    client: reqwest::Client,
    base: String,
}

impl Lambda {
    pub fn new(port: u16) -> Self {
        Self {
            client: reqwest::Client::new(),
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    pub async fn invoke(&self, function: &str, event: &impl Serialize) -> Result<Value, InvokeError> {
        let response = self
            .client
            .post(format!("{}/2015-03-31/functions/{function}/invocations", self.base))
            .json(event)
            .send()
            .await?;
        let failed = response.headers().contains_key("x-amz-function-error") || !response.status().is_success();
        let payload: Value = response.json().await?;
        if failed {
            return Err(InvokeError::Function {
                error_type: payload["errorType"].as_str().unwrap_or("Unhandled").to_owned(),
                message: payload["errorMessage"].as_str().unwrap_or_default().to_owned(),
            });
        }
        Ok(payload)
    }
}
