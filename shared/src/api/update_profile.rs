use std::convert::Infallible;

use lambda_http::{Body, Request, Response};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use crate::app::App;
use crate::catalog::UPDATE_PROFILE;
use crate::domain::{PersonName, Phone, ProfilePatch};
use crate::http::request::{if_match_version, json_body};
use crate::http::{Caller, Failure, Problem, response, serve};

/// `PATCH /me` body. A field left out stays; `phone: null` removes the phone.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateProfile {
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

pub async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    serve(app, req, UPDATE_PROFILE.access(), |caller, req| run(app, caller, req)).await
}

async fn run(app: &App, caller: Caller, req: Request) -> Result<Response<Body>, Failure> {
    let version = if_match_version(&req)?;
    let body: UpdateProfile = json_body(&req)?;
    let patch = ProfilePatch {
        first_name: name("firstName", body.first_name)?,
        last_name: name("lastName", body.last_name)?,
        phone: body.phone,
    };
    if patch.is_empty() {
        return Err(Problem::validation("body", "change at least one of firstName, lastName, phone").into());
    }
    let profile = app
        .store
        .update_profile(&caller.user_id, version, &patch, app.clock.now())
        .await?;
    response::profile(&profile)
}
