//! The programs the bench compares: the two Rust floors, Python + boto3 and
//! the functions; the event each gets to read Ada's profile, and whether its
//! answer is the real thing.

use integration_tests::events;
use serde_json::{Value, json};
use user_service::domain::UserId;
use user_service::store::keys;

use crate::user::with_sub;

pub(crate) const FLOOR_HELLO: &str = "floor-hello";
pub(crate) const FLOOR_SDK: &str = "floor-sdk-get-item";
pub(crate) const PYTHON: &str = "python-boto3";
/// get-profile with `DYNAMODB_CONNECT_AT_INIT=true`: init opens the connection.
pub(crate) const GET_PROFILE_AT_INIT: &str = "get-profile, connect at init";

/// The event each program gets for "read ada's profile".
pub(crate) fn profile_event(program: &str, user: &str) -> Value {
    match program {
        FLOOR_HELLO => json!({}),
        FLOOR_SDK | PYTHON => {
            let key = keys::profile_key(&UserId::parse(user).unwrap());
            let key: serde_json::Map<String, Value> =
                key.iter().map(|(k, v)| (k.clone(), json!(v.as_s().unwrap()))).collect();
            json!({ "key": key })
        }
        GET_PROFILE_AT_INIT => with_sub(events::load("get-profile"), user),
        function => with_sub(events::load(function), user),
    }
}

/// Whether a program's answer to the profile event is the real thing.
pub(crate) fn check_answer(program: &str, answer: &Value) -> Result<(), String> {
    let ok = match program {
        FLOOR_HELLO => answer["message"] == "hello",
        FLOOR_SDK | PYTHON => answer["found"] == true,
        _ => answer["statusCode"] == 200,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{program}: unexpected answer {answer}"))
    }
}
