//! template.yaml's per-function blocks, written from the catalog. Each block is
//! text in SAM's own layout, so the generated part reads like the rest.

use std::fmt::Write as _;

use user_service::catalog::{Access, Function, Trigger};
use user_service::events::{self, EventType};
use user_service::store::keys;

/// `get-profile` → `GetProfile`: the prefix of the function's logical ids.
pub(crate) fn logical_name(function: &Function) -> String {
    function.name.split('-').map(capitalised).collect()
}

fn description(function: &Function) -> String {
    let prefix = match function.trigger {
        Trigger::Http { method, path, .. } => format!("{method} {path}"),
        Trigger::CognitoPreSignUp => "Cognito PreSignUp trigger".to_owned(),
        Trigger::CognitoPostConfirmation => "Cognito PostConfirmation trigger".to_owned(),
        Trigger::CognitoPostAuthentication => "Cognito PostAuthentication trigger".to_owned(),
        Trigger::CognitoUserMigration => "Cognito UserMigration trigger".to_owned(),
        Trigger::Schedule { rate, .. } => format!("Schedule {rate}"),
        Trigger::TableStream { .. } => "Table stream".to_owned(),
    };
    let text = format!("{prefix}: {}", function.summary);
    // Double-quoted YAML: only `"` and `\` need escaping in these sentences.
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Lines of text at a given indentation, two spaces per level.
#[derive(Default)]
pub(crate) struct Yaml(pub(crate) String);

impl Yaml {
    pub(crate) fn line(&mut self, level: usize, text: &str) {
        // Writing to a String cannot fail.
        let _ = writeln!(self.0, "{:indent$}{text}", "", indent = level * 2);
    }

    pub(crate) fn blank(&mut self) {
        self.0.push('\n');
    }

    /// The head of an IAM policy statement that allows `actions` of `service`;
    /// its Resource follows.
    fn statement(&mut self, sid: &str, service: &str, actions: &[&str]) {
        self.line(6, &format!("- Sid: {sid}"));
        self.line(7, "Effect: Allow");
        self.line(7, "Action:");
        for action in actions {
            self.line(8, &format!("- {service}:{action}"));
        }
    }
}

/// The function blocks: for each catalog entry its function, its log group, and
/// what its trigger needs (Cognito's invoke permission, a stream's failure queue).
pub(crate) fn functions(catalog: &[Function]) -> String {
    let mut y = Yaml::default();
    for (i, function) in catalog.iter().enumerate() {
        if i > 0 {
            y.blank();
        }
        function_block(&mut y, function);
    }
    bus_policy(&mut y, catalog);
    y.0
}

/// The bus takes events from its publishers alone (and the roles the stack's
/// `EventPublisherArns` names, for `cargo xtask replay-events`): consumers
/// trust a `user.deleted` to erase, so no other principal of the account,
/// whatever its IAM grants, may put one there.
fn bus_policy(y: &mut Yaml, catalog: &[Function]) {
    let publishers: Vec<String> = catalog
        .iter()
        .filter(|f| f.publishes_events)
        .map(|f| format!("!GetAtt {}FunctionRole.Arn", logical_name(f)))
        .collect();
    if publishers.is_empty() {
        return;
    }
    y.blank();
    y.line(1, "EventBusPublishersOnly:");
    y.line(2, "Type: AWS::Events::EventBusPolicy");
    y.line(2, "Properties:");
    y.line(3, "EventBusName: !Ref EventBus");
    y.line(3, "StatementId: PublishersOnly");
    y.line(3, "Statement:");
    y.line(4, "Effect: Deny");
    y.line(4, "Principal: \"*\"");
    y.line(4, "Action: events:PutEvents");
    y.line(4, "Resource: !GetAtt EventBus.Arn");
    y.line(4, "Condition:");
    y.line(5, "ArnNotLike:");
    y.line(6, "aws:PrincipalArn: !Split");
    y.line(7, "- \",\"");
    y.line(7, "- !Join");
    y.line(8, "- \",\"");
    y.line(8, "- - !Join [\",\", !Ref EventPublisherArns]");
    for publisher in publishers {
        y.line(9, &format!("- {publisher}"));
    }
}

fn function_block(y: &mut Yaml, f: &Function) {
    let id = logical_name(f);
    let name = f.name;
    y.line(1, &format!("{id}Function:"));
    y.line(2, "Type: AWS::Serverless::Function");
    y.line(2, "Metadata:");
    y.line(3, "BuildMethod: rust-cargolambda");
    y.line(3, "BuildProperties:");
    y.line(4, &format!("Binary: {name}"));
    y.line(2, "Properties:");
    y.line(3, &format!("FunctionName: !Sub ${{AWS::StackName}}-{name}"));
    y.line(3, &format!("Description: {}", description(f)));
    y.line(3, "CodeUri: .");
    y.line(3, &format!("Timeout: {}", f.timeout_seconds));
    match memory_condition(f.memory_mb) {
        Some(raised) => y.line(
            3,
            &format!("MemorySize: !If [{raised}, !Ref FunctionMemorySize, {}]", f.memory_mb),
        ),
        None => y.line(3, &format!("MemorySize: {}", f.memory_mb)),
    }
    y.line(3, "LoggingConfig:");
    y.line(4, &format!("LogGroup: !Ref {id}LogGroup"));
    environment(y, f);
    policies(y, f);
    events(y, f, &id);
    y.blank();
    y.line(1, &format!("{id}LogGroup:"));
    y.line(2, "Type: AWS::Logs::LogGroup");
    y.line(2, "Properties:");
    y.line(3, &format!("LogGroupName: !Sub /aws/lambda/${{AWS::StackName}}-{name}"));
    y.line(3, "RetentionInDays: !Ref LogRetentionDays");
    match f.trigger {
        Trigger::CognitoPreSignUp
        | Trigger::CognitoPostConfirmation
        | Trigger::CognitoPostAuthentication
        | Trigger::CognitoUserMigration => {
            y.blank();
            y.line(1, &format!("{id}InvokePermission:"));
            y.line(2, "Type: AWS::Lambda::Permission");
            y.line(2, "Properties:");
            y.line(3, "Action: lambda:InvokeFunction");
            y.line(3, &format!("FunctionName: !GetAtt {id}Function.Arn"));
            y.line(3, "Principal: cognito-idp.amazonaws.com");
            y.line(3, "SourceAccount: !Ref AWS::AccountId");
            y.line(3, "SourceArn: !GetAtt UserPool.Arn");
            pool_access(y, f, &id);
        }
        Trigger::TableStream { .. } => {
            y.blank();
            y.line(
                1,
                "# Records that exhausted their retries. Each message names the record's shard",
            );
            y.line(
                1,
                "# and sequence range, not its content: replay by reading the stream from there",
            );
            y.line(1, "# (within its 24 hours; see docs/operations.md).");
            y.line(1, &format!("{id}Failures:"));
            y.line(2, "Type: AWS::SQS::Queue");
            y.line(2, "Properties:");
            y.line(3, "SqsManagedSseEnabled: true");
            y.line(3, "MessageRetentionPeriod: 1209600");
        }
        Trigger::Http { .. } | Trigger::Schedule { .. } => {}
    }
}

/// The sizes `FunctionMemorySize` may raise a function to (its allowed values
/// but 0, which keeps each function's own).
fn raises() -> Vec<u32> {
    match user_service::config::FUNCTION_MEMORY_SIZE.value {
        user_service::config::setting::Value::NumberIn { allowed, .. } => {
            allowed.iter().copied().filter(|mb| *mb > 0).collect()
        }
        _ => Vec::new(),
    }
}

/// The condition under which the stack's `FunctionMemorySize` raises a
/// function of `mb`: none when no allowed value is above it.
fn memory_condition(mb: u32) -> Option<String> {
    raises()
        .iter()
        .any(|v| *v > mb)
        .then(|| format!("FunctionMemoryAbove{mb}"))
}

/// The Conditions region: for each size of the catalog, whether the stack's
/// `FunctionMemorySize` is above it. CloudFormation compares no numbers, so
/// each is the list of the allowed values above that size.
pub(crate) fn memory_conditions(catalog: &[Function]) -> String {
    let mut sizes: Vec<u32> = catalog.iter().map(|f| f.memory_mb).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut y = Yaml::default();
    for mb in sizes {
        let Some(name) = memory_condition(mb) else { continue };
        let above: Vec<u32> = raises().into_iter().filter(|v| *v > mb).collect();
        let equals = |v: u32| format!("!Equals [!Ref FunctionMemorySize, \"{v}\"]");
        if let [only] = above[..] {
            y.line(1, &format!("{name}: {}", equals(only)));
        } else {
            y.line(1, &format!("{name}: !Or"));
            for v in above {
                y.line(2, &format!("- {}", equals(v)));
            }
        }
    }
    y.0
}

fn environment(y: &mut Yaml, f: &Function) {
    let variables = crate::settings::environment(f);
    if variables.is_empty() {
        return;
    }
    y.line(3, "Environment:");
    y.line(4, "Variables:");
    for (name, value) in variables {
        y.line(5, &format!("{name}: {value}"));
    }
}

/// A trigger's Cognito actions, on the pool alone, in a policy of their own:
/// in the function's role they would make the pool (which names the trigger)
/// and the function (whose role would name the pool) depend on each other.
fn pool_access(y: &mut Yaml, f: &Function, id: &str) {
    if f.cognito_actions.is_empty() {
        return;
    }
    y.blank();
    y.line(1, &format!("{id}UserPoolAccess:"));
    y.line(2, "Type: AWS::IAM::Policy");
    y.line(2, "Properties:");
    y.line(3, "PolicyName: UserPool");
    y.line(3, "Roles:");
    y.line(4, &format!("- !Ref {id}FunctionRole"));
    y.line(3, "PolicyDocument:");
    y.line(4, "Version: \"2012-10-17\"");
    y.line(4, "Statement:");
    y.line(5, "- Sid: UserPool");
    y.line(6, "Effect: Allow");
    y.line(6, "Action:");
    for action in f.cognito_actions {
        y.line(7, &format!("- cognito-idp:{action}"));
    }
    y.line(6, "Resource: !GetAtt UserPool.Arn");
}

fn policies(y: &mut Yaml, f: &Function) {
    let mut statements = Yaml::default();
    if !f.dynamodb_actions.is_empty() {
        statements.statement("TableAccess", "dynamodb", f.dynamodb_actions);
        let indexes: Vec<&str> = [(f.queries_gsi1, keys::GSI1), (f.queries_gsi2, keys::GSI2)]
            .into_iter()
            .filter_map(|(queries, index)| queries.then_some(index))
            .collect();
        if !indexes.is_empty() {
            statements.line(7, "Resource:");
            statements.line(8, "- !GetAtt Table.Arn");
            for index in indexes {
                statements.line(8, &format!("- !Sub ${{Table.Arn}}/index/{index}"));
            }
        } else {
            statements.line(7, "Resource: !GetAtt Table.Arn");
        }
    }
    if f.reads_verification_key {
        statements.statement("VerificationKey", "secretsmanager", &["GetSecretValue"]);
        statements.line(7, "Resource: !Ref VerificationKeySecret");
    }
    if !f.cognito_actions.is_empty() && !f.is_cognito_trigger() {
        statements.statement("UserPool", "cognito-idp", f.cognito_actions);
        statements.line(7, "Resource: !GetAtt UserPool.Arn");
    }
    if f.publishes_events {
        statements.statement("PublishEvents", "events", &["PutEvents"]);
        statements.line(7, "Resource: !GetAtt EventBus.Arn");
    }
    if f.sends_email {
        statements.statement("SendMail", "ses", &["SendEmail"]);
        statements.line(7, "# SES authorizes against the most specific verified identity: the");
        statements.line(7, "# address when it is one, else its domain. Both, then.");
        statements.line(7, "Resource:");
        let identity = "!Sub arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}";
        statements.line(8, &format!("- {identity}:identity/${{SenderAddress}}"));
        statements.line(8, "- !If");
        statements.line(9, "- HasSenderDomain");
        statements.line(9, &format!("- {identity}:identity/${{SenderDomain}}"));
        statements.line(9, "- !Ref AWS::NoValue");
        statements.line(8, &format!("- {identity}:configuration-set/${{SesConfigurationSet}}"));
        statements.line(7, "Condition:");
        statements.line(8, "StringEquals:");
        statements.line(9, "ses:FromAddress: !Ref SenderAddress");
    }
    if statements.0.is_empty() {
        return;
    }
    y.line(3, "Policies:");
    y.line(4, "- Statement:");
    y.0.push_str(&statements.0);
}

fn events(y: &mut Yaml, f: &Function, id: &str) {
    match f.trigger {
        Trigger::Http { method, path, access } => {
            y.line(3, "Events:");
            y.line(4, "Api:");
            y.line(5, "Type: HttpApi");
            y.line(5, "Properties:");
            y.line(6, "ApiId: !Ref HttpApi");
            y.line(6, &format!("Method: {method}"));
            y.line(6, &format!("Path: {path}"));
            if matches!(access, Access::Anyone | Access::Directory) {
                // The request carries its own proof (a link's token, a SCIM
                // token); the handler checks it.
                y.line(6, "Auth:");
                y.line(7, "Authorizer: NONE");
            }
        }
        Trigger::Schedule { event, rate, api_calls } => {
            y.line(3, "Events:");
            y.line(4, &format!("{event}:"));
            y.line(5, "Type: Schedule");
            y.line(5, "Properties:");
            y.line(6, &format!("Schedule: {rate}"));
            y.line(6, &format!("Description: {}", description(f)));
            if let Some(calls) = api_calls {
                y.line(4, &format!("{}:", calls.event));
                y.line(5, "Type: EventBridgeRule");
                y.line(5, "Properties:");
                y.line(6, &format!("Pattern: {}", calls.pattern));
                y.line(6, "# Delivery is best effort; the pass is the safety net.");
                y.line(6, "RetryPolicy:");
                y.line(7, "MaximumRetryAttempts: 10");
                y.line(7, "MaximumEventAgeInSeconds: 3600");
            }
        }
        Trigger::TableStream { event, filters } => {
            y.line(3, "Events:");
            y.line(
                4,
                "# Reading the stream and sending to the on-failure queue are granted by",
            );
            y.line(
                4,
                "# SAM for this event (the stream-read managed policy, sqs:SendMessage).",
            );
            y.line(4, &format!("{event}:"));
            y.line(5, "Type: DynamoDB");
            y.line(5, "Properties:");
            y.line(6, "Stream: !GetAtt Table.StreamArn");
            y.line(6, "StartingPosition: TRIM_HORIZON");
            y.line(6, "BatchSize: 10");
            y.line(6, "MaximumBatchingWindowInSeconds: 1");
            y.line(6, "# A failing record is isolated by halving the batch, retried, then");
            y.line(6, "# handed to the queue; the records after it in its shard go on.");
            y.line(6, "BisectBatchOnFunctionError: true");
            y.line(6, "MaximumRetryAttempts: 5");
            y.line(6, "MaximumRecordAgeInSeconds: 86400");
            y.line(6, "FunctionResponseTypes:");
            y.line(7, "- ReportBatchItemFailures");
            y.line(6, "FilterCriteria:");
            y.line(7, "Filters:");
            for filter in filters {
                y.line(8, &format!("- Pattern: '{}'", filter.replace('\'', "''")));
            }
            y.line(6, "DestinationConfig:");
            y.line(7, "OnFailure:");
            y.line(8, "Type: SQS");
            y.line(8, &format!("Destination: !GetAtt {id}Failures.Arn"));
        }
        // Cognito invokes these through the user pool's LambdaConfig.
        Trigger::CognitoPreSignUp
        | Trigger::CognitoPostConfirmation
        | Trigger::CognitoPostAuthentication
        | Trigger::CognitoUserMigration => {}
    }
}

/// The events' schemas in EventBridge's schema registry, for a stack with
/// `RegisterEventSchemas=true`. The registry reads JSON Schema draft 4, so
/// each schema of `schemas/events/` (2020-12) is said in it: `const` as a
/// one-value `enum`, `$id` as `id`.
pub(crate) fn event_schemas() -> String {
    let mut y = Yaml::default();
    y.line(1, "EventSchemas:");
    y.line(2, "Type: AWS::EventSchemas::Registry");
    y.line(2, "Condition: EventSchemasRegistered");
    y.line(2, "Properties:");
    y.line(3, "RegistryName: !Sub ${AWS::StackName}-events");
    y.line(3, "Description: The domain events of user-service (docs/events.md).");
    for kind in EventType::ALL {
        let name: String = kind.name().split(['.', '_']).map(capitalised).collect();
        // Keys sorted: the same text whether or not serde_json's `preserve_order` is on.
        let content = serde_json::to_string(&crate::docs::sorted(draft4(events::schema(kind)))).unwrap_or_default();
        y.blank();
        y.line(1, &format!("EventSchema{name}:"));
        y.line(2, "Type: AWS::EventSchemas::Schema");
        y.line(2, "Condition: EventSchemasRegistered");
        y.line(2, "Properties:");
        y.line(3, "RegistryName: !GetAtt EventSchemas.RegistryName");
        y.line(3, &format!("SchemaName: {}", kind.name()));
        y.line(3, "Type: JSONSchemaDraft4");
        y.line(3, &format!("Content: '{}'", content.replace('\'', "''")));
    }
    y.0
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// A 2020-12 schema of the catalogue said in draft 4.
fn draft4(schema: serde_json::Value) -> serde_json::Value {
    use serde_json::{Value, json};
    match schema {
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| match key.as_str() {
                    "$schema" => (key, json!("http://json-schema.org/draft-04/schema#")),
                    "$id" => ("id".to_owned(), value),
                    "const" => ("enum".to_owned(), json!([value])),
                    _ => (key, draft4(value)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(draft4).collect()),
        other => other,
    }
}

/// samconfig.toml's `sync` watch list: every function ignores the build and tool
/// folders, or each build would look like a code change.
pub(crate) fn watch_exclude(catalog: &[Function]) -> String {
    let mut out = String::new();
    for function in catalog {
        let id = logical_name(function);
        let entries: Vec<String> = ["target", ".venv", ".git", ".cache", ".local"]
            .iter()
            .map(|dir| format!("\"{id}Function=/{dir}\""))
            .collect();
        let _ = writeln!(out, "    {},", entries.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use user_service::catalog::{self, FUNCTIONS};

    use super::*;

    #[test]
    fn logical_names_are_pascal_case() {
        assert_eq!(logical_name(&catalog::GET_PROFILE), "GetProfile");
        assert_eq!(logical_name(&catalog::SYNC_COGNITO_EMAIL), "SyncCognitoEmail");
    }

    #[test]
    fn every_function_gets_a_function_and_a_log_group() {
        let functions = functions(FUNCTIONS);
        for f in FUNCTIONS {
            let id = logical_name(f);
            assert!(
                functions.contains(&format!("\n  {id}Function:\n"))
                    || functions.starts_with(&format!("  {id}Function:\n"))
            );
            assert!(functions.contains(&format!("  {id}LogGroup:\n")));
            assert!(functions.contains(&format!("Binary: {}\n", f.name)));
            assert!(functions.contains(&format!("Timeout: {}\n", f.timeout_seconds)));
        }
    }

    #[test]
    fn a_quote_in_a_summary_stays_inside_the_string() {
        let f = Function {
            summary: "says \"hi\"",
            ..catalog::GET_PROFILE
        };
        assert_eq!(description(&f), r#""GET /me: says \"hi\"""#);
    }
}
