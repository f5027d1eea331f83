//! What every request handler of the local API shares.

use std::sync::Arc;

use user_service::Store;

use crate::auth::DevKey;
use crate::invoke::Lambda;
use crate::routes::Routes;

/// The routes, the signing key, the functions, the table and the local user pool.
pub struct AppState {
    pub routes: Routes,
    pub key: DevKey,
    pub lambda: Lambda,
    pub store: Store,
    pub pool: crate::pool::Pool,
}

pub type Shared = Arc<AppState>;
