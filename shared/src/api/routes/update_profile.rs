//! PATCH /me: the caller changes their names or phone, under If-Match.

use lambda_http::Request;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use super::{Example, Reads};
use crate::catalog;
use crate::domain::{IfMatch, PersonName, Phone, ProfilePatch};
use crate::http::Problem;
use crate::http::request::{if_match, json_body};

route! {
    /// PATCH /me.
    UpdateProfile: catalog::UPDATE_PROFILE,
    parse,
    reads: Reads {
        json_body: true,
        if_match: true,
        ..Reads::CALLER
    },
    example: Example {
        body: Some(r#"{"firstName": "Vic"}"#),
        if_match: true,
        ..Example::bare(200)
    },
    refusals: [
        crate::StoreError::NotFound,
        crate::StoreError::AccountInactive,
        crate::StoreError::VersionMismatch { current: 2 },
        crate::StoreError::NothingToMatch,
    ],
}

/// The body. A field left out stays; `phone: null` removes the phone.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Payload {
    #[serde(default, deserialize_with = "present")]
    first_name: Option<Option<PersonName>>,
    #[serde(default, deserialize_with = "present")]
    last_name: Option<Option<PersonName>>,
    #[serde(default, deserialize_with = "present")]
    phone: Option<Option<Phone>>,
}

/// Tells `"field": null` (Some(None)) from a missing field (None).
fn present<'de, D: Deserializer<'de>, T: DeserializeOwned>(de: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(de).map(Some)
}

/// A name may change but not be removed: a profile always has both.
fn name(field_name: &str, value: Option<Option<PersonName>>) -> Result<Option<PersonName>, Problem> {
    match value {
        Some(None) => Err(Problem::validation(field_name, "cannot be null")),
        Some(Some(name)) => Ok(Some(name)),
        None => Ok(None),
    }
}

/// The `If-Match` precondition and a patch that changes something.
pub fn parse(req: &Request) -> Result<(IfMatch, ProfilePatch), Problem> {
    let version = if_match(req)?;
    let body: Payload = json_body(req)?;
    let patch = ProfilePatch {
        first_name: name("firstName", body.first_name)?,
        last_name: name("lastName", body.last_name)?,
        phone: body.phone,
    };
    if patch.is_empty() {
        return Err(Problem::validation(
            "body",
            "change at least one of firstName, lastName, phone",
        ));
    }
    Ok((version, patch))
}

#[cfg(fuzzing)]
fn admitted(req: &Request, (precondition, patch): &(IfMatch, ProfilePatch)) {
    use serde_json::Value;
    if let IfMatch::Versions(versions) = precondition {
        assert!(versions.iter().all(|v| *v > 0));
    }
    assert!(!patch.is_empty(), "an empty patch was admitted");
    let body = super::fuzzing::body_json(req);
    super::fuzzing::same_name(&body, "firstName", patch.first_name.as_ref());
    super::fuzzing::same_name(&body, "lastName", patch.last_name.as_ref());
    match (&patch.phone, body.get("phone")) {
        (None, None) | (Some(None), Some(Value::Null)) => {}
        (Some(Some(phone)), Some(Value::String(raw))) => assert_eq!(Phone::parse(raw).as_ref(), Ok(phone)),
        (p, raw) => panic!("phone {p:?} from {raw:?}"),
    }
}

#[cfg(feature = "aws")]
pub use handler::handle;

#[cfg(feature = "aws")]
mod handler {
    use std::convert::Infallible;

    use lambda_http::{Body, Request, Response};

    use crate::app::App;
    use crate::catalog::UPDATE_PROFILE;
    use crate::http::lambda::serve;
    use crate::http::{Caller, Failure, response};

    /// The Lambda entry point of PATCH /me: the updated profile with its new ETag.
    pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
        serve(app, req, &UPDATE_PROFILE, |caller, req| run(app, caller, req)).await
    }

    async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
        let (precondition, patch) = super::parse(&req)?;
        let profile = app
            .store
            .update_profile(&caller.user_id, &precondition, &patch, app.clock.now())
            .await?;
        response::profile(&profile)
    }
}
