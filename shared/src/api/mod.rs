//! The functions' handlers, split by what invokes them: [`routes`], one module
//! per HTTP route (API Gateway), and [`events`], the Cognito triggers, the
//! table's stream and the schedule. Each parses its input into domain values,
//! calls one store method and maps the result; `functions/<name>/src/main.rs`
//! runs its `handle`.

#[cfg(feature = "aws")]
pub mod events;
pub mod routes;
#[cfg(feature = "aws")]
pub mod scim;
