//! Creates the table from the key schema constants, for tests and local runs.
//! Deployed tables come from template.yaml, which a test keeps equal to these.

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::create_table::CreateTableError;
use aws_sdk_dynamodb::operation::update_time_to_live::UpdateTimeToLiveError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType, StreamSpecification, StreamViewType, TimeToLiveSpecification,
};

use crate::store::keys;

/// Why creating the table for tests or a local run failed.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// CreateTable failed for a reason other than the table existing already.
    #[error("CreateTable failed")]
    Create(
        #[source]
        Box<aws_sdk_dynamodb::error::SdkError<CreateTableError, aws_sdk_dynamodb::config::http::HttpResponse>>,
    ),
    /// A part of the table definition lacked a required field: a bug here, not an answer from DynamoDB.
    #[error("request could not be built")]
    Build(#[from] aws_sdk_dynamodb::error::BuildError),
    /// The table was created but Time to Live could not be enabled, so rate-limit items would never expire.
    #[error("UpdateTimeToLive failed")]
    Ttl(
        #[source]
        Box<aws_sdk_dynamodb::error::SdkError<UpdateTimeToLiveError, aws_sdk_dynamodb::config::http::HttpResponse>>,
    ),
}

/// Time to Live on `keys::TTL`, as the template enables it: rate-limit items expire by it.
async fn enable_ttl(client: &Client, table: &str) -> Result<(), SchemaError> {
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .attribute_name(keys::TTL)
                .enabled(true)
                .build()?,
        )
        .send()
        .await
        .map_err(|err| SchemaError::Ttl(Box::new(err)))?;
    Ok(())
}

fn key_schema(keys: &[(&str, &str)]) -> Result<Vec<KeySchemaElement>, SchemaError> {
    keys.iter()
        .map(|(name, kind)| {
            Ok(KeySchemaElement::builder()
                .attribute_name(*name)
                .key_type(KeyType::from(*kind))
                .build()?)
        })
        .collect()
}

/// What the table's stream carries: sync-cognito-email compares the old image
/// of a profile with the new one.
pub const STREAM_VIEW: StreamViewType = StreamViewType::NewAndOldImages;

/// One global secondary index of the table.
#[derive(Debug, Clone, Copy)]
pub struct Index {
    /// The index's name.
    pub name: &'static str,
    /// Its key attributes: HASH then RANGE.
    pub keys: [(&'static str, &'static str); 2],
    /// What it copies besides the keys (projection INCLUDE).
    pub projected: &'static [&'static str],
}

/// The table's indexes: GSI1 finds an address's records, GSI2 lists users by
/// status in creation order. The template declares the same (a test checks).
pub const INDEXES: [Index; 2] = [
    Index {
        name: keys::GSI1,
        keys: keys::GSI1_KEYS,
        projected: &keys::GSI1_PROJECTED,
    },
    Index {
        name: keys::GSI2,
        keys: keys::GSI2_KEYS,
        projected: &keys::GSI2_PROJECTED,
    },
];

/// Creates the table with its indexes and stream unless it exists. Returns whether it created it.
pub async fn ensure_table(client: &Client, table: &str) -> Result<bool, SchemaError> {
    let mut definitions = Vec::new();
    let index_keys = INDEXES.iter().flat_map(|index| index.keys.iter());
    for (name, _) in keys::TABLE_KEYS.iter().chain(index_keys) {
        definitions.push(
            AttributeDefinition::builder()
                .attribute_name(*name)
                .attribute_type(ScalarAttributeType::S)
                .build()?,
        );
    }
    let mut indexes = Vec::new();
    for index in &INDEXES {
        indexes.push(
            GlobalSecondaryIndex::builder()
                .index_name(index.name)
                .set_key_schema(Some(key_schema(&index.keys)?))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::Include)
                        .set_non_key_attributes(Some(index.projected.iter().map(|a| (*a).to_owned()).collect()))
                        .build(),
                )
                .build()?,
        );
    }
    let result = client
        .create_table()
        .table_name(table)
        .set_attribute_definitions(Some(definitions))
        .set_key_schema(Some(key_schema(&keys::TABLE_KEYS)?))
        .set_global_secondary_indexes(Some(indexes))
        .billing_mode(BillingMode::PayPerRequest)
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(STREAM_VIEW)
                .build()?,
        )
        .send()
        .await;
    match result {
        Ok(_) => {
            enable_ttl(client, table).await?;
            Ok(true)
        }
        Err(err)
            if matches!(
                err.as_service_error(),
                Some(CreateTableError::ResourceInUseException(_))
            ) =>
        {
            Ok(false)
        }
        Err(err) => Err(SchemaError::Create(Box::new(err))),
    }
}
