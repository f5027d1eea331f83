//! Cognito's triggers' scenarios: a sign-up with a fresh address, its
//! confirmation, the reader's everyday sign-in, and a pending user's first
//! sign-in with the right legacy password. Each event names the world's pool.

use serde_json::{Value, json};
use user_service::catalog::Function;
use user_service::domain::{NewAccount, Timestamp, UserId};

use super::{World, fresh_sub, new_user, no_scenario};

impl World {
    pub(super) async fn trigger_event(&self, f: &Function) -> Value {
        let mut event = self.sample(f.name);
        event["userPoolId"] = json!(self.pool_id);
        match f.name {
            // An address nobody has.
            "pre-sign-up" => {
                event["userName"] = json!(fresh_sub());
                event["request"]["userAttributes"]["email"] = json!(self.names.address("signup"));
                self.issue(f, event)
            }
            // A new user: the profile, the primary and its claim are written.
            "post-confirmation" => {
                signed_in_as(&mut event, &fresh_sub(), &self.names.address("signup"));
                self.issue(f, event)
            }
            // The reader's profile is there and active: the everyday path.
            "post-authentication" => {
                signed_in_as(&mut event, self.reader.user.as_str(), self.reader.email.as_str());
                self.issue(f, event)
            }
            // A fresh pending user: their slot for a password check is theirs alone.
            "migrate-user" => {
                let address = self.names.address("pending");
                let now = Timestamp::now();
                let pending = NewAccount::signed_up(new_user(UserId::new_pending(), &address), now);
                self.store
                    .create_pending_account(&pending, &self.legacy, now)
                    .await
                    .unwrap_or_else(|e| panic!("a pending user: {e}"));
                event["userName"] = json!(address);
                event
            }
            _ => no_scenario(f),
        }
    }

    pub(super) fn trigger_succeeded(&self, f: &Function, answer: &Value) -> bool {
        match f.name {
            // The event, unchanged.
            "pre-sign-up" | "post-confirmation" | "post-authentication" => {
                let key = issued_key(f, answer["userName"].as_str().unwrap_or_default());
                self.issued.lock().expect("the issued events").get(&key) == Some(answer)
            }
            // Handed to Cognito, confirmed, with the address signed in with.
            "migrate-user" => {
                let response = &answer["response"];
                response["finalUserStatus"] == "CONFIRMED"
                    && response["userAttributes"]["email"].is_string()
                    && response["userAttributes"]["email"] == answer["userName"]
            }
            _ => no_scenario(f),
        }
    }

    fn issue(&self, f: &Function, event: Value) -> Value {
        let key = issued_key(f, event["userName"].as_str().unwrap_or_default());
        self.issued
            .lock()
            .expect("the issued events")
            .insert(key, event.clone());
        event
    }
}

fn issued_key(f: &Function, user_name: &str) -> String {
    format!("{} {user_name}", f.name)
}

/// A Cognito event's user: `sub`, with a verified `email`.
fn signed_in_as(event: &mut Value, sub: &str, email: &str) {
    event["userName"] = json!(sub);
    let attributes = &mut event["request"]["userAttributes"];
    attributes["sub"] = json!(sub);
    attributes["email"] = json!(email);
    attributes["cognito:email_alias"] = json!(email);
}
