//! The real function binaries under `cargo lambda watch` (bound to 127.0.0.1),
//! every events/ file invoked with `cargo lambda invoke --data-file`, against
//! DynamoDB Local. And the metrics they print: valid CloudWatch Embedded Metric
//! Format, without personal data, counting what the events did.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use integration_tests::lambda::{Watch, function_env, group_alive, require_cargo_lambda};
use integration_tests::{ddb, events};
use serde_json::{Value, json};
use user_service::metrics::{self, Metric};

struct Run {
    watch: Watch,
    /// Adjusted event files, removed on drop.
    scratch: tempfile::TempDir,
}

impl Run {
    fn file(name: &str) -> PathBuf {
        events::events_dir().join(format!("{name}.json"))
    }

    /// Invokes `function` with events/<name>.json as it is.
    fn invoke(&self, function: &str, name: &str) -> Result<Value, String> {
        self.delivered(function, &Self::file(name))
    }

    /// Invokes `function` with events/<name>.json changed by `adjust`.
    fn invoke_with(&self, function: &str, name: &str, adjust: impl FnOnce(&mut Value)) -> Result<Value, String> {
        let mut event = events::load(name);
        adjust(&mut event);
        let path = self.scratch.path().join(format!("{}.json", uuid::Uuid::new_v4()));
        std::fs::write(&path, event.to_string()).unwrap();
        self.delivered(function, &path)
    }

    /// An invocation as its caller makes it: a trigger that answers
    /// SERVICE_UNAVAILABLE (its 5 s ran out: on a loaded machine, DynamoDB
    /// Local can take that long) is invoked again, as Cognito retries a
    /// trigger; every trigger's work is idempotent. Any other answer is final.
    fn delivered(&self, function: &str, event: &std::path::Path) -> Result<Value, String> {
        const DELIVERIES: u32 = 10;
        let mut delivery = 1;
        loop {
            match self.watch.invoke(function, event) {
                Err(err) if err.contains("SERVICE_UNAVAILABLE") && delivery < DELIVERIES => delivery += 1,
                answer => return answer,
            }
        }
    }

    /// The route's event file, its token's user signed in just now (the
    /// files' `auth_time` is the day they were captured).
    fn http(&self, function: &str, name: &str) -> Http {
        self.http_with(function, name, |_| {})
    }

    fn http_with(&self, function: &str, name: &str, adjust: impl FnOnce(&mut Value)) -> Http {
        let now = (epoch_ms() / 1000).to_string();
        Http::from(
            self.invoke_with(function, name, |e| {
                e["requestContext"]["authorizer"]["jwt"]["claims"]["auth_time"] = json!(now);
                adjust(e);
            })
            .unwrap_or_else(|e| panic!("{function}: {e}")),
        )
    }

    /// The route's event file as it is: a sign-in from the day it was captured.
    fn http_as_captured(&self, function: &str, name: &str) -> Http {
        Http::from(
            self.invoke(function, name)
                .unwrap_or_else(|e| panic!("{function}: {e}")),
        )
    }
}

/// An API Gateway v2 response as the function returned it.
#[derive(Debug)]
struct Http {
    status: u64,
    headers: Value,
    body: Value,
}

impl From<Value> for Http {
    fn from(v: Value) -> Self {
        let body = v["body"]
            .as_str()
            .map(|b| serde_json::from_str(b).unwrap_or(json!(b)))
            .unwrap_or(Value::Null);
        Self {
            status: v["statusCode"].as_u64().unwrap(),
            headers: v["headers"].clone(),
            body,
        }
    }
}

impl Http {
    #[track_caller]
    fn expect(&self, status: u64) -> &Self {
        assert_eq!(self.status, status, "{self:?}");
        self
    }

    #[track_caller]
    fn problem(&self, status: u64, code: &str) {
        self.expect(status);
        assert_eq!(self.body["code"], code, "{self:?}");
        assert_eq!(self.headers["content-type"], "application/problem+json");
    }
}

const ADA: &str = "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e";
const ADMIN: &str = "9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c";
const FOREIGN_ID: &str = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

fn set_email_id(event: &mut Value, id: &str) {
    event["pathParameters"]["emailId"] = json!(id);
    let path = event["rawPath"].as_str().unwrap().replace(FOREIGN_ID, id);
    event["rawPath"] = json!(path);
    event["requestContext"]["http"]["path"] = json!(path);
}

/// Points an event's path parameter `name` at `value` (and its paths).
fn set_path(event: &mut Value, name: &str, value: &str) {
    let named = event["pathParameters"][name].as_str().unwrap().to_owned();
    event["pathParameters"][name] = json!(value);
    for pointer in ["/rawPath", "/requestContext/http/path"] {
        if let Some(path) = event.pointer_mut(pointer) {
            let replaced = path.as_str().unwrap().replace(&named, value);
            *path = json!(replaced);
        }
    }
}

#[test]
fn every_event_file_against_the_real_binaries() {
    require_cargo_lambda();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let table = rt.block_on(async { ddb::fresh_table(&ddb::client()).await });
    // Cognito and SES: moto's server, with the two users the events name, and a
    // verified sender: codes travel by SES and are read back from moto.
    let moto = integration_tests::moto::Moto::start();
    let (cognito, pool_id) = rt.block_on(async {
        moto.ses_sender().await;
        moto.pool_of_subs(&[ADA, ADMIN]).await
    });
    // Domain events: a bus in moto's EventBridge, its events read back from a queue.
    let (_, bus) = rt.block_on(moto.event_bus(user_service::events::Personal::None));
    let env = function_env(
        table.clone(),
        &[
            ("USER_POOL_ID", &pool_id),
            ("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER", &moto.endpoint),
            ("AWS_ENDPOINT_URL_SESV2", &moto.endpoint),
            ("AWS_ENDPOINT_URL_EVENTBRIDGE", &moto.endpoint),
            (
                user_service::config::EVENT_BUS_NAME.name(),
                integration_tests::moto::EVENT_BUS,
            ),
            (
                user_service::config::EVENT_SOURCE.name(),
                integration_tests::moto::EVENT_SOURCE,
            ),
            (user_service::config::VERIFICATION_SENDER.name(), "ses"),
            (
                user_service::config::SENDER_ADDRESS.name(),
                integration_tests::moto::SENDER,
            ),
            (
                user_service::config::SES_CONFIGURATION_SET.name(),
                integration_tests::moto::CONFIGURATION_SET,
            ),
            ("DYNAMODB_OPERATION_TIMEOUT_MS", "10000"),
            ("DYNAMODB_ATTEMPT_TIMEOUT_MS", "5000"),
            // Windows far longer than the test, so the answers below do not depend on
            // how long a busy machine takes between two invocations.
            ("VERIFICATION_RESEND_INTERVAL_SECONDS", "86400"),
            ("VERIFICATION_TTL_SECONDS", "86400"),
            (user_service::config::METRICS_NAMESPACE.name(), NAMESPACE),
            // The most an operator may ask for: check-logs scans what it prints.
            ("AWS_LAMBDA_LOG_LEVEL", "DEBUG"),
        ],
    );
    let started_ms = epoch_ms();
    let run = Run {
        watch: Watch::start(&env),
        scratch: tempfile::Builder::new().prefix("user-service-e2e-").tempdir().unwrap(),
    };
    let mut invoked = std::collections::BTreeSet::new();
    let mut note = |name: &str| {
        invoked.insert(name.to_owned());
    };

    // Cognito: sign-up, repeated delivery, a taken address, a password reset.
    let confirmation = events::load("post-confirmation");
    for _ in 0..3 {
        assert_eq!(
            run.invoke("post-confirmation", "post-confirmation").unwrap(),
            confirmation
        );
    }
    note("post-confirmation");
    for name in ["pre-sign-up", "pre-sign-up-admin-create-user"] {
        let err = run
            .invoke("pre-sign-up", name)
            .map(|ok| format!("{ok}\n{}", run.watch.output().join("\n")))
            .unwrap_or_else(|err| err);
        assert!(err.contains("EMAIL_TAKEN"), "{name}: {err}");
        note(name);
    }
    let free = run
        .invoke_with("pre-sign-up", "pre-sign-up", |e| {
            e["request"]["userAttributes"]["email"] = json!("new@example.com")
        })
        .unwrap();
    assert_eq!(free["request"]["userAttributes"]["email"], "new@example.com");
    let reset = events::load("post-confirmation-forgot-password");
    assert_eq!(
        run.invoke("post-confirmation", "post-confirmation-forgot-password")
            .unwrap(),
        reset
    );
    note("post-confirmation-forgot-password");
    // Sign-in: the profile exists, so the repair path changes nothing.
    assert_eq!(
        run.invoke("post-authentication", "post-authentication").unwrap(),
        events::load("post-authentication")
    );
    note("post-authentication");

    // Migration at sign-in: Ada is no pending user (she signed up), so the
    // documented events find nobody; a pending user imported with a hash of
    // the event's password is handed to Cognito, confirmed.
    for name in ["migrate-user", "migrate-user-forgot-password"] {
        let err = run.invoke("migrate-user", name).unwrap_err();
        assert!(err.contains("USER_NOT_FOUND"), "{name}: {err}");
        note(name);
    }
    let legacy_id = rt.block_on(async {
        let store = ddb::store_on(ddb::client(), &table);
        let hash = user_service::import::PasswordHash::parse(
            user_service::import::HashAlgorithm::Pbkdf2Sha256,
            "$pbkdf2-sha256$i=1000,l=32$bGVnYWN5LXNhbHQtMDAwMQ$a0kZ4eid5Ymb9P5aXEoCN+0op94SVD22BrmQQ7j2EVw",
        )
        .unwrap();
        let now = user_service::domain::Timestamp::now();
        let legacy = user_service::domain::NewUser {
            user_id: user_service::domain::UserId::new_pending(),
            email: user_service::domain::EmailAddress::parse("legacy@example.com").unwrap(),
            first_name: None,
            last_name: None,
            phone: None,
        };
        let (id, _) = store
            .create_pending_account(&user_service::domain::NewAccount::signed_up(legacy, now), &hash, now)
            .await
            .unwrap();
        id.to_string()
    });
    let migrated = run
        .invoke_with("migrate-user", "migrate-user", |e| {
            e["userName"] = json!("legacy@example.com")
        })
        .unwrap();
    assert_eq!(migrated["response"]["finalUserStatus"], "CONFIRMED", "{migrated}");
    assert_eq!(migrated["response"]["userAttributes"]["email"], "legacy@example.com");

    // Profile.
    let profile = run.http("get-profile", "get-profile");
    profile.expect(200);
    assert_eq!(
        (profile.body["email"].as_str(), profile.headers["etag"].as_str()),
        (Some("ada@example.com"), Some("\"1\""))
    );
    note("get-profile");
    let updated = run.http("update-profile", "update-profile");
    updated.expect(200);
    assert_eq!(updated.headers["etag"], "\"2\"");
    run.http("update-profile", "update-profile")
        .problem(412, "VERSION_MISMATCH");
    // A body marked base64 that does not decode: lambda_http would panic on it
    // (the invocation fails, API Gateway answers 500); the real binary answers
    // 400 and writes nothing. And a sub that is no Cognito sub: 401.
    run.http_with("update-profile", "update-profile", |e| {
        e["body"] = json!("{not base64}");
        e["isBase64Encoded"] = json!(true);
    })
    .problem(400, "VALIDATION_FAILED");
    run.http_with("get-profile", "get-profile", |e| {
        e["requestContext"]["authorizer"]["jwt"]["claims"]["sub"] = json!("admin");
    })
    .problem(401, "UNAUTHENTICATED");
    note("update-profile");

    // Addresses: add, check, resend, verify, switch, remove.
    let added = run.http("add-email", "add-email");
    added.expect(201);
    let id = added.body["emailId"].as_str().unwrap().to_owned();
    assert_eq!(added.headers["location"], format!("/me/emails/{id}"));
    note("add-email");
    let check = run.http("check-email", "check-email");
    check.expect(200);
    assert_eq!(check.body, json!({"email": "ada.work@example.com", "available": false}));
    note("check-email");
    run.http("list-emails", "list-emails").expect(200);
    assert_eq!(
        run.http("list-emails", "list-emails").body["emails"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    note("list-emails");
    let account = run.http("get-account", "get-account");
    account.expect(200);
    assert_eq!(account.body["emails"].as_array().unwrap().len(), 2);
    note("get-account");
    let export = run.http("export-account", "export-account");
    export.expect(200);
    assert_eq!(export.headers["cache-control"], "no-store");
    assert_eq!(
        export.body["formatVersion"],
        user_service::domain::EXPORT_FORMAT_VERSION
    );
    assert_eq!(export.body["emails"].as_array().unwrap().len(), 2);
    assert!(!export.body.to_string().contains("verificationCodeHash"));
    note("export-account");
    // An organization: created, listed, read, renamed under If-Match, its
    // members listed; a member the file names is none; deleted, then purged.
    let created = run.http("create-organization", "create-organization");
    created.expect(201);
    let org = created.body["orgId"].as_str().unwrap().to_owned();
    assert_eq!(created.headers["location"], format!("/organizations/{org}"));
    run.http("create-organization", "create-organization")
        .problem(409, "SLUG_TAKEN");
    note("create-organization");
    let mine = run.http("list-my-organizations", "list-my-organizations");
    mine.expect(200);
    assert_eq!(mine.body["organizations"][0]["role"], "owner");
    note("list-my-organizations");
    let read = run.http_with("get-organization", "get-organization", |e| set_path(e, "orgId", &org));
    read.expect(200);
    assert_eq!(read.headers["etag"], "\"1\"");
    note("get-organization");
    run.http_with("update-organization", "update-organization", |e| {
        set_path(e, "orgId", &org)
    })
    .expect(200);
    note("update-organization");
    let members = run.http_with("list-members", "list-members", |e| set_path(e, "orgId", &org));
    members.expect(200);
    assert_eq!(members.body["members"].as_array().unwrap().len(), 1);
    note("list-members");
    // An invitation: sent, listed, sent again, revoked; the file's token
    // names an organization nobody has.
    let invited = run.http_with("create-invitation", "create-invitation", |e| set_path(e, "orgId", &org));
    invited.expect(201);
    let invitation = invited.body["invitationId"].as_str().unwrap().to_owned();
    note("create-invitation");
    let pending = run.http_with("list-invitations", "list-invitations", |e| set_path(e, "orgId", &org));
    pending.expect(200);
    assert_eq!(pending.body["invitations"][0]["invitationId"], invitation.as_str());
    note("list-invitations");
    run.http_with("resend-invitation", "resend-invitation", |e| {
        set_path(e, "orgId", &org);
        set_path(e, "invitationId", &invitation);
    })
    .expect(200);
    note("resend-invitation");
    run.http_with("revoke-invitation", "revoke-invitation", |e| {
        set_path(e, "orgId", &org);
        set_path(e, "invitationId", &invitation);
    })
    .expect(204);
    note("revoke-invitation");
    run.http("accept-invitation", "accept-invitation")
        .problem(404, "INVITATION_NOT_FOUND");
    note("accept-invitation");
    // A domain: claimed, listed; the file's address proves nothing and a
    // pending domain enrolls nobody; the caller's suggestions; removed.
    let claimed = run.http_with("claim-domain", "claim-domain", |e| set_path(e, "orgId", &org));
    claimed.expect(201);
    assert_eq!(claimed.body["status"], "pending");
    note("claim-domain");
    let listed = run.http_with("list-domains", "list-domains", |e| set_path(e, "orgId", &org));
    listed.expect(200);
    assert_eq!(listed.body["domains"].as_array().unwrap().len(), 1);
    note("list-domains");
    run.http_with("verify-domain", "verify-domain", |e| set_path(e, "orgId", &org))
        .problem(409, "DOMAIN_NOT_PROVEN");
    note("verify-domain");
    run.http_with("update-domain", "update-domain", |e| set_path(e, "orgId", &org))
        .problem(409, "DOMAIN_NOT_VERIFIED");
    note("update-domain");
    let suggested = run.http("suggest-organizations", "suggest-organizations");
    suggested.expect(200);
    assert_eq!(suggested.body["suggestions"], json!([]));
    note("suggest-organizations");
    run.http_with("join-by-domain", "join-by-domain", |e| set_path(e, "orgId", &org))
        .problem(403, "ENROLLMENT_NOT_OPEN");
    note("join-by-domain");
    run.http_with("remove-domain", "remove-domain", |e| set_path(e, "orgId", &org))
        .expect(204);
    note("remove-domain");
    // A SCIM token: made (shown once), listed without its secret, revoked.
    let made = run.http_with("create-scim-token", "create-scim-token", |e| set_path(e, "orgId", &org));
    made.expect(201);
    assert!(made.body["token"].as_str().unwrap().starts_with("scim_"));
    let token_id = made.body["tokenId"].as_str().unwrap().to_owned();
    note("create-scim-token");
    let listed = run.http_with("list-scim-tokens", "list-scim-tokens", |e| set_path(e, "orgId", &org));
    listed.expect(200);
    assert_eq!(listed.body["tokens"][0]["tokenId"], json!(token_id));
    assert!(
        listed.body["tokens"][0].get("token").is_none(),
        "never the secret again"
    );
    note("list-scim-tokens");
    // The directory's routes, with that token. The organization has no
    // verified domain now, so a create is refused; Ada, its owner, is no
    // member its directory made or linked.
    let secret = made.body["token"].as_str().unwrap().to_owned();
    let scim = |name: &str| {
        run.http_with(name, name, |e| {
            e["headers"]["authorization"] = json!(format!("Bearer {secret}"));
        })
    };
    let config = scim("scim-discovery");
    config.expect(200);
    assert_eq!(config.headers["content-type"], "application/scim+json");
    assert_eq!(config.body["patch"]["supported"], true);
    let listed = scim("scim-list-users");
    listed.expect(200);
    assert_eq!(listed.body["totalResults"], 0);
    let refused = scim("scim-create-user");
    refused.expect(400);
    assert_eq!(refused.body["scimType"], "invalidValue");
    for name in [
        "scim-get-user",
        "scim-replace-user",
        "scim-patch-user",
        "scim-delete-user",
    ] {
        let none = scim(name);
        none.expect(404);
        assert_eq!(none.body["status"], "404", "{name}");
    }
    // The file's own token proves nothing.
    let forged = run.http("scim-discovery", "scim-discovery");
    forged.expect(401);
    assert_eq!(forged.headers["www-authenticate"], "Bearer realm=\"scim\"");
    for name in [
        "scim-discovery",
        "scim-list-users",
        "scim-create-user",
        "scim-get-user",
        "scim-replace-user",
        "scim-patch-user",
        "scim-delete-user",
    ] {
        note(name);
    }
    run.http_with("revoke-scim-token", "revoke-scim-token", |e| {
        set_path(e, "orgId", &org);
        set_path(e, "tokenId", &token_id);
    })
    .expect(204);
    note("revoke-scim-token");
    run.http_with("set-member-role", "set-member-role", |e| set_path(e, "orgId", &org))
        .problem(404, "MEMBER_NOT_FOUND");
    note("set-member-role");
    run.http_with("remove-member", "remove-member", |e| set_path(e, "orgId", &org))
        .problem(404, "MEMBER_NOT_FOUND");
    note("remove-member");
    run.http_with("delete-organization", "delete-organization", |e| {
        set_path(e, "orgId", &org)
    })
    .problem(412, "VERSION_MISMATCH");
    run.http_with("delete-organization", "delete-organization", |e| {
        set_path(e, "orgId", &org);
        e["headers"]["if-match"] = json!("\"2\"");
    })
    .expect(202);
    note("delete-organization");
    let purged = run.invoke("purge-organizations", "purge-organizations").unwrap();
    assert_eq!(purged, json!({ "pending": 1, "finished": 1, "removed": 1 }));
    note("purge-organizations");

    // The recovery link's page, and a link the file made up: no such switch.
    let page = run.http_as_captured("recovery-page", "recovery-page");
    page.expect(200);
    assert_eq!(page.headers["content-type"], "text/html; charset=utf-8");
    assert!(
        page.headers["content-security-policy"]
            .as_str()
            .unwrap()
            .contains("script-src 'sha256-")
    );
    note("recovery-page");
    run.http_as_captured("recover-account", "recover-account")
        .problem(404, "RECOVERY_LINK_INVALID");
    note("recover-account");

    run.http("send-verification", "send-verification")
        .problem(404, "NOT_FOUND");
    run.http_with("send-verification", "send-verification", |e| set_email_id(e, &id))
        .problem(429, "TOO_MANY_REQUESTS");
    note("send-verification");
    run.http("verify-email", "verify-email").problem(404, "NOT_FOUND");
    // The code arrived by SES, to the address, and verifies it.
    let mail = rt.block_on(moto.mail_to("ada.work@example.com"));
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert_eq!(mail[0].from, integration_tests::moto::SENDER);
    assert!(mail[0].subject.contains("verify this email address"), "{mail:?}");
    let code = mail[0].code().expect("a code in the message");
    let verified = run.http_with("verify-email", "verify-email", |e| {
        set_email_id(e, &id);
        e["body"] = json!(json!({ "code": code }).to_string());
    });
    verified.expect(200);
    assert_eq!(verified.body["isVerified"], true);
    note("verify-email");
    let fetched = run.http_with("get-email", "get-email", |e| set_email_id(e, &id));
    fetched.expect(200);
    assert_eq!(fetched.body["isVerified"], true);
    run.http("get-email", "get-email").problem(404, "NOT_FOUND");
    note("get-email");

    // The admin of the admin events: admins need an active account of their own.
    let admin = ADMIN;
    run.invoke_with("post-confirmation", "post-confirmation", |e| {
        e["userName"] = json!(admin);
        e["request"]["userAttributes"]["sub"] = json!(admin);
        e["request"]["userAttributes"]["email"] = json!("grace@example.com");
    })
    .unwrap();

    let found = run.http("find-user-by-email", "find-user-by-email");
    found.expect(200);
    assert_eq!(found.body["profile"]["userId"], "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
    note("find-user-by-email");

    // The event lists active users: Ada, the pending user (under their
    // provisional id until they migrate) and the admin, oldest first, in one page.
    let listed = run.http("list-users", "list-users");
    listed.expect(200);
    let subs: Vec<&str> = listed.body["users"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["userId"].as_str())
        .collect();
    assert_eq!(
        subs,
        ["3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e", legacy_id.as_str(), admin]
    );
    assert!(listed.body.get("nextCursor").is_none());
    note("list-users");

    // The captured token's sign-in is long past: a switch needs a recent one,
    // and the binary says so with RFC 9470's challenge before anything else.
    let old = run.http_as_captured("set-primary-email", "set-primary-email");
    old.problem(401, "REAUTHENTICATION_REQUIRED");
    assert_eq!(
        old.headers["www-authenticate"],
        r#"Bearer error="insufficient_user_authentication", error_description="A more recent sign-in is required", max_age="600""#
    );
    run.http("set-primary-email", "set-primary-email")
        .problem(404, "NOT_FOUND");
    let switched = run.http_with("set-primary-email", "set-primary-email", |e| {
        e["body"] = json!(json!({ "emailId": id }).to_string());
    });
    switched.expect(200);
    assert_eq!(
        (switched.body["email"].as_str(), switched.headers["etag"].as_str()),
        (Some("ada.work@example.com"), Some("\"3\""))
    );
    note("set-primary-email");

    // The stream delivers the switch: Cognito's email follows, and the former
    // primary is told (no code in that notice).
    let synced = run.invoke("sync-cognito-email", "sync-cognito-email").unwrap();
    assert_eq!(synced, json!({"batchItemFailures": []}));
    let ada = rt.block_on(integration_tests::moto::cognito_user(&cognito, &pool_id, ADA));
    assert_eq!(
        ada.map(|u| (u.email, u.email_verified)),
        Some((Some("ada.work@example.com".to_owned()), true))
    );
    let notice = rt.block_on(moto.mail_to("ada@example.com"));
    assert_eq!(notice.len(), 1, "{notice:?}");
    assert_eq!(notice[0].code(), None);
    note("sync-cognito-email");

    // The stream delivers a verification: its event goes on the bus, without
    // the address, and a second delivery gives the same id.
    for _ in 0..2 {
        let published = run.invoke("publish-events", "publish-events").unwrap();
        assert_eq!(published, json!({"batchItemFailures": []}));
    }
    let verified = rt.block_on(bus.collect(2));
    assert_eq!(verified.len(), 2, "{verified:?}");
    assert_eq!(verified[0], verified[1], "the same event, the same id");
    assert_eq!(
        (verified[0]["type"].as_str(), verified[0]["subject"].as_str()),
        (Some("email.verified"), Some(ADA))
    );
    assert!(!verified[0].to_string().contains('@'), "{}", verified[0]);
    note("publish-events");

    run.http("remove-email", "remove-email").problem(404, "NOT_FOUND");
    let old = account.body["emails"][0]["emailId"].as_str().unwrap().to_owned();
    run.http_with("remove-email", "remove-email", |e| set_email_id(e, &old))
        .expect(204);
    run.http_with("remove-email", "remove-email", |e| set_email_id(e, &id))
        .problem(409, "PRIMARY_EMAIL");
    note("remove-email");

    let suspended = run.http("set-user-status", "set-user-status");
    suspended.expect(200);
    assert_eq!(suspended.body["status"], "suspended");
    note("set-user-status");
    run.http("add-email", "add-email").problem(403, "ACCOUNT_INACTIVE");
    // A suspended account cannot close itself; without If-Match nothing is tried.
    run.http_with("delete-account", "delete-account", |e| {
        e["headers"].as_object_mut().unwrap().remove("if-match");
    })
    .problem(428, "PRECONDITION_REQUIRED");
    run.http_with("delete-account", "delete-account", |e| {
        e["headers"]["if-match"] = json!("\"4\"")
    })
    .problem(403, "ACCOUNT_INACTIVE");
    note("delete-account");

    // The pass finds both users still in Cognito and erases no one; so does
    // CloudTrail's record of a DeleteUser by a user the pool still has.
    let swept = run.invoke("reconcile-users", "reconcile-users").unwrap();
    assert_eq!(swept["complete"], true, "{swept}");
    assert_eq!(
        (&swept["tally"]["live"], &swept["tally"]["erased"]),
        (&json!(2), &json!(0)),
        "{swept}"
    );
    note("reconcile-users");
    let recorded = run.invoke("reconcile-users", "reconcile-users-delete-user").unwrap();
    assert_eq!(recorded, json!({"erased": 0}));
    note("reconcile-users-delete-user");

    // Every file in events/ was invoked.
    assert_eq!(invoked.into_iter().collect::<Vec<_>>(), events::all_names());

    // The functions logged JSON lines with the request id and sub, and no addresses.
    let lines = run.watch.log_lines();
    assert!(lines.iter().any(|l| l["message"] == "request handled"));
    for line in lines.iter().filter(|l| l["message"] == "request handled") {
        let sub = line["span"]["sub"].as_str();
        if line["span"]["access"] == "anyone" {
            // A route anyone may call: no caller, no sub (recovery-page, recover-account).
            assert!(sub.is_none(), "{line}");
            continue;
        }
        if line["span"]["access"] == "directory" {
            // A directory: no person calls, so no sub; the organization, once proven.
            assert!(sub.is_none(), "{line}");
            assert!(line["status"] == 401 || line["span"]["org"].is_string(), "{line}");
            continue;
        }
        if line["status"] == 401 && sub.is_none() {
            // Refused before any identity: the forged sub is not logged. A
            // verified caller whose sign-in is too old (REAUTHENTICATION_REQUIRED)
            // is known, and logged as any other, below.
            continue;
        }
        assert!(
            matches!(
                sub,
                Some("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e" | "9b2e4c1a-7d3f-4e5a-8b6c-1d2e3f4a5b6c")
            ),
            "{line}"
        );
        assert!(line["span"]["request_id"].is_string(), "{line}");
        assert!(!line.to_string().contains("@example.com"), "{line}");
    }

    // What the events did, as the functions counted it: one EMF document per
    // invocation that moved a counter, printed before its answer (the pipe's
    // reader may lag behind the answer: waited for).
    let expected: Totals = [
        ("post-confirmation", Metric::SignUps, 2),
        ("update-profile", Metric::ConditionalCheckFailures, 1),
        ("add-email", Metric::CodesIssued, 1),
        // The add while suspended, refused by the profile's condition.
        ("add-email", Metric::ConditionalCheckFailures, 1),
        ("send-verification", Metric::CodesRefusedByLimit, 1),
        ("send-verification", Metric::ConditionalCheckFailures, 1),
        ("verify-email", Metric::VerificationsSucceeded, 1),
        ("find-user-by-email", Metric::AdminLookups, 1),
        ("list-users", Metric::AdminLookups, 1),
        ("set-primary-email", Metric::PrimarySwitches, 1),
        ("remove-email", Metric::EmailsRemoved, 1),
        // The file's link undoes nothing: a stranger's guess, counted.
        ("recover-account", Metric::RecoveryLinksRefused, 1),
        ("set-user-status", Metric::AdminStatusChanges, 1),
        // The second creation with the file's slug, refused by its claim.
        ("create-organization", Metric::ConditionalCheckFailures, 1),
        ("reconcile-users", Metric::ReconcilePassesCompleted, 1),
        // The pending user's password matched (the two refusals count nothing).
        ("migrate-user", Metric::MigrationsStarted, 1),
    ]
    .into_iter()
    .map(|(function, metric, n)| ((function.to_owned(), metric.name().to_owned()), n))
    .collect();
    let settled = integration_tests::wait::poll(integration_tests::wait::GENEROUS, || {
        let lines = emf_lines(&run.watch.output());
        (totals(&lines) == expected).then_some(lines)
    });
    let lines = settled.unwrap_or_else(|| emf_lines(&run.watch.output()));
    assert_eq!(totals(&lines), expected, "the metrics the functions printed");
    let now_ms = epoch_ms();
    for line in &lines {
        if let Err(problem) = check_emf(line, started_ms, now_ms) {
            panic!("not valid EMF ({problem}): {line}");
        }
    }
    let files = [(PathBuf::from("emf"), lines.join("\n"))];
    let scan = integration_tests::log_check::check(&files);
    assert_eq!(scan.lines, lines.len());
    assert!(scan.findings.is_empty(), "personal data in EMF: {:?}", scan.findings);

    // At LogLevel DEBUG the functions print their DEBUG lines, and no line
    // they print carries personal data.
    let output = run.watch.output();
    assert!(
        output.iter().any(|line| line.contains("\"level\":\"DEBUG\"")),
        "no DEBUG line at LogLevel DEBUG"
    );
    let files = [(PathBuf::from("functions at DEBUG"), output.join("\n"))];
    let scan = integration_tests::log_check::check(&files);
    assert!(
        scan.lines >= output.len() / 2,
        "the scan read {} of {} lines",
        scan.lines,
        output.len()
    );
    assert!(scan.findings.is_empty(), "personal data at DEBUG: {:?}", scan.findings);

    // Stopping leaves nothing behind.
    let mut watch = run.watch;
    let pgid = watch.pid();
    watch.stop();
    assert!(!group_alive(pgid), "processes of cargo lambda watch survived");
}

/// The namespace the functions are given; the template gives `UserService/<stack>`.
const NAMESPACE: &str = "UserService/e2e";

/// Each function's sum of each metric.
type Totals = BTreeMap<(String, String), u64>;

fn epoch_ms() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    u64::try_from(since.as_millis()).unwrap()
}

/// The lines of `output` that are EMF documents: JSON objects with `_aws`.
fn emf_lines(output: &[String]) -> Vec<String> {
    output
        .iter()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v.get("_aws").is_some()))
        .cloned()
        .collect()
}

/// Each function's sum of each metric over `lines`.
fn totals(lines: &[String]) -> Totals {
    // What a loaded machine adds (a DynamoDB call timed out, a write retried,
    // then a trigger delivered again) is the machine's, not the events'.
    let machines = [
        Metric::ContentionRetries,
        Metric::DynamoDbThrottled,
        Metric::DynamoDbTransactionConflicts,
        Metric::DynamoDbTimeouts,
        Metric::DynamoDbServerErrors,
    ];
    let mut totals = Totals::new();
    for line in lines {
        let doc: Value = serde_json::from_str(line).unwrap();
        let function = doc[metrics::DIMENSION].as_str().unwrap_or_default().to_owned();
        for metric in Metric::ALL.iter().filter(|m| !machines.contains(m)) {
            if let Some(n) = doc[metric.name()].as_u64() {
                *totals.entry((function.clone(), metric.name().to_owned())).or_default() += n;
            }
        }
    }
    totals
}

/// Checks one document against the EMF specification
/// (<https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html>)
/// and this service's rules: the configured namespace, the one dimension
/// `FunctionName`, counts named in `Metric::ALL`, and no other member (no properties).
fn check_emf(line: &str, from_ms: u64, to_ms: u64) -> Result<(), String> {
    let doc: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let root = doc.as_object().ok_or("not an object")?;
    let aws = root
        .get("_aws")
        .and_then(Value::as_object)
        .ok_or("_aws is not an object")?;
    if let Some(extra) = aws
        .keys()
        .find(|k| !["Timestamp", "CloudWatchMetrics"].contains(&k.as_str()))
    {
        return Err(format!("_aws.{extra}"));
    }
    let timestamp = aws
        .get("Timestamp")
        .and_then(Value::as_u64)
        .ok_or("Timestamp is not an integer")?;
    // Milliseconds since the epoch, within the test's run (a minute of slack for clocks).
    if timestamp + 60_000 < from_ms || timestamp > to_ms + 60_000 {
        return Err(format!("Timestamp {timestamp} is not between {from_ms} and {to_ms}"));
    }
    let directives = aws
        .get("CloudWatchMetrics")
        .and_then(Value::as_array)
        .filter(|d| !d.is_empty())
        .ok_or("CloudWatchMetrics is not a non-empty array")?;
    let mut members: HashSet<&str> = HashSet::from(["_aws"]);
    for directive in directives {
        let directive = directive.as_object().ok_or("a directive is not an object")?;
        if directive.get("Namespace").and_then(Value::as_str) != Some(NAMESPACE) {
            return Err(format!("Namespace {:?}", directive.get("Namespace")));
        }
        if directive.get("Dimensions") != Some(&json!([[metrics::DIMENSION]])) {
            return Err(format!("Dimensions {:?}", directive.get("Dimensions")));
        }
        members.insert(metrics::DIMENSION);
        let metrics = directive
            .get("Metrics")
            .and_then(Value::as_array)
            .filter(|m| !m.is_empty() && m.len() <= 100)
            .ok_or("Metrics is not an array of 1 to 100")?;
        for metric in metrics {
            let name = metric["Name"].as_str().ok_or("a metric without a Name")?;
            if !Metric::ALL.iter().any(|m| m.name() == name) {
                return Err(format!("{name} is not in Metric::ALL"));
            }
            if metric != &json!({"Name": name, "Unit": "Count"}) {
                return Err(format!("metric definition {metric}"));
            }
            members.insert(name);
        }
    }
    if let Some(extra) = root.keys().find(|k| !members.contains(k.as_str())) {
        return Err(format!("{extra} is neither a dimension nor a metric"));
    }
    let function = root
        .get(metrics::DIMENSION)
        .and_then(Value::as_str)
        .ok_or("the dimension's value is not a string")?;
    if !user_service::catalog::FUNCTIONS.iter().any(|f| f.name == function) {
        return Err(format!("FunctionName {function}"));
    }
    for name in members.iter().filter(|m| !["_aws", metrics::DIMENSION].contains(m)) {
        let value = &root[*name];
        let numbers = match value {
            Value::Number(_) => true,
            Value::Array(values) => values.len() <= 100 && values.iter().all(Value::is_number),
            _ => false,
        };
        if !numbers {
            return Err(format!("{name} is {value}"));
        }
    }
    Ok(())
}
