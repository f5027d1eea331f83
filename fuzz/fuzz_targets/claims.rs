//! The caller from the JWT authorizer's claims: admitted exactly when an access
//! token names a Cognito `sub` (a lower-case UUID); the caller is that sub and the token's
//! groups; any other claims are refused with 401 UNAUTHENTICATED.
#![no_main]

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use fuzz_support::{EventSpec, assert_parsing_problem};
use libfuzzer_sys::fuzz_target;
use user_service::domain::UserId;
use user_service::http::request::{caller, parse_groups};

#[derive(Arbitrary, Debug)]
enum TokenUse {
    Access,
    Id,
    Other(String),
}

#[derive(Arbitrary, Debug)]
struct Input {
    authorizer_ran: bool,
    token_use: Option<TokenUse>,
    sub: Option<String>,
    groups: Option<String>,
    extra: Vec<(String, String)>,
}

// Inputs starting with `{` are a claims map as the authorizer passes it (the
// hand-written seeds); all others go through `Arbitrary`.
fuzz_target!(|data: &[u8]| {
    if data.first() == Some(&b'{') {
        if let Ok(claims) = serde_json::from_slice::<BTreeMap<String, String>>(data) {
            check(true, &claims);
        }
        return;
    }
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut claims = BTreeMap::new();
    for (k, v) in &input.extra {
        claims.insert(k.clone(), v.clone());
    }
    match &input.token_use {
        Some(TokenUse::Access) => claims.insert("token_use".into(), "access".into()),
        Some(TokenUse::Id) => claims.insert("token_use".into(), "id".into()),
        Some(TokenUse::Other(s)) => claims.insert("token_use".into(), s.clone()),
        None => None,
    };
    if let Some(sub) = &input.sub {
        claims.insert("sub".into(), sub.clone());
    }
    if let Some(groups) = &input.groups {
        claims.insert("cognito:groups".into(), groups.clone());
    }
    check(input.authorizer_ran, &claims);
});

fn check(authorizer_ran: bool, claims: &BTreeMap<String, String>) {
    let spec = EventSpec {
        method: "GET",
        raw_path: "/me",
        claims: authorizer_ran.then(|| claims.clone()),
        ..EventSpec::default()
    };
    let Some(req) = spec.to_request() else {
        return;
    };

    let admissible = authorizer_ran
        && claims.get("token_use").map(String::as_str) == Some("access")
        && claims.get("sub").is_some_and(|s| UserId::parse_sub(s).is_ok());
    match caller(&req) {
        Ok(who) => {
            assert!(admissible, "admitted a caller the claims do not name");
            assert_eq!(Some(who.user_id.as_str()), claims.get("sub").map(String::as_str));
            let expected = claims
                .get("cognito:groups")
                .map(|g| parse_groups(g))
                .unwrap_or_default();
            assert_eq!(who.groups, expected);
            for group in &who.groups {
                assert!(who.is_in(group));
            }
        }
        Err(problem) => {
            assert!(!admissible, "refused a well-formed access token");
            assert_parsing_problem(&problem);
            assert_eq!(problem.code, "UNAUTHENTICATED");
        }
    }

    // The HTTP API form `[a b]` and a bare name split on whitespace only, so a
    // group name never holds whitespace and is never empty, and `[x,admin]`
    // never yields `admin`.
    if let Some(raw) = claims.get("cognito:groups") {
        let groups = parse_groups(raw);
        if serde_json::from_str::<Vec<String>>(raw.trim()).is_err() {
            for g in &groups {
                assert!(!g.is_empty() && !g.chars().any(char::is_whitespace), "group name {g:?}");
                assert!(raw.contains(g.as_str()), "group not in the claim");
            }
        }
    }
}
