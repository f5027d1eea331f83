//! Integration tests against DynamoDB Local (AWS's emulator) and, for faults it
//! cannot produce, SDK-level fault injection. One binary: modules below.

mod common;
mod concurrency;
mod faults;
mod invariant_checker;
mod store_emails;
mod store_users;
