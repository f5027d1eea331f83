//! The SCIM routes' scenarios: the sample request of events/, with a live
//! token of a fresh organization whose domain is verified, and a member its
//! directory linked where the route names one.

use serde_json::{Value, json};
use user_service::catalog::Function;
use user_service::domain::{Actor, EmailAddress, ScimTokenName, Timestamp};
use user_service::scim::ScimUser;
use user_service::store::{ScimClient, ScimMember};

use super::http::{set_body, set_path};
use super::{World, no_scenario};

/// The User the samples name in their paths.
const SAMPLE_USER: &str = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";

/// The status of each SCIM route's success.
pub(super) fn success(f: &Function) -> u16 {
    match f.name {
        "scim-create-user" => 201,
        "scim-delete-user" => 204,
        _ => 200,
    }
}

impl World {
    pub(super) async fn scim_event(&self, f: &Function) -> Value {
        let (owner, org, domain, _) = self.domain(true).await;
        let actor = Actor::Member(owner.user.clone());
        let name = ScimTokenName::parse("Okta").expect("a name");
        let made = self
            .store
            .create_scim_token(&actor, org, &name, Timestamp::now())
            .await
            .unwrap_or_else(|e| panic!("a SCIM token: {e}"));
        let client = ScimClient {
            org,
            token: made.info.token_id,
        };
        let mut event = self.sample(f.name);
        event["headers"]["authorization"] = json!(format!("Bearer {}", made.token.encode()));
        let local = format!("u{}", self.names.slug());
        let address = format!("{local}@{domain}");
        let user = json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "userName": address,
            "externalId": local,
            "name": { "givenName": "Grace", "familyName": "Hopper" },
            "emails": [{ "value": address, "type": "work", "primary": true }],
            "active": true,
        });
        match f.name {
            "scim-discovery" | "scim-list-users" => {}
            // A new account at the verified domain.
            "scim-create-user" => set_body(&mut event, &user),
            // A member the directory linked: an account with its own verified address there.
            "scim-get-user" | "scim-replace-user" | "scim-patch-user" | "scim-delete-user" => {
                let member = self.linked(&client, &address, &user).await;
                set_path(&mut event, SAMPLE_USER, member.id.as_str());
                if f.name == "scim-replace-user" {
                    // Okta's update: the User as read, sent back whole.
                    set_body(&mut event, &Value::Object(member.user.attributes()));
                }
            }
            _ => no_scenario(f),
        }
        event
    }

    /// A fresh account holding `address` verified, linked by the directory as `user`.
    async fn linked(&self, client: &ScimClient, address: &str, user: &Value) -> ScimMember {
        let account = self.account(false).await;
        let address = EmailAddress::parse(address).expect("an address");
        self.verified(&account.user, &address).await;
        let scim = ScimUser::from_json(user).expect("a User");
        self.store
            .scim_link(client, &account.user, &scim, &address, Timestamp::now())
            .await
            .unwrap_or_else(|e| panic!("a linked member: {e}"))
    }
}
