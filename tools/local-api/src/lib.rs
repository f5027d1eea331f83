//! Development only, never deployed: the service's HTTP API on 127.0.0.1 as API
//! Gateway would run it. Routes come from template.yaml; a local JWT authorizer
//! verifies Bearer tokens; requests become API Gateway v2 events invoked through
//! `cargo lambda watch`; `/local/…` routes stand in for Cognito's sign-up, sign-in and admin calls;
//! `/openapi.json` serves the contract; the table stream's consumers run as
//! Lambda's event source mappings would, and `/local/events` shows the events;
//! `/local/outbox` lists the mail the functions sent through moto's SES.

pub mod auth;
pub mod cognito;
pub mod event;
pub mod events;
pub mod filter;
pub mod gateway;
pub mod invoke;
pub mod mapping;
pub mod mirror;
pub mod openapi;
pub mod outbox;
pub mod page;
pub mod pool;
pub mod routes;
pub mod server;
pub mod state;
pub mod stream;
pub mod template;
