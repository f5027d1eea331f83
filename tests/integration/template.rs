//! template.yaml must say what the code does: the key schema, one resource per
//! function crate, the routes, the events, and least-privilege IAM.

use std::collections::BTreeSet;

use integration_tests::events;
use integration_tests::template::{self, tagged, text};
use serde_norway::Value;
use user_service::catalog::{self, Trigger};
use user_service::metrics::{self, Metric};
use user_service::store::{keys, schema};

fn key_schema(v: &Value) -> Vec<(String, String)> {
    v.as_sequence()
        .unwrap()
        .iter()
        .map(|k| (text(&k["AttributeName"]), text(&k["KeyType"])))
        .collect()
}

fn expected(keys: &[(&str, &str)]) -> Vec<(String, String)> {
    keys.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[test]
fn table_matches_the_key_schema() {
    let t = template::load();
    let tables = template::of_type(&t, "AWS::DynamoDB::Table");
    assert_eq!(tables.len(), 1);
    let p = &tables[0].1["Properties"];
    assert_eq!(key_schema(&p["KeySchema"]), expected(&keys::TABLE_KEYS));
    let gsis = p["GlobalSecondaryIndexes"].as_sequence().unwrap();
    // The indexes the tests and local runs create (schema::INDEXES), in order.
    assert_eq!(gsis.len(), schema::INDEXES.len());
    for (gsi, index) in gsis.iter().zip(schema::INDEXES) {
        let (name, index_keys, projected) = (index.name, index.keys, index.projected);
        assert_eq!(text(&gsi["IndexName"]), name);
        assert_eq!(key_schema(&gsi["KeySchema"]), expected(&index_keys), "{name}");
        // Only what the index's one reader shows: no verification data in either.
        assert_eq!(text(&gsi["Projection"]["ProjectionType"]), "INCLUDE", "{name}");
        let listed: Vec<String> = gsi["Projection"]["NonKeyAttributes"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(text)
            .collect();
        assert_eq!(listed, projected, "{name}");
    }
    assert_eq!(text(&p["TimeToLiveSpecification"]["AttributeName"]), keys::TTL);
    assert_eq!(p["TimeToLiveSpecification"]["Enabled"].as_bool(), Some(true));
    let defined: BTreeSet<(String, String)> = p["AttributeDefinitions"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| (text(&a["AttributeName"]), text(&a["AttributeType"])))
        .collect();
    let wanted: BTreeSet<(String, String)> = keys::TABLE_KEYS
        .iter()
        .chain(schema::INDEXES.iter().flat_map(|index| index.keys.iter()))
        .map(|(a, _)| ((*a).to_owned(), "S".to_owned()))
        .collect();
    assert_eq!(defined, wanted);
    // On demand unless a parameter provisions it (see the capacity test below).
    assert_eq!(
        tagged(&p["BillingMode"]).map(|(tag, v)| (tag, text(v))),
        Some(("Ref".to_owned(), "TableBillingMode".to_owned()))
    );
    assert_eq!(text(&t["Parameters"]["TableBillingMode"]["Default"]), "PAY_PER_REQUEST");
    assert_eq!(
        p["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"].as_bool(),
        Some(true)
    );
    assert_eq!(p["SSESpecification"]["SSEEnabled"].as_bool(), Some(true));
}

#[test]
fn every_function_crate_has_exactly_one_resource_and_an_event_file() {
    let t = template::load();
    let binaries: Vec<String> = template::of_type(&t, "AWS::Serverless::Function")
        .iter()
        .map(|(_, f)| {
            assert_eq!(text(&f["Metadata"]["BuildMethod"]), "rust-cargolambda");
            text(&f["Metadata"]["BuildProperties"]["Binary"])
        })
        .collect();
    let crates: BTreeSet<String> = std::fs::read_dir(integration_tests::workspace_root().join("functions"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for name in &crates {
        assert_eq!(
            binaries.iter().filter(|b| *b == name).count(),
            1,
            "one resource builds {name}"
        );
        assert!(catalog::by_name(name).is_some(), "{name} is in the catalog");
        let files = events::all_names();
        assert!(
            files.iter().any(|f| f == name || f.starts_with(&format!("{name}-"))),
            "an events/ file for {name}"
        );
    }
    assert_eq!(binaries.len(), crates.len(), "no resource without a crate");
    assert_eq!(crates.len(), catalog::FUNCTIONS.len());
}

#[test]
fn routes_equal_the_routes_the_code_serves() {
    let declared = template::http_routes(&template::load());
    let mut served: Vec<(String, String, String)> = catalog::FUNCTIONS
        .iter()
        .filter_map(|f| match f.trigger {
            Trigger::Http { method, path, .. } => Some((f.name.to_owned(), method.to_owned(), path.to_owned())),
            _ => None,
        })
        .collect();
    served.sort();
    assert_eq!(declared, served);
}

#[test]
fn cognito_triggers_point_at_the_trigger_functions() {
    let t = template::load();
    let pools = template::of_type(&t, "AWS::Cognito::UserPool");
    assert_eq!(pools.len(), 1);
    let config = &pools[0].1["Properties"]["LambdaConfig"];
    let target = |key: &str| {
        let (tag, inner) = tagged(&config[key]).expect("a !GetAtt");
        assert_eq!(tag, "GetAtt");
        text(inner)
    };
    let logical_id = |binary: &str| {
        template::of_type(&t, "AWS::Serverless::Function")
            .into_iter()
            .find(|(_, f)| text(&f["Metadata"]["BuildProperties"]["Binary"]) == binary)
            .map(|(id, _)| format!("{id}.Arn"))
            .unwrap()
    };
    assert_eq!(target("PreSignUp"), logical_id(catalog::PRE_SIGN_UP.name));
    assert_eq!(target("PostConfirmation"), logical_id(catalog::POST_CONFIRMATION.name));
    assert_eq!(
        target("PostAuthentication"),
        logical_id(catalog::POST_AUTHENTICATION.name)
    );

    // The migration trigger, only while LegacyPasswordMigration is not off;
    // its client (USER_PASSWORD_AUTH), the authorizer's audience for it and
    // its output only while it is on. Off by default.
    let (tag, wired) = tagged(&config["UserMigration"]).expect("an !If");
    assert_eq!(tag, "If");
    assert_eq!(text(&wired[0]), "MigrationTriggerWired");
    let (tag, arn) = tagged(&wired[1]).unwrap();
    assert_eq!(
        (tag.as_str(), text(arn)),
        ("GetAtt", logical_id(catalog::MIGRATE_USER.name))
    );
    let (tag, none) = tagged(&wired[2]).unwrap();
    assert_eq!((tag.as_str(), text(none)), ("Ref", "AWS::NoValue".to_owned()));
    let parameter = &t["Parameters"]["LegacyPasswordMigration"];
    assert_eq!(text(&parameter["Default"]), "off");
    let clients = template::of_type(&t, "AWS::Cognito::UserPoolClient");
    let with_password: Vec<&str> = clients
        .iter()
        .filter(|(_, c)| {
            c["Properties"]["ExplicitAuthFlows"]
                .as_sequence()
                .into_iter()
                .flatten()
                .any(|flow| text(flow) == "ALLOW_USER_PASSWORD_AUTH")
        })
        .map(|(id, _)| id.as_str())
        .collect();
    assert_eq!(with_password, ["MigrationClient"]);
    let migration = clients.iter().find(|(id, _)| id == "MigrationClient").unwrap();
    assert_eq!(text(&migration.1["Condition"]), "LegacyPasswordMigrationOn");
    assert_eq!(
        text(&t["Outputs"]["MigrationClientId"]["Condition"]),
        "LegacyPasswordMigrationOn"
    );
}

/// The inline policy statements of a function.
fn statements<'a>(t: &'a Value, id: &str, function: &'a Value) -> Vec<&'a Value> {
    let inline = function["Properties"]["Policies"]
        .as_sequence()
        .into_iter()
        .flatten()
        .flat_map(|policy| policy["Statement"].as_sequence().into_iter().flatten());
    // Policies of their own on the function's role (a trigger's Cognito actions).
    let role = format!("{id}Role");
    let attached = template::of_type(t, "AWS::IAM::Policy")
        .into_iter()
        .filter(move |(_, policy)| {
            let roles = policy["Properties"]["Roles"].as_sequence().cloned().unwrap_or_default();
            roles.iter().any(|r| text(r) == role)
        })
        .flat_map(|(_, policy)| {
            policy["Properties"]["PolicyDocument"]["Statement"]
                .as_sequence()
                .into_iter()
                .flatten()
        });
    inline.chain(attached).collect()
}

/// (actions, resources) granted to a function by its inline policy statements;
/// the resources of the mail statement are checked on their own (see below).
fn grants(t: &Value, id: &str, function: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut actions = BTreeSet::new();
    let mut resources = BTreeSet::new();
    for statement in statements(t, id, function) {
        assert_eq!(text(&statement["Effect"]), "Allow");
        let list = |v: &Value| -> Vec<Value> { v.as_sequence().cloned().unwrap_or_else(|| vec![v.clone()]) };
        actions.extend(list(&statement["Action"]).iter().map(text));
        if text(&statement["Sid"]) != MAIL_SID {
            resources.extend(list(&statement["Resource"]).iter().map(text));
        }
    }
    (actions, resources)
}

const MAIL_SID: &str = "SendMail";

#[test]
fn iam_grants_exactly_the_actions_each_function_performs() {
    let t = template::load();
    for (id, function) in template::of_type(&t, "AWS::Serverless::Function") {
        let binary = text(&function["Metadata"]["BuildProperties"]["Binary"]);
        let spec = catalog::by_name(&binary).unwrap();
        let (actions, resources) = grants(&t, &id, function);
        let mut wanted: BTreeSet<String> = spec.dynamodb_actions.iter().map(|a| format!("dynamodb:{a}")).collect();
        let mut expected_resources = BTreeSet::new();
        if !spec.dynamodb_actions.is_empty() {
            expected_resources.insert("Table.Arn".to_owned());
        }
        if spec.sends_email {
            wanted.insert("ses:SendEmail".to_owned());
        }
        // Domain events: PutEvents, on the stack's bus alone.
        if spec.publishes_events {
            wanted.insert("events:PutEvents".to_owned());
            expected_resources.insert("EventBus.Arn".to_owned());
            let env = &function["Properties"]["Environment"]["Variables"];
            assert_eq!(
                text(&env[user_service::config::EVENT_BUS_NAME.name()]),
                "EventBus",
                "{id}"
            );
            assert_eq!(
                text(&env[user_service::config::EVENTS_INCLUDE_ADDRESSES.name()]),
                "EventsIncludeAddresses",
                "{id}"
            );
        }
        if spec.queries_gsi1 {
            expected_resources.insert("${Table.Arn}/index/GSI1".to_owned());
        }
        if spec.queries_gsi2 {
            expected_resources.insert("${Table.Arn}/index/GSI2".to_owned());
        }
        // Cognito: exactly the admin actions the function calls, on the stack's pool alone.
        if !spec.cognito_actions.is_empty() {
            wanted.extend(spec.cognito_actions.iter().map(|a| format!("cognito-idp:{a}")));
            expected_resources.insert("UserPool.Arn".to_owned());
        }
        // The verification key: read by exactly the functions that hash, on that secret alone.
        let secret_env = &function["Properties"]["Environment"]["Variables"]
            [user_service::config::VERIFICATION_KEY_SECRET_ID.name()];
        if spec.reads_verification_key {
            wanted.insert("secretsmanager:GetSecretValue".to_owned());
            expected_resources.insert("VerificationKeySecret".to_owned());
            assert_eq!(text(secret_env), "VerificationKeySecret", "{id}");
        } else {
            assert!(secret_env.is_null(), "{id} must not know the key's secret");
        }
        assert_eq!(actions, wanted, "{id}");
        assert!(!actions.iter().any(|a| a.contains('*')), "{id}");
        // Only the reconcile's sweep reads the whole table.
        let scans = actions.iter().any(|a| a.ends_with(":Scan"));
        assert_eq!(scans, *spec == catalog::RECONCILE_USERS, "{id}");
        assert_eq!(resources, expected_resources, "{id}");
    }
}

#[test]
fn the_routes_attackers_hammer_have_their_own_throttles() {
    let t = template::load();
    let apis = template::of_type(&t, "AWS::Serverless::HttpApi");
    let settings = &apis[0].1["Properties"]["RouteSettings"];
    for function in [
        &catalog::SEND_VERIFICATION,
        &catalog::VERIFY_EMAIL,
        &catalog::CHECK_EMAIL,
    ] {
        let Trigger::Http { method, path, .. } = function.trigger else {
            unreachable!("HTTP functions")
        };
        let route = &settings[format!("{method} {path}").as_str()];
        for setting in ["ThrottlingBurstLimit", "ThrottlingRateLimit"] {
            let (tag, parameter) = tagged(&route[setting]).unwrap_or_else(|| panic!("{method} {path}: {setting}"));
            assert_eq!(tag, "Ref");
            assert!(
                t["Parameters"][text(parameter).as_str()].is_mapping(),
                "{method} {path}: {setting} comes from a parameter"
            );
        }
    }
}

#[test]
fn release_profile_is_built_for_lambda_and_keeps_unwinding() {
    let manifest = std::fs::read_to_string(integration_tests::workspace_root().join("Cargo.toml")).unwrap();
    let release: Vec<String> = manifest
        .split("[profile.release]")
        .nth(1)
        .expect("a release profile")
        .lines()
        .take_while(|l| !l.starts_with('['))
        .map(|l| l.split('#').next().unwrap_or_default().replace(' ', ""))
        .filter(|l| !l.is_empty())
        .collect();
    for setting in ["lto=true", "codegen-units=1", "strip=true", "panic=\"unwind\""] {
        assert!(
            release.iter().any(|l| l == setting),
            "[profile.release] has {setting}: {release:?}"
        );
    }
}

#[test]
fn only_access_tokens_pass_and_users_cannot_rewrite_what_the_service_keeps() {
    let t = template::load();
    let apis = template::of_type(&t, "AWS::Serverless::HttpApi");
    let auth = &apis[0].1["Properties"]["Auth"];
    let default = text(&auth["DefaultAuthorizer"]);
    let scopes: Vec<String> = auth["Authorizers"][default.as_str()]["AuthorizationScopes"]
        .as_sequence()
        .expect("the authorizer requires a scope")
        .iter()
        .map(text)
        .collect();
    assert_eq!(scopes, ["aws.cognito.signin.user.admin"], "ID tokens carry no scope");

    let pools = template::of_type(&t, "AWS::Cognito::UserPool");
    let pool = &pools[0].1["Properties"];
    let usernames: Vec<String> = pool["UsernameAttributes"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(text)
        .collect();
    assert_eq!(usernames, ["email"], "users still sign in by email");
    let email = pool["Schema"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|a| text(&a["Name"]) == "email")
        .unwrap();
    // A required attribute must stay writable by every app client; so it is not required.
    assert_eq!(email["Required"].as_bool(), Some(false));
    for (id, client) in template::of_type(&t, "AWS::Cognito::UserPoolClient") {
        let writable: Vec<String> = client["Properties"]["WriteAttributes"]
            .as_sequence()
            .unwrap_or_else(|| panic!("{id} lists its write attributes (all are writable otherwise)"))
            .iter()
            .map(text)
            .collect();
        // The service alone writes what it keeps: the address, and the names
        // (PATCH /me applies its rules; a direct write would make the stores disagree).
        assert!(
            !writable.is_empty(),
            "{id}: an empty list makes every attribute writable"
        );
        for kept in ["email", "email_verified", "given_name", "family_name", "phone_number"] {
            assert!(
                !writable.iter().any(|a| a == kept),
                "{id} may write {kept}: {writable:?}"
            );
        }
    }
}

#[test]
fn scheduled_functions_run_on_the_catalogs_schedule() {
    let t = template::load();
    for (id, function) in template::of_type(&t, "AWS::Serverless::Function") {
        let spec = catalog::by_name(&text(&function["Metadata"]["BuildProperties"]["Binary"])).unwrap();
        let schedules: Vec<String> = function["Properties"]["Events"]
            .as_mapping()
            .into_iter()
            .flat_map(|events| events.values())
            .filter(|e| text(&e["Type"]) == "Schedule")
            .map(|e| text(&e["Properties"]["Schedule"]))
            .collect();
        match spec.trigger {
            Trigger::Schedule { rate, .. } => assert_eq!(schedules, [rate], "{id}"),
            _ => assert!(schedules.is_empty(), "{id}"),
        }
    }
}

/// Each function deploys at the memory the catalog chose for it; the stack's
/// `FunctionMemorySize` raises a function only when it is above the
/// function's own, and never lowers one (its default, 0, changes nothing).
#[test]
fn each_function_deploys_at_the_catalogs_memory_and_the_parameter_only_raises_it() {
    let t = template::load();
    let parameter = &t["Parameters"]["FunctionMemorySize"];
    assert_eq!(number(&parameter["Default"]), 0.0);
    let allowed: Vec<u32> = parameter["AllowedValues"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| number(v) as u32)
        .collect();
    assert!(
        t["Globals"]["Function"].get("MemorySize").is_none(),
        "no memory for every function at once"
    );
    for (id, function) in template::of_type(&t, "AWS::Serverless::Function") {
        let spec = catalog::by_name(&text(&function["Metadata"]["BuildProperties"]["Binary"])).unwrap();
        assert!(spec.memory_mb >= spec.memory_floor_mb, "{id}");
        let memory = &function["Properties"]["MemorySize"];
        let above: Vec<String> = allowed
            .iter()
            .filter(|v| **v > spec.memory_mb)
            .map(ToString::to_string)
            .collect();
        if above.is_empty() {
            assert_eq!(number(memory) as u32, spec.memory_mb, "{id}");
            continue;
        }
        let (condition, raised, own) = if_of(memory);
        assert_eq!(ref_to(raised), "FunctionMemorySize", "{id}");
        assert_eq!(number(own) as u32, spec.memory_mb, "{id}");
        // The condition holds for exactly the allowed values above the function's own.
        let c = &t["Conditions"][condition.as_str()];
        let (tag, inner) = tagged(c).unwrap();
        let equals: Vec<&Value> = match tag.as_str() {
            "Or" => inner.as_sequence().unwrap().iter().collect(),
            "Equals" => vec![c],
            other => panic!("{id}: {condition} is !{other}"),
        };
        let values: Vec<String> = equals
            .iter()
            .map(|e| {
                let (tag, pair) = tagged(e).unwrap();
                assert_eq!(tag, "Equals", "{condition}");
                let pair = pair.as_sequence().unwrap();
                assert_eq!(ref_to(&pair[0]), "FunctionMemorySize", "{condition}");
                text(&pair[1])
            })
            .collect();
        assert_eq!(values, above, "{id}: {condition}");
    }
}

/// The template's `!If [condition, then, else]`, as (condition, then, else).
fn if_of(value: &Value) -> (String, &Value, &Value) {
    let (tag, inner) = tagged(value).expect("an !If");
    assert_eq!(tag, "If");
    let parts = inner.as_sequence().unwrap();
    (text(&parts[0]), &parts[1], &parts[2])
}

#[test]
fn mail_goes_from_the_verified_identity_through_the_configuration_set_alone() {
    let t = template::load();
    let identity = |v: &Value| {
        let (condition, domain, address) = if_of(v);
        assert_eq!(condition, "HasSenderDomain");
        assert!(text(domain).ends_with(":identity/${SenderDomain}"), "{domain:?}");
        assert!(text(address).ends_with(":identity/${SenderAddress}"), "{address:?}");
    };
    let mail_vars = [
        (user_service::config::VERIFICATION_SENDER.name(), "VerificationSender"),
        (user_service::config::ALLOW_LOG_SENDER.name(), "LogSenderAllowed"),
        (user_service::config::SENDER_ADDRESS.name(), "SenderAddress"),
        (
            user_service::config::SES_CONFIGURATION_SET.name(),
            "SesConfigurationSet",
        ),
    ];
    for (name, _) in mail_vars {
        assert!(
            t["Globals"]["Function"]["Environment"]["Variables"][name].is_null(),
            "{name} is per function"
        );
    }
    for (id, function) in template::of_type(&t, "AWS::Serverless::Function") {
        let spec = catalog::by_name(&text(&function["Metadata"]["BuildProperties"]["Binary"])).unwrap();
        let vars = &function["Properties"]["Environment"]["Variables"];
        let mail: Vec<&Value> = statements(&t, &id, function)
            .into_iter()
            .filter(|s| text(&s["Sid"]) == MAIL_SID)
            .collect();
        if !spec.sends_email {
            assert!(mail.is_empty(), "{id} sends no mail");
            for (name, _) in mail_vars {
                assert!(vars[name].is_null(), "{id} has no {name}");
            }
            continue;
        }
        for (name, parameter) in mail_vars {
            let (tag, inner) = tagged(&vars[name]).unwrap_or_else(|| panic!("{id}: {name}"));
            assert_eq!((tag.as_str(), text(inner).as_str()), ("Ref", parameter), "{id}: {name}");
        }
        assert_eq!(mail.len(), 1, "{id}");
        let statement = mail[0];
        let actions: Vec<String> = statement["Action"].as_sequence().unwrap().iter().map(text).collect();
        assert_eq!(actions, ["ses:SendEmail"], "{id}");
        // SES authorizes a send against the identity (the address, or its domain)
        // and the configuration set.
        let resources = statement["Resource"].as_sequence().unwrap();
        assert_eq!(resources.len(), 3, "{id}");
        assert!(text(&resources[0]).ends_with(":identity/${SenderAddress}"), "{id}");
        let (condition, domain, otherwise) = if_of(&resources[1]);
        assert_eq!(condition, "HasSenderDomain", "{id}");
        assert!(text(domain).ends_with(":identity/${SenderDomain}"), "{id}");
        assert_eq!(text(otherwise), "AWS::NoValue", "{id}");
        assert!(
            text(&resources[2]).ends_with(":configuration-set/${SesConfigurationSet}"),
            "{id}"
        );
        assert_eq!(
            text(&statement["Condition"]["StringEquals"]["ses:FromAddress"]),
            "SenderAddress",
            "{id}"
        );
    }
    // ses by default; log only on a stack that allows it.
    assert_eq!(text(&t["Parameters"]["VerificationSender"]["Default"]), "ses");
    assert_eq!(text(&t["Parameters"]["LogSenderAllowed"]["Default"]), "false");
    let rule = &t["Rules"]["LogSenderOnlyWhenAllowed"];
    assert!(format!("{:?}", rule["RuleCondition"]).contains("VerificationSender"));
    assert!(format!("{:?}", rule["Assertions"]).contains("LogSenderAllowed"));
    assert_eq!(template::of_type(&t, "AWS::SES::ConfigurationSet").len(), 1);
    // Cognito's own mail goes through SES too, from the same identity.
    let pools = template::of_type(&t, "AWS::Cognito::UserPool");
    let (condition, developer, _) = if_of(&pools[0].1["Properties"]["EmailConfiguration"]);
    assert_eq!(condition, "CognitoSendsWithSes");
    assert_eq!(text(&developer["EmailSendingAccount"]), "DEVELOPER");
    identity(&developer["SourceArn"]);
    assert_eq!(text(&t["Parameters"]["CognitoEmailSending"]["Default"]), "DEVELOPER");
}

#[test]
fn profile_changes_reach_the_consumer_and_nothing_is_dropped_silently() {
    let t = template::load();
    let tables = template::of_type(&t, "AWS::DynamoDB::Table");
    assert_eq!(
        text(&tables[0].1["Properties"]["StreamSpecification"]["StreamViewType"]),
        user_service::store::schema::STREAM_VIEW.as_str()
    );
    let alarms = template::of_type(&t, "AWS::CloudWatch::Alarm");
    // Alarms that exist in every stack (not only with EnableAlarms) on `metric` of `target`.
    let unconditional_alarm = |metric: &str, target: &str| {
        alarms.iter().any(|(_, a)| {
            a["Condition"].is_null()
                && text(&a["Properties"]["MetricName"]) == metric
                && text(&a["Properties"]["Dimensions"][0]["Value"]).starts_with(target)
        })
    };
    let mut consumers = 0;
    for (id, function) in template::of_type(&t, "AWS::Serverless::Function") {
        let spec = catalog::by_name(&text(&function["Metadata"]["BuildProperties"]["Binary"])).unwrap();
        let streams: Vec<&Value> = function["Properties"]["Events"]
            .as_mapping()
            .into_iter()
            .flat_map(|events| events.values())
            .filter(|e| text(&e["Type"]) == "DynamoDB")
            .collect();
        let Trigger::TableStream { filters, .. } = spec.trigger else {
            assert!(streams.is_empty(), "{id} reads no stream");
            continue;
        };
        consumers += 1;
        assert_eq!(streams.len(), 1, "{id}");
        let p = &streams[0]["Properties"];
        assert_eq!(text(&p["Stream"]), "Table.StreamArn", "{id}");
        let patterns: Vec<serde_json::Value> = p["FilterCriteria"]["Filters"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|f| serde_json::from_str(&text(&f["Pattern"])).unwrap())
            .collect();
        let listed: Vec<serde_json::Value> = filters.iter().map(|f| serde_json::from_str(f).unwrap()).collect();
        assert_eq!(patterns, listed, "{id}");
        assert_eq!(p["BisectBatchOnFunctionError"].as_bool(), Some(true), "{id}");
        let retries = p["MaximumRetryAttempts"].as_i64().unwrap();
        assert!((0..=10).contains(&retries), "{id}: retries are bounded, not {retries}");
        assert!(p["MaximumRecordAgeInSeconds"].as_i64().unwrap() > 0, "{id}");
        let responses: Vec<String> = p["FunctionResponseTypes"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(text)
            .collect();
        assert_eq!(responses, ["ReportBatchItemFailures"], "{id}");
        let on_failure = &p["DestinationConfig"]["OnFailure"];
        assert_eq!(text(&on_failure["Type"]), "SQS", "{id}");
        let queue = text(&on_failure["Destination"]);
        let queue = queue.strip_suffix(".Arn").expect("a queue's ARN");
        assert_eq!(text(&t["Resources"][queue]["Type"]), "AWS::SQS::Queue");
        assert!(
            unconditional_alarm("ApproximateNumberOfMessagesVisible", &format!("{queue}.QueueName")),
            "an alarm on {queue}"
        );
        assert!(unconditional_alarm("IteratorAge", &id), "an iterator-age alarm on {id}");
    }
    assert_eq!(consumers, 2, "a table's stream serves two readers at most");
}

#[test]
fn events_go_on_the_stacks_bus_and_a_webhook_is_retried_then_kept_and_watched() {
    let t = template::load();
    let r = &t["Resources"];
    assert_eq!(text(&r["EventBus"]["Type"]), "AWS::Events::EventBus");
    for output in ["EventBusName", "EventBusArn", "EventSource", "EventFailureQueueUrl"] {
        assert!(!t["Outputs"][output].is_null(), "output {output}");
    }
    assert_eq!(
        text(&t["Outputs"]["EventFailureQueueUrl"]["Value"]),
        "PublishEventsFailures"
    );
    // Only the publishers (and the roles EventPublisherArns names) may put events.
    let policy = &r["EventBusPublishersOnly"]["Properties"];
    assert_eq!(text(&policy["EventBusName"]), "EventBus");
    let statement = &policy["Statement"];
    assert_eq!(
        (
            text(&statement["Effect"]),
            text(&statement["Action"]),
            text(&statement["Principal"])
        ),
        ("Deny".to_owned(), "events:PutEvents".to_owned(), "*".to_owned())
    );
    let allowed = format!("{:?}", statement["Condition"]["ArnNotLike"]["aws:PrincipalArn"]);
    for f in catalog::FUNCTIONS.iter().filter(|f| f.publishes_events) {
        let pascal: String = f.name.split('-').map(|w| w[..1].to_uppercase() + &w[1..]).collect();
        assert!(allowed.contains(&format!("{pascal}FunctionRole.Arn")), "{allowed}");
    }
    assert!(allowed.contains("EventPublisherArns"), "{allowed}");
    // Off by default: no addresses, no webhook, no registry.
    let parameter = |name: &str| text(&t["Parameters"][name]["Default"]);
    assert_eq!(parameter("EventsIncludeAddresses"), "false");
    assert_eq!(parameter("WebhookUrl"), "");
    assert_eq!(parameter("RegisterEventSchemas"), "false");
    for webhook in [
        "WebhookSecret",
        "WebhookConnection",
        "WebhookDestination",
        "WebhookRole",
        "WebhookRule",
        "WebhookDeadLetters",
        "WebhookDeadLettersPolicy",
        "WebhookDeadLettersAlarm",
    ] {
        assert_eq!(text(&r[webhook]["Condition"]), "WebhookOn", "{webhook}");
    }
    let rule = &r["WebhookRule"]["Properties"];
    assert_eq!(text(&rule["EventBusName"]), "EventBus");
    let target = &rule["Targets"][0];
    assert_eq!(text(&target["Arn"]), "WebhookDestination.Arn");
    assert_eq!(text(&target["InputPath"]), "$.detail", "the body is the CloudEvent");
    assert_eq!(text(&target["DeadLetterConfig"]["Arn"]), "WebhookDeadLetters.Arn");
    assert!(target["RetryPolicy"]["MaximumRetryAttempts"].as_i64().unwrap() > 0);
    assert_eq!(
        text(&r["WebhookDestination"]["Properties"]["InvocationRateLimitPerSecond"]),
        "WebhookRateLimitPerSecond"
    );
    let role = &r["WebhookRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"][0];
    assert_eq!(text(&role["Action"]), "events:InvokeApiDestination");
    assert_eq!(text(&role["Resource"]), "WebhookDestination.Arn");
    let alarm = &r["WebhookDeadLettersAlarm"]["Properties"];
    assert_eq!(text(&alarm["MetricName"]), "ApproximateNumberOfMessagesVisible");
    assert_eq!(text(&alarm["Dimensions"][0]["Value"]), "WebhookDeadLetters.QueueName");
    assert_eq!(alarm["Threshold"].as_f64(), Some(1.0));
    // The registry holds one schema per type, when asked for.
    let schemas = template::of_type(&t, "AWS::EventSchemas::Schema");
    assert_eq!(schemas.len(), user_service::events::EventType::ALL.len());
    for (id, schema) in schemas {
        assert_eq!(text(&schema["Condition"]), "EventSchemasRegistered", "{id}");
        let content: serde_json::Value = serde_json::from_str(&text(&schema["Properties"]["Content"])).unwrap();
        assert_eq!(content["$schema"], "http://json-schema.org/draft-04/schema#", "{id}");
        assert!(!content.to_string().contains("\"const\""), "{id}: draft 4 has no const");
    }
}

/// docs/architecture.md, "Adding a function": a function is its handler module
/// (`shared/src/api/routes/<name>.rs`, or `api/events/<name>.rs`), its catalog
/// entry and its event file; an HTTP route also its operation in openapi.yaml,
/// and a store operation of its own, if it writes something new, is that
/// module and its line in `store/ops/mod.rs`. Everything else is generated from
/// the catalog (`cargo xtask template`: the function's crate, the handlers'
/// module lists, the template) or found by walking it (the test app, the fuzz
/// target, the contract and hostile suites walk `api::routes::ROUTES`). No
/// other hand-written file may name it, in any spelling: `add-email`,
/// `ADD_EMAIL`, `AddEmailFunction`, `routes::add_email`, `add_email::AddEmail`
/// (its module and its route). A SCIM route's handler is in `api::scim`, its
/// own module, with its entry in `ScimRoute`. The suites that
/// test a function by name, the test app's convenience method per route, the
/// benchmark's chosen paths and the docs may name it; nothing needs them to.
#[test]
fn adding_a_function_needs_only_its_own_files() {
    let root = integration_tests::workspace_root();
    let listed = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .expect("git lists the tracked files");
    assert!(listed.status.success(), "git ls-files failed");
    let files: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .split('\0')
        .filter(|f| !f.is_empty())
        .map(str::to_owned)
        .collect();
    assert!(files.iter().any(|f| f == "template.yaml"), "tracked files found");
    let hand_written = |file: &str| -> Option<String> {
        let text = std::fs::read_to_string(root.join(file)).ok()?;
        // A file written whole by xtask says so in its first lines.
        if text
            .lines()
            .take(3)
            .any(|l| l.contains("Written by `cargo xtask template`"))
        {
            return None;
        }
        // Unit tests close a Rust file; they may name anything.
        let text = match text.find("#[cfg(test)]") {
            Some(tests) if file.ends_with(".rs") => &text[..tests],
            _ => &text[..],
        };
        // Generated regions are the catalog's; comments need no edit to work.
        let mut kept = String::new();
        let mut generated = false;
        for line in text.lines() {
            let line = line.trim_start();
            if line.starts_with("# >>> generated:") || line.starts_with("// >>> generated:") {
                generated = true;
            } else if line.starts_with("# <<< generated:") || line.starts_with("// <<< generated:") {
                generated = false;
            } else if !generated && !line.starts_with("//") && !line.starts_with('#') {
                kept.push_str(line);
                kept.push('\n');
            }
        }
        Some(kept)
    };
    // A whole name: `verify-email` is not named by `admin-verify-email`.
    let names = |text: &str, spelling: &str| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        text.match_indices(spelling).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + spelling.len()..].chars().next();
            !before.is_some_and(word) && !after.is_some_and(word)
        })
    };
    // Suites that test a function by name; the support code (tests/src), the
    // contract and hostile suites and the fuzz targets are held to the rule.
    let a_suite = |file: &str| {
        ["tests/integration/", "tests/e2e/", "tests/workload/", "tests/model/"]
            .iter()
            .any(|dir| file.starts_with(dir))
    };
    let mut extra = Vec::new();
    for f in catalog::FUNCTIONS {
        let snake = f.name.replace('-', "_");
        let constant = snake.to_uppercase();
        let pascal: String = f.name.split('-').map(|w| w[..1].to_uppercase() + &w[1..]).collect();
        // The snake and Pascal names alone are also a store method's and a
        // Cognito trigger's or API's (`add_email`, `ListUsers`): they count as
        // the function's where they name its module or route.
        let spellings = [
            f.name.to_owned(),
            constant.clone(),
            format!("{pascal}Function"),
            format!("routes::{snake}"),
            format!("events::{snake}"),
            format!("{snake}::{pascal}"),
        ];
        let own = |file: &str| {
            file.starts_with(&format!("events/{}", f.name))
                || file == format!("shared/src/api/routes/{snake}.rs")
                || file.starts_with(&format!("shared/src/api/routes/{snake}/"))
                || file == format!("shared/src/api/events/{snake}.rs")
                || file == "shared/src/catalog.rs"
                || file.starts_with("shared/src/catalog/")
                // A SCIM route's handler and entry are the SCIM module's (RFC 7644's routes, together).
                || (f.is_scim() && file.starts_with("shared/src/api/scim/"))
        };
        // Cognito and stream triggers are wired in hand-written parts of the
        // template that tests above check against the catalog.
        let wired_by_trigger = |file: &str| file == "template.yaml" && !matches!(f.trigger, Trigger::Http { .. });
        // A route's operation in the contract is written by hand (clients
        // generate from it); tests/contract fails until it is there.
        let documented_route = |file: &str| file == "openapi.yaml" && matches!(f.trigger, Trigger::Http { .. });
        // The test app's method per function is the suites' convenience,
        // written with its first test; an HTTP route's goes through the routes'
        // list, an event's to its handler.
        let convenience = |file: &str, spelling: &str| {
            file == "tests/src/test_app.rs" && (*spelling == constant || *spelling == format!("events::{snake}"))
        };
        for file in &files {
            if own(file)
                || wired_by_trigger(file)
                || documented_route(file)
                || a_suite(file)
                // Seed inputs of the fuzz targets, test data as the suites' are.
                || file.starts_with("fuzz/corpus/")
                // The benchmark measures chosen paths; a function it has not
                // been taught shows as such in its report.
                || file.starts_with("tools/bench/")
                || file.starts_with("docs/")
                || file.ends_with(".md")
                || file == "Cargo.lock"
            {
                continue;
            }
            let Some(text) = hand_written(file) else { continue };
            for spelling in &spellings {
                if !convenience(file, spelling) && names(&text, spelling) {
                    extra.push(format!("{file} names {spelling}"));
                }
            }
        }
    }
    assert!(
        extra.is_empty(),
        "hand-written files beyond the function's own: {extra:#?}"
    );
}

/// A parameter's number (Default, MinValue, MaxValue).
fn number(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| text(v).parse().unwrap_or_else(|_| panic!("a number: {v:?}")))
}

/// A `!Ref`'s target.
fn ref_to(v: &Value) -> String {
    let (tag, inner) = tagged(v).unwrap_or_else(|| panic!("a !Ref: {v:?}"));
    assert_eq!(tag, "Ref", "{v:?}");
    text(inner)
}

#[test]
fn capacity_is_on_demand_until_a_parameter_provisions_the_table_and_gsi1_apart() {
    let t = template::load();
    let parameters = &t["Parameters"];
    let allowed: Vec<String> = parameters["TableBillingMode"]["AllowedValues"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(text)
        .collect();
    assert_eq!(allowed, ["PAY_PER_REQUEST", "PROVISIONED"]);
    assert!(format!("{:?}", t["Conditions"]["ProvisionedCapacity"]).contains("TableBillingMode"));
    for target in [
        "TableTargetUtilization",
        "Gsi1TargetUtilization",
        "Gsi2TargetUtilization",
    ] {
        let p = &parameters[target];
        assert_eq!(
            (number(&p["Default"]), number(&p["MinValue"]), number(&p["MaxValue"])),
            (70.0, 20.0, 90.0),
            "{target}"
        );
    }
    // The table and GSI1 start at their minimums, only when provisioned.
    let table = &template::of_type(&t, "AWS::DynamoDB::Table")[0].1["Properties"];
    let gsi1 = &table["GlobalSecondaryIndexes"][0];
    let gsi2 = &table["GlobalSecondaryIndexes"][1];
    for (throughput, prefix) in [
        (&table["ProvisionedThroughput"], "Table"),
        (&gsi1["ProvisionedThroughput"], "Gsi1"),
        (&gsi2["ProvisionedThroughput"], "Gsi2"),
    ] {
        let (condition, provisioned, otherwise) = if_of(throughput);
        assert_eq!(condition, "ProvisionedCapacity", "{prefix}");
        assert_eq!(
            ref_to(&provisioned["ReadCapacityUnits"]),
            format!("{prefix}ReadCapacityMin")
        );
        assert_eq!(
            ref_to(&provisioned["WriteCapacityUnits"]),
            format!("{prefix}WriteCapacityMin")
        );
        assert_eq!(text(otherwise), "AWS::NoValue", "{prefix}");
    }
    // Reads and writes of the table and of GSI1, each scaled on its own, by the
    // service-linked role.
    let targets = template::of_type(&t, "AWS::ApplicationAutoScaling::ScalableTarget");
    let mut scaled = BTreeSet::new();
    for (id, target) in &targets {
        assert_eq!(text(&target["Condition"]), "ProvisionedCapacity", "{id}");
        let p = &target["Properties"];
        assert_eq!(text(&p["ServiceNamespace"]), "dynamodb", "{id}");
        assert!(p["RoleARN"].is_null(), "{id}: the service-linked role, no role of ours");
        let (scope, prefix) = match text(&p["ResourceId"]).as_str() {
            "table/${Table}" => ("table", "Table"),
            r if r == format!("table/${{Table}}/index/{}", keys::GSI1) => ("index", "Gsi1"),
            r if r == format!("table/${{Table}}/index/{}", keys::GSI2) => ("index", "Gsi2"),
            other => panic!("{id}: {other}"),
        };
        let dimension = text(&p["ScalableDimension"]);
        let kind = if dimension == format!("dynamodb:{scope}:ReadCapacityUnits") {
            "Read"
        } else {
            assert_eq!(dimension, format!("dynamodb:{scope}:WriteCapacityUnits"), "{id}");
            "Write"
        };
        assert_eq!(ref_to(&p["MinCapacity"]), format!("{prefix}{kind}CapacityMin"), "{id}");
        assert_eq!(ref_to(&p["MaxCapacity"]), format!("{prefix}{kind}CapacityMax"), "{id}");
        for bound in ["Min", "Max"] {
            assert!(
                parameters[format!("{prefix}{kind}Capacity{bound}").as_str()].is_mapping(),
                "{id}"
            );
        }
        let policies: Vec<&Value> = template::of_type(&t, "AWS::ApplicationAutoScaling::ScalingPolicy")
            .into_iter()
            .map(|(_, policy)| policy)
            .filter(|policy| ref_to(&policy["Properties"]["ScalingTargetId"]) == *id)
            .collect();
        assert_eq!(policies.len(), 1, "{id}: one policy");
        assert_eq!(text(&policies[0]["Condition"]), "ProvisionedCapacity", "{id}");
        let policy = &policies[0]["Properties"];
        assert_eq!(text(&policy["PolicyType"]), "TargetTrackingScaling", "{id}");
        let tracking = &policy["TargetTrackingScalingPolicyConfiguration"];
        assert_eq!(
            ref_to(&tracking["TargetValue"]),
            format!("{prefix}TargetUtilization"),
            "{id}"
        );
        assert_eq!(
            text(&tracking["PredefinedMetricSpecification"]["PredefinedMetricType"]),
            format!("DynamoDB{kind}CapacityUtilization"),
            "{id}"
        );
        scaled.insert((prefix, kind));
    }
    assert_eq!(targets.len(), 6);
    assert_eq!(scaled.len(), 6, "{scaled:?}");
}

/// An alarm's metrics: its own, or those of its metric-math list.
fn alarm_metrics(alarm: &Value) -> Vec<&Value> {
    let p = &alarm["Properties"];
    match p["Metrics"].as_sequence() {
        Some(list) => list
            .iter()
            .filter(|m| m["MetricStat"].is_mapping())
            .map(|m| &m["MetricStat"]["Metric"])
            .collect(),
        None => vec![p],
    }
}

/// The dimensions of a metric, as (name, value text).
fn dimensions(metric: &Value) -> Vec<(String, String)> {
    metric["Dimensions"]
        .as_sequence()
        .into_iter()
        .flatten()
        .map(|d| (text(&d["Name"]), text(&d["Value"])))
        .collect()
}

#[test]
fn alarms_are_on_by_default_and_every_alarm_notifies() {
    let t = template::load();
    assert_eq!(text(&t["Parameters"]["EnableAlarms"]["Default"]), "true");
    let alarms = template::of_type(&t, "AWS::CloudWatch::Alarm");
    assert!(!alarms.is_empty());
    for (id, alarm) in &alarms {
        let p = &alarm["Properties"];
        assert!(
            text(&p["AlarmName"]).starts_with("${AWS::StackName}-"),
            "{id}: named after the stack"
        );
        assert!(!text(&p["AlarmDescription"]).is_empty(), "{id}");
        assert!(
            ["notBreaching", "breaching", "ignore", "missing"].contains(&text(&p["TreatMissingData"]).as_str()),
            "{id}: missing data is treated deliberately"
        );
        for actions in ["AlarmActions", "OKActions"] {
            let listed = format!("{:?}", p[actions]);
            assert!(listed.contains("AlarmTopic"), "{id}: {actions} notify the topic");
            // Either the alarm exists only with alarms on, or it notifies only
            // then (one that exists with its resource, the webhook's, too).
            if alarm["Condition"].is_null() || text(&alarm["Condition"]) == "WebhookOn" {
                assert_eq!(if_of(&p[actions]).0, "AlarmsEnabled", "{id}: {actions}");
            } else {
                assert_eq!(text(&alarm["Condition"]), "AlarmsEnabled", "{id}");
            }
        }
    }
}

#[test]
fn every_function_is_watched_for_errors_throttles_duration_and_condition_failures() {
    let t = template::load();
    let alarms = template::of_type(&t, "AWS::CloudWatch::Alarm");
    let namespace = text(&t["Globals"]["Function"]["Environment"]["Variables"]["METRICS_NAMESPACE"]);
    assert_eq!(namespace, "UserService/${AWS::StackName}");
    for (id, function) in template::of_type(&t, "AWS::Serverless::Function") {
        let spec = catalog::by_name(&text(&function["Metadata"]["BuildProperties"]["Binary"])).unwrap();
        // This function's alarms: those whose metrics are its own.
        let own: Vec<&Value> = alarms
            .iter()
            .map(|(_, a)| *a)
            .filter(|a| {
                alarm_metrics(a)
                    .iter()
                    .any(|m| dimensions(m).contains(&("FunctionName".to_owned(), id.clone())))
            })
            .collect();
        let on = |namespace: &str, metric: &str| -> Vec<&Value> {
            own.iter()
                .copied()
                .filter(|a| {
                    alarm_metrics(a)
                        .iter()
                        .any(|m| text(&m["Namespace"]) == namespace && text(&m["MetricName"]) == metric)
                })
                .collect()
        };
        assert_eq!(on("AWS/Lambda", "Errors").len(), 1, "{id}: errors");
        assert_eq!(on("AWS/Lambda", "Throttles").len(), 1, "{id}: throttles");
        let duration = on("AWS/Lambda", "Duration");
        assert_eq!(duration.len(), 1, "{id}: duration");
        let p = &duration[0]["Properties"];
        if spec.alarms.contains(&catalog::Alarm::PassOverdue) {
            // Runs that use their whole time: one run past the point where
            // it stops itself, and a pass overdue.
            assert_eq!(text(&p["Statistic"]), "Maximum", "{id}");
            let stop = spec.timeout_seconds - user_service::reconcile::RUN_RESERVE_SECONDS;
            assert_eq!(number(&p["Threshold"]), f64::from(stop) * 1000.0, "{id}");
            assert_eq!(text(&p["ComparisonOperator"]), "GreaterThanThreshold", "{id}");
            let overdue = on(&namespace, Metric::ReconcilePassesCompleted.name());
            assert_eq!(overdue.len(), 1, "{id}: pass overdue");
            let p = &overdue[0]["Properties"];
            assert_eq!(text(&p["TreatMissingData"]), "breaching", "{id}");
            assert_eq!(text(&p["ComparisonOperator"]), "LessThanThreshold", "{id}");
        } else {
            assert_eq!(text(&p["ExtendedStatistic"]), "p99", "{id}");
            // 80 % of the timeout the catalog gives it, in ms.
            assert_eq!(number(&p["Threshold"]), f64::from(spec.timeout_seconds) * 800.0, "{id}");
            assert_eq!(text(&p["ComparisonOperator"]), "GreaterThanOrEqualToThreshold", "{id}");
        }
        let writes = spec
            .dynamodb_actions
            .iter()
            .any(|a| ["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems"].contains(a));
        let failures = on(&namespace, Metric::ConditionalCheckFailures.name());
        assert_eq!(
            failures.len(),
            usize::from(writes),
            "{id}: a spike alarm exactly where it writes"
        );
        for alarm in failures {
            let p = &alarm["Properties"];
            assert_eq!(text(&p["ComparisonOperator"]), "GreaterThanUpperThreshold", "{id}");
            let band = p["Metrics"]
                .as_sequence()
                .unwrap()
                .iter()
                .find(|m| text(&m["Id"]) == text(&p["ThresholdMetricId"]))
                .expect("the threshold is a metric of the alarm");
            assert!(text(&band["Expression"]).starts_with("ANOMALY_DETECTION_BAND("), "{id}");
            let dims = dimensions(alarm_metrics(alarm)[0]);
            assert_eq!(
                dims,
                [(metrics::DIMENSION.to_owned(), id.clone())],
                "{id}: the function is the one dimension"
            );
        }
    }
}

/// A burst of forgot-password migrations (anyone who knows an address can
/// start one, and it ends that user's legacy password) has its alarm, at the
/// stack's threshold.
#[test]
fn a_burst_of_password_reset_migrations_is_an_alarm() {
    let t = template::load();
    let alarms = template::of_type(&t, "AWS::CloudWatch::Alarm");
    let bursts: Vec<&Value> = alarms
        .iter()
        .map(|(_, a)| *a)
        .filter(|a| {
            alarm_metrics(a)
                .iter()
                .any(|m| text(&m["MetricName"]) == Metric::MigrationsByPasswordReset.name())
        })
        .collect();
    assert_eq!(bursts.len(), 1);
    let p = &bursts[0]["Properties"];
    assert!(format!("{:?}", p["Threshold"]).contains("MigrationResetAlarmThreshold"));
    assert_eq!(text(&p["ComparisonOperator"]), "GreaterThanThreshold");
    assert_eq!(text(&p["Statistic"]), "Sum");
    assert_eq!(
        dimensions(alarm_metrics(bursts[0])[0]),
        [(metrics::DIMENSION.to_owned(), "MigrateUserFunction".to_owned())]
    );
    let parameter = &t["Parameters"]["MigrationResetAlarmThreshold"];
    assert!(number(&parameter["Default"]) >= 1.0);
}

#[test]
fn the_api_alarm_watches_the_share_of_5xx_not_a_count() {
    let t = template::load();
    let alarms = template::of_type(&t, "AWS::CloudWatch::Alarm");
    let api: Vec<&Value> = alarms
        .iter()
        .map(|(_, a)| *a)
        .filter(|a| {
            alarm_metrics(a)
                .iter()
                .any(|m| text(&m["Namespace"]) == "AWS/ApiGateway")
        })
        .collect();
    assert_eq!(api.len(), 1);
    let p = &api[0]["Properties"];
    assert!(p["MetricName"].is_null(), "no single-metric 5xx count");
    let list = p["Metrics"].as_sequence().expect("metric math");
    let id_of = |metric: &str| {
        list.iter()
            .find(|m| text(&m["MetricStat"]["Metric"]["MetricName"]) == metric)
            .map(|m| text(&m["Id"]))
            .unwrap_or_else(|| panic!("{metric} is in the ratio"))
    };
    let (errors, requests) = (id_of("5xx"), id_of("Count"));
    let result: Vec<&Value> = list
        .iter()
        .filter(|m| m["ReturnData"].as_bool() == Some(true))
        .collect();
    assert_eq!(result.len(), 1);
    let expression = text(&result[0]["Expression"]);
    assert!(
        expression.contains(&format!("{errors} / {requests}"))
            || expression.contains(&format!("{errors}, 0) / {requests}")),
        "{expression}"
    );
    assert!(expression.contains("100 *"), "a percentage: {expression}");
    let threshold = ref_to(&p["Threshold"]);
    assert_eq!(number(&t["Parameters"][threshold.as_str()]["Default"]), 1.0);
    assert!(expression.contains("${Api5xxAlarmMinRequests}"), "{expression}");
    assert_eq!(p["EvaluationPeriods"].as_i64(), Some(3));
}

#[test]
fn gsi1_and_the_table_are_each_watched_on_their_own() {
    let t = template::load();
    let alarms = template::of_type(&t, "AWS::CloudWatch::Alarm");
    let mut watched = BTreeSet::new();
    for (id, alarm) in &alarms {
        let metrics = alarm_metrics(alarm);
        let on_table: Vec<&&Value> = metrics
            .iter()
            .filter(|m| text(&m["Namespace"]) == "AWS/DynamoDB")
            .collect();
        if on_table.is_empty() {
            continue;
        }
        assert_eq!(metrics.len(), 1, "{id}: one concern, one metric");
        let dims = dimensions(on_table[0]);
        assert_eq!(dims[0], ("TableName".to_owned(), "Table".to_owned()), "{id}");
        let scope = match &dims[1..] {
            [] => "table",
            [(name, value)] if name == "GlobalSecondaryIndexName" && value == keys::GSI1 => "GSI1",
            [(name, value)] if name == "GlobalSecondaryIndexName" && value == keys::GSI2 => "GSI2",
            other => panic!("{id}: {other:?}"),
        };
        assert!(
            watched.insert((scope, text(&on_table[0]["MetricName"]))),
            "{id}: watched twice"
        );
    }
    for scope in ["table", "GSI1", "GSI2"] {
        for metric in ["ReadThrottleEvents", "WriteThrottleEvents"] {
            assert!(watched.contains(&(scope, metric.to_owned())), "{scope} {metric}");
        }
    }
    assert!(watched.contains(&("table", "ConditionalCheckFailedRequests".to_owned())));
}

#[test]
fn ses_reputation_is_watched_where_aws_reviews_an_account() {
    let t = template::load();
    let alarms = template::of_type(&t, "AWS::CloudWatch::Alarm");
    for (metric, threshold) in [("Reputation.BounceRate", 0.05), ("Reputation.ComplaintRate", 0.001)] {
        let found: Vec<&Value> = alarms
            .iter()
            .map(|(_, a)| &a["Properties"])
            .filter(|p| text(&p["Namespace"]) == "AWS/SES" && text(&p["MetricName"]) == metric)
            .collect();
        assert_eq!(found.len(), 1, "{metric}");
        assert!((number(&found[0]["Threshold"]) - threshold).abs() < 1e-9, "{metric}");
        assert_eq!(text(&found[0]["ComparisonOperator"]), "GreaterThanOrEqualToThreshold");
        assert!(found[0]["Dimensions"].is_null(), "{metric}: the account's rate");
    }
}

/// `text` with every `${...}` replaced by `1` (a number is valid JSON both
/// inside and outside a string), each name checked against `known`.
fn substituted(text: &str, known: &dyn Fn(&str) -> bool) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}').expect("a closed substitution") + at;
        let name = &rest[at + 2..end];
        assert!(known(name), "${{{name}}} names nothing in the template");
        out.push('1');
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_dashboard_draws_every_function_metric_and_alarm_and_the_table_and_gsi1_apart() {
    let t = template::load();
    let dashboards = template::of_type(&t, "AWS::CloudWatch::Dashboard");
    assert_eq!(dashboards.len(), 1);
    let (id, dashboard) = &dashboards[0];
    assert!(dashboard["Condition"].is_null(), "{id} exists in every stack");
    assert_eq!(ref_to(&dashboard["Properties"]["DashboardName"]), "AWS::StackName");
    let (tag, sub) = tagged(&dashboard["Properties"]["DashboardBody"]).unwrap();
    assert_eq!(tag, "Sub");
    let sub = sub.as_sequence().expect("!Sub [body, variables]");
    let body = text(&sub[0]);
    let (condition, enabled, disabled) = if_of(&sub[1]["AlarmStatus"]);
    assert_eq!(condition, "AlarmsEnabled");
    let known = |name: &str| {
        let resource = name.split('.').next().unwrap_or_default();
        name.starts_with("AWS::") || t["Resources"][resource].is_mapping() || t["Parameters"][name].is_mapping()
    };
    // The webhook's alarm exists only with a webhook: the dashboard, whose
    // body cannot name a resource that may not exist, leaves it out.
    let alarms: Vec<_> = template::of_type(&t, "AWS::CloudWatch::Alarm")
        .into_iter()
        .filter(|(_, a)| text(&a["Condition"]) != "WebhookOn")
        .collect();
    let stream_consumers = catalog::FUNCTIONS
        .iter()
        .filter(|f| matches!(f.trigger, Trigger::TableStream { .. }))
        .count();
    for (branch, listed) in [(enabled, alarms.len()), (disabled, 2 * stream_consumers)] {
        let widget = text(branch);
        let json = substituted(&body.replace("${AlarmStatus}", &widget), &known);
        let parsed: serde_json::Value = serde_json::from_str(&json).expect("the body is JSON once substituted");
        let widgets = parsed["widgets"].as_array().unwrap();
        // CloudWatch's alarm widget shows 100 alarms at most: more go to the next.
        let alarm_widgets: Vec<_> = widgets.iter().filter(|w| w["type"] == "alarm").collect();
        assert!(!alarm_widgets.is_empty(), "an alarm widget");
        let counts: Vec<usize> = alarm_widgets
            .iter()
            .map(|w| w["properties"]["alarms"].as_array().unwrap().len())
            .collect();
        assert!(counts.iter().all(|n| *n <= 100), "{counts:?}");
        assert_eq!(counts.iter().sum::<usize>(), listed);
        for w in widgets {
            for key in ["x", "y", "width", "height"] {
                assert!(w[key].is_u64(), "{w}: {key}");
            }
            // Every line of a graph is an array: a metric, or `[{"expression": …}]`.
            for line in w["properties"]["metrics"].as_array().into_iter().flatten() {
                let last = line
                    .as_array()
                    .and_then(|l| l.last())
                    .unwrap_or_else(|| panic!("{line}"));
                assert!(last.is_object(), "{line}: options last");
            }
        }
    }
    // With alarms on, every alarm; with alarms off, those that exist anyway.
    for (alarm, resource) in &alarms {
        let arn = format!("${{{alarm}.Arn}}");
        assert!(text(enabled).contains(&arn), "{arn}");
        assert_eq!(text(disabled).contains(&arn), resource["Condition"].is_null(), "{arn}");
    }
    for (function, resource) in template::of_type(&t, "AWS::Serverless::Function") {
        let spec = catalog::by_name(&text(&resource["Metadata"]["BuildProperties"]["Binary"])).unwrap();
        for metric in ["Duration", "Errors", "Throttles", "ConcurrentExecutions"] {
            assert!(
                body.contains(&format!(r#"["AWS/Lambda","{metric}","FunctionName","${{{function}}}""#)),
                "{function}: {metric}"
            );
        }
        assert!(
            body.contains(&format!(
                r##"{{"color":"#d62728","label":"timeout","value":{}}}"##,
                spec.timeout_seconds * 1000
            )),
            "{function}: its timeout"
        );
    }
    for metric in Metric::ALL {
        assert!(
            body.contains(&format!(r#"MetricName=\"{}\"'"#, metric.name())),
            "{}",
            metric.name()
        );
    }
    assert!(body.contains(r#"{\"UserService/${AWS::StackName}\",FunctionName}"#));
    for consumed in [
        "ConsumedReadCapacityUnits",
        "ConsumedWriteCapacityUnits",
        "ReadThrottleEvents",
        "WriteThrottleEvents",
    ] {
        assert!(
            body.contains(&format!(r#"["AWS/DynamoDB","{consumed}","TableName","${{Table}}",{{"#)),
            "table {consumed}"
        );
        for index in [keys::GSI1, keys::GSI2] {
            assert!(
                body.contains(&format!(
                    r#"["AWS/DynamoDB","{consumed}","TableName","${{Table}}","GlobalSecondaryIndexName","{index}""#
                )),
                "{index} {consumed}"
            );
        }
    }
    assert!(body.contains(r#""IteratorAge","FunctionName","${SyncCognitoEmailFunction}""#));
    assert!(
        body.contains(r#""ApproximateNumberOfMessagesVisible","QueueName","${SyncCognitoEmailFailures.QueueName}""#)
    );
}

#[test]
fn every_variable_a_function_gets_is_a_setting_its_entry_needs() {
    use user_service::config::SETTINGS;
    use user_service::config::setting::Reaches;
    let t = template::load();
    let declared = |name: &str| {
        SETTINGS
            .iter()
            .find(|s| s.variable == Some(name))
            .unwrap_or_else(|| panic!("{name} is given to functions but declared nowhere"))
    };
    let globals = t["Globals"]["Function"]["Environment"]["Variables"]
        .as_mapping()
        .expect("the globals give variables");
    for (name, _) in globals {
        let s = declared(&text(name));
        assert!(
            matches!(s.reaches, Reaches::Every(_)),
            "{} is declared for some functions only",
            s.name()
        );
    }
    let mut given = 0;
    for (id, function) in template::of_type(&t, "AWS::Serverless::Function") {
        let spec = catalog::by_name(&text(&function["Metadata"]["BuildProperties"]["Binary"])).unwrap();
        let Some(variables) = function["Properties"]["Environment"]["Variables"].as_mapping() else {
            continue;
        };
        for (name, _) in variables {
            let s = declared(&text(name));
            given += 1;
            assert!(
                matches!(s.reaches, Reaches::Functions(need, _) if spec.needs(need)),
                "{id} gets {}, which its entry does not need",
                s.name()
            );
        }
    }
    assert!(given > 20, "{given} variables given to functions");
}

/// Every `"NAME"` literal read from the environment in `dir`'s Rust sources,
/// by `env::var` or a lookup, with the file it stands in.
fn literal_reads(dir: &std::path::Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            literal_reads(&path, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        for call in ["env::var(\"", "lookup(\"", "var_os(\""] {
            for (at, _) in source.match_indices(call) {
                let name: String = source[at + call.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                out.push(format!("{}: {name}", path.display()));
            }
        }
    }
}

#[test]
fn the_functions_read_the_environment_only_through_declared_settings() {
    // A variable read by name, not through its declaration, would be missing
    // from the docs, the template and `make dev` alike.
    let root = integration_tests::workspace_root();
    let mut reads = Vec::new();
    literal_reads(&root.join("shared/src"), &mut reads);
    literal_reads(&root.join("functions"), &mut reads);
    assert!(
        reads.is_empty(),
        "read by name, not through config::SETTINGS:\n{}",
        reads.join("\n")
    );
    let probe = root.join("target/literal-reads-probe");
    std::fs::create_dir_all(&probe).unwrap();
    std::fs::write(probe.join("x.rs"), "let v = std::env::var(\"SOME_NAME\");").unwrap();
    let mut found = Vec::new();
    literal_reads(&probe, &mut found);
    assert_eq!(found.len(), 1, "the scan sees a literal read: {found:?}");
}

#[test]
fn the_templates_parameters_and_the_settings_agree_on_every_range_and_default() {
    use user_service::config::SETTINGS;
    use user_service::config::setting::Value as Kind;
    let t = template::load();
    let parameters = t["Parameters"].as_mapping().expect("the template has parameters");
    let declared: BTreeSet<&str> = SETTINGS.iter().filter_map(|s| s.parameter).collect();
    let written: BTreeSet<String> = parameters.keys().map(text).collect();
    assert_eq!(
        written,
        declared.iter().map(|p| (*p).to_owned()).collect::<BTreeSet<_>>(),
        "every parameter is a declared setting and every declared one a parameter"
    );
    let strings =
        |v: &Value| -> Vec<String> { v.as_sequence().map_or_else(Vec::new, |s| s.iter().map(text).collect()) };
    for s in SETTINGS {
        let Some(name) = s.parameter else { continue };
        let p = &t["Parameters"][name];
        let default = &p["Default"];
        match s.value {
            Kind::Number(range) => {
                assert_eq!(text(&p["Type"]), "Number", "{name}");
                assert_eq!(default.as_u64(), Some(u64::from(range.default)), "{name}");
                assert_eq!(p["MinValue"].as_u64(), Some(u64::from(range.min)), "{name}");
                assert_eq!(
                    p["MaxValue"].as_u64(),
                    range.max.map(u64::from),
                    "{name}: the most the parser takes"
                );
            }
            Kind::NumberIn { default: d, allowed } => {
                assert_eq!(default.as_u64(), Some(u64::from(d)), "{name}");
                let written: Vec<u64> = p["AllowedValues"]
                    .as_sequence()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_u64)
                    .collect();
                assert_eq!(
                    written,
                    allowed.iter().map(|a| u64::from(*a)).collect::<Vec<_>>(),
                    "{name}"
                );
            }
            Kind::Choice { default: d, allowed } => {
                assert_eq!(text(default), d, "{name}");
                assert_eq!(strings(&p["AllowedValues"]), allowed, "{name}");
            }
            Kind::Text {
                default: d, pattern, ..
            } => {
                assert_eq!(default.as_str(), d, "{name}");
                assert_eq!(p["AllowedPattern"].as_str(), pattern, "{name}");
            }
            Kind::List => assert_eq!(text(&p["Type"]), "CommaDelimitedList", "{name}"),
        }
    }
}
