//! The reconcile pass at 100k, 1M and 10M users, simulated: how long a full
//! pass takes, in how many runs, at what cost, and which limit binds.
//!
//! The algorithm is reconcile-users' (docs/scale.md states the model). Phase
//! one scans the table in segments and writes snapshot chunks; phase two lists
//! Cognito's users partition by partition (sub prefix) under a token bucket at
//! a share of the UserList quota, and confirms the candidates with AdminGetUser
//! under a bucket at the same share of UserRead. Time advances call by call:
//! pure arithmetic, deterministic, nothing random, no network.
//!
//! Three ways to drive it are compared: the scheduled function that continues
//! from its checkpoint (the design), the same function invoking itself at once
//! when its time is up, and a Step Functions distributed map that fans the
//! partitions out to child executions.
//!
//! By concern: `params` (what it assumes), `phases` (the work inside one run),
//! `drivers` (runs chained into a pass), `outcome` (what a pass answers),
//! `scenarios` (what the report compares, and its section).

mod drivers;
mod outcome;
mod params;
mod phases;
mod scenarios;
#[cfg(test)]
mod tests;

pub(crate) use drivers::simulate;
pub(crate) use outcome::Driver;
pub(crate) use params::Params;
pub(crate) use scenarios::section;
