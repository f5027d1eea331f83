//! What every request handler of the local API shares.

use std::sync::Arc;

use user_service::Store;

use crate::auth::DevKey;
use crate::invoke::Lambda;
use crate::routes::Routes;

/// The routes, the signing key, the functions, the table, the local user pool,
/// the domain events and the outbox.
pub struct AppState {
    pub routes: Routes,
    pub key: DevKey,
    pub lambda: Lambda,
    pub store: Store,
    pub pool: std::sync::Arc<crate::pool::Pool>,
    /// The pool id the trigger events name: the mirror's, when there is one.
    pub user_pool_id: String,
    /// The local pool's mirror in moto's Cognito (`make dev`), for what calls Cognito.
    pub mirror: Option<crate::mirror::Mirror>,
    /// The domain events publish-events put on the local bus.
    pub events: Arc<crate::events::LocalEvents>,
    /// The mail the functions sent through moto's SES (`GET /local/outbox`).
    pub outbox: Arc<crate::outbox::Outbox>,
}

pub type Shared = Arc<AppState>;
