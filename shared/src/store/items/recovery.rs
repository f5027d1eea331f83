//! What a switch of the primary leaves for its undoing: the switch itself,
//! kept for the recovery window, and the account's record of its recoveries.

use serde::{Deserialize, Serialize};

use crate::domain::{EmailId, Timestamp, UserId};
use crate::store::error::StoreError;
use crate::store::keys::{self, Item};

use super::{EmailItem, EntityType, to_item};

/// A switch of the primary that its former address can undo (`USER#<sub>`,
/// `CHANGE#<version>`): written in the switch's own transaction, consumed by
/// the recovery that undoes it, deleted by Time to Live after the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrimaryChangeItem {
    /// Always `PrimaryChange`.
    pub entity_type: EntityType,
    /// The account switched.
    pub user_id: UserId,
    /// The profile version the switch wrote: what the recovery link names.
    pub version: u64,
    /// The former primary's record as the switch found it: a recovery makes it
    /// the verified primary again, or writes it back if it was removed since.
    pub former: EmailItem,
    /// The record the switch made primary.
    pub new_email_id: EmailId,
    /// When that record was added: it, and every record added after it, came
    /// with the switch, and a recovery removes them.
    pub new_added_at: Timestamp,
    /// When the switch was made.
    pub changed_at: Timestamp,
    /// Until when the former address can undo it (`ADDRESS_RECOVERY_DAYS`).
    pub recoverable_until: Timestamp,
    /// Keyed hashes of the recovery tokens mailed for it, one per notice sent
    /// (a stream record delivered twice mails twice); never the tokens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_hashes: Vec<String>,
    /// Epoch seconds after which DynamoDB may delete it: the window's end.
    pub ttl: i64,
}

impl PrimaryChangeItem {
    /// The switch from `former` to `new_email_id` that wrote profile version `version`.
    pub fn new(
        former: &EmailItem,
        new_primary: &EmailItem,
        version: u64,
        changed_at: Timestamp,
        window_seconds: i64,
    ) -> Self {
        let recoverable_until = changed_at.plus_seconds(window_seconds);
        // As the switch leaves it: no longer primary, reserved for the window.
        let mut former = former.clone();
        former.is_primary = false;
        former.reserved_until = Some(recoverable_until);
        Self {
            entity_type: EntityType::PrimaryChange,
            user_id: former.user_id.clone(),
            version,
            former,
            new_email_id: new_primary.email_id,
            new_added_at: new_primary.created_at,
            changed_at,
            recoverable_until,
            token_hashes: Vec::new(),
            ttl: recoverable_until.unix_seconds(),
        }
    }

    /// Whether `record` came with the switch: the record it made primary, or
    /// one added after that one (ids are v7, so they break a tie in time).
    pub fn brought(&self, record: &EmailItem) -> bool {
        (record.created_at, record.email_id) >= (self.new_added_at, self.new_email_id)
    }

    /// Whether its former address can still undo it.
    pub fn is_recoverable(&self, now: Timestamp) -> bool {
        self.recoverable_until > now
    }
}

/// One recovery: the switches from `from_version` up to (not including)
/// `to_version`, the version the recovery wrote, are undone, so their links
/// are refused; a switch made before it stays undoable by its own address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recovery {
    /// The version of the switch whose link was followed.
    pub from_version: u64,
    /// The profile version the recovery wrote.
    pub to_version: u64,
    /// When.
    pub at: Timestamp,
}

impl Recovery {
    /// Whether this recovery undid the switch that wrote `version`.
    pub fn undid(&self, version: u64) -> bool {
        (self.from_version..self.to_version).contains(&version)
    }
}

/// A recovery's hold on sign-in (`RECONCILE`, `HOLD#<recoveredAt>#<sub>`):
/// put just before the recovery's transaction and deleted once the hold is
/// released, so the reconcile finds every held account without a scan, and
/// finishes what the stream did not. A sub and a time, nothing personal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignInHoldItem {
    /// Always `Reconcile`.
    pub entity_type: EntityType,
    /// The account held.
    pub user_id: UserId,
    /// The recovery's time, epoch seconds: the profile's `tokensValidAfter`
    /// while this recovery's hold is the one on it.
    pub tokens_valid_after: i64,
}

/// The whole stored switch, with its key.
pub fn change_item(item: &PrimaryChangeItem) -> Result<Item, StoreError> {
    to_item(keys::change_key(&item.user_id, item.version), item)
}
