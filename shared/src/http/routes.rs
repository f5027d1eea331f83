//! Each route's request read into domain values, before any store call. Kept
//! apart from the handlers (which need AWS) so the fuzz targets (fuzz/) run the
//! very parsing the functions run, without building the SDKs.

use lambda_http::Request;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use super::problem::Problem;
use super::request::{email_id_param, if_match, json_body, path_param};
use crate::domain::{EmailAddress, EmailId, IfMatch, PersonName, Phone, ProfilePatch, UserId, UserStatus};
use crate::verification::VerificationCode;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddEmail {
    email: EmailAddress,
}

/// `POST /me/emails`: the address to add.
pub fn add_email(req: &Request) -> Result<EmailAddress, Problem> {
    let AddEmail { email } = json_body(req)?;
    Ok(email)
}

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

/// `PATCH /me`: the `If-Match` precondition and a patch that changes something.
pub fn update_profile(req: &Request) -> Result<(IfMatch, ProfilePatch), Problem> {
    let version = if_match(req)?;
    let body: UpdateProfile = json_body(req)?;
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Verify {
    code: VerificationCode,
}

/// `POST /me/emails/{emailId}/verify`: the address record and the code.
pub fn verify_email(req: &Request) -> Result<(EmailId, VerificationCode), Problem> {
    let email_id = email_id_param(req)?;
    let Verify { code } = json_body(req)?;
    Ok((email_id, code))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SetPrimary {
    email_id: EmailId,
}

/// `PUT /me/primary-email`: the verified address to make primary.
pub fn set_primary_email(req: &Request) -> Result<EmailId, Problem> {
    let SetPrimary { email_id } = json_body(req)?;
    Ok(email_id)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetStatus {
    status: UserStatus,
}

/// `PUT /admin/users/{userId}/status`: the user and the new status.
pub fn set_user_status(req: &Request) -> Result<(UserId, UserStatus), Problem> {
    let user = path_param(req, "userId", UserId::parse)?;
    let SetStatus { status } = json_body(req)?;
    Ok((user, status))
}

/// `GET /admin/user-list`: the status filter, the page size and where the page starts.
pub fn list_users(req: &Request) -> Result<super::list_query::ListQuery, Problem> {
    super::list_query::list_query(req)
}
