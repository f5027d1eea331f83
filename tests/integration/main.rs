//! Integration tests against DynamoDB Local (AWS's emulator) and, for faults it
//! cannot produce, SDK-level fault injection. One binary: modules below.

// Test helpers may panic: a failed set-up must fail the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod abuse;
mod accounts;
mod address_policy;
mod backfill;
mod builds;
mod canonicalize;
mod common;
mod concurrency;
mod deletion_records;
mod delivery;
mod docs;
mod domains;
mod events;
mod export;
mod faults;
mod handler_support;
mod handlers_admin;
mod handlers_emails;
mod handlers_profile;
mod hot_address;
mod iam;
mod invariant_checker;
mod invitations;
mod layering;
mod lost_response;
mod metrics;
mod migration;
mod org_purge;
mod organizations;
mod preconditions;
mod publishing;
mod races;
mod reauthentication;
mod recovery;
mod routes;
mod scim_addresses;
mod scim_budgets;
mod scim_fixtures;
mod scim_http;
mod scim_standing;
mod scim_tokens;
mod scim_users;
mod secrets;
mod store_emails;
mod store_users;
mod sweep;
mod sync;
mod template;
mod triggers;
mod user_admin;
mod user_list;
