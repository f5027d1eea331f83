//! The published request sequences of Entra ID and Okta
//! (`tests/fixtures/scim/`), read by the protocol alone: every query parses,
//! every body reads as a User or a PATCH, every create is planned as a new
//! account at the verified domain, and each step leaves the User as the
//! fixture expects. The integration suite replays the same files against
//! the table and Cognito.

use serde_json::Value;

use super::provision::{CreatePlan, Domains, Holder, plan_create};
use super::{ListQuery, Patch, ScimUser};
use crate::domain::OrgDomain;

const FIXTURES: [(&str, &str); 4] = [
    ("entra-id", include_str!("../../../tests/fixtures/scim/entra-id.json")),
    (
        "entra-id-aadoptscim062020",
        include_str!("../../../tests/fixtures/scim/entra-id-aadoptscim062020.json"),
    ),
    ("okta-oin", include_str!("../../../tests/fixtures/scim/okta-oin.json")),
    (
        "okta-custom",
        include_str!("../../../tests/fixtures/scim/okta-custom.json"),
    ),
];

fn check(user: &ScimUser, expect: &Value, at: &str) {
    if let Some(active) = expect.get("active") {
        assert_eq!(Some(user.active), active.as_bool(), "{at}: active");
    }
    if let Some(given) = expect.get("givenName") {
        assert_eq!(
            user.given_name.as_ref().map(|n| n.as_str()),
            given.as_str(),
            "{at}: givenName"
        );
    }
    if let Some(family) = expect.get("familyName") {
        assert_eq!(
            user.family_name.as_ref().map(|n| n.as_str()),
            family.as_str(),
            "{at}: familyName"
        );
    }
    if let Some(primary) = expect.get("primary") {
        assert_eq!(
            user.primary_email().map(|e| e.as_str()),
            primary.as_str(),
            "{at}: primary"
        );
    }
}

#[test]
fn every_published_sequence_reads_and_ends_as_expected() {
    let acme = Domains([OrgDomain::parse("acme.example").unwrap()].into_iter().collect());
    for (name, text) in FIXTURES {
        let fixture: Value = serde_json::from_str(text).unwrap();
        let mut user: Option<ScimUser> = None;
        let steps = fixture["steps"].as_array().unwrap();
        assert!(steps.len() >= 4, "{name}");
        for step in steps {
            let at = format!("{name}: {}", step["step"]);
            let body = &step["body"];
            match step["method"].as_str().unwrap() {
                "GET" => {
                    let query: Vec<(&str, &str)> = step["query"]
                        .as_object()
                        .map(|q| q.iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap())).collect())
                        .unwrap_or_default();
                    ListQuery::parse(query).unwrap_or_else(|e| panic!("{at}: {e}"));
                }
                "POST" => {
                    let created = ScimUser::from_json(body).unwrap_or_else(|e| panic!("{at}: {e}"));
                    let plan = plan_create(&created, &acme, |_| Holder::Free).unwrap_or_else(|e| panic!("{at}: {e}"));
                    assert!(matches!(plan, CreatePlan::NewAccount { .. }), "{at}");
                    user = Some(created);
                }
                "PUT" => user = Some(ScimUser::from_json(body).unwrap_or_else(|e| panic!("{at}: {e}"))),
                "PATCH" => {
                    let current = user.as_ref().unwrap();
                    let patch = Patch::parse(body).unwrap_or_else(|e| panic!("{at}: {e}"));
                    user = Some(patch.apply(current).unwrap_or_else(|e| panic!("{at}: {e}")));
                }
                "DELETE" => {}
                other => panic!("{at}: {other}"),
            }
            if let Some(current) = &user {
                check(current, &step["expect"], &at);
            }
        }
    }
}
