//! The reconcile's own items: its checkpoint, under a lease so one run at a
//! time moves the pass, and the snapshot chunks of live subs a pass writes in
//! its first phase and reads back partition by partition in its second.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};

use crate::domain::{EmailAddress, Timestamp, UserId, UserStatus};
use crate::reconcile::{self, Checkpoint, Listed, PartitionProgress, Snapshot, Sub, Unknown};
use crate::store::expr::{Expr, Update, and, or};
use crate::store::items::{EntityType, attr};
use crate::store::keys::{self, Item, reconcile_attr};
use crate::store::retry::send_by_deadline;
use crate::store::{Store, StoreError, query_all};

/// One profile as the reconcile's scan reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedProfile {
    /// Whose profile.
    pub user_id: UserId,
    /// When the sign-up created it: a profile younger than the pass is not its to erase.
    pub created_at: Timestamp,
    /// Its key (`PK`, `SK`), for a scan position just after it.
    pub key: (String, String),
    /// Which snapshot it belongs to; `None` for a deleted profile whose user
    /// is known gone from Cognito (nothing left to check).
    pub snapshot: Option<Snapshot>,
}

/// Where a snapshot chunk goes: its pass, snapshot, bucket, scan segment and number.
#[derive(Debug, Clone, Copy)]
pub struct ChunkAt<'a> {
    /// The pass it belongs to.
    pub pass: &'a str,
    /// Live or deleted profiles.
    pub snapshot: Snapshot,
    /// The first hex digits its subs share.
    pub bucket: &'a str,
    /// The scan segment that wrote it.
    pub segment: u32,
    /// Its number among the segment's chunks.
    pub chunk: u32,
}

/// One page of a scan segment.
#[derive(Debug, Clone, Default)]
pub struct ScanPage {
    /// The profiles of the page, in scan order.
    pub profiles: Vec<ScannedProfile>,
    /// Where the segment goes on; `None` at its end.
    pub next: Option<(String, String)>,
}

fn key_pair(item: &Item) -> Option<(String, String)> {
    Some((
        keys::key_string(item, keys::PK)?.to_owned(),
        keys::key_string(item, keys::SK)?.to_owned(),
    ))
}

fn start_key((pk, sk): &(String, String)) -> Item {
    Item::from([
        (keys::PK.to_owned(), AttributeValue::S(pk.clone())),
        (keys::SK.to_owned(), AttributeValue::S(sk.clone())),
    ])
}

/// An update that says what the item is, as every stored item does
/// (`entityType`): the reconcile's.
fn stamped(x: &mut Expr) -> Update {
    // A unit variant serialises to its name: this cannot fail.
    let reconcile = serde_dynamo::to_attribute_value(EntityType::Reconcile).unwrap_or(AttributeValue::Null(true));
    Update::default().set(x.eq(attr::ENTITY_TYPE, reconcile))
}

impl Store {
    /// Takes the reconcile's lease for `run` until `until`, and reads where the
    /// pass stands. `None` when another run holds an unexpired lease: two runs
    /// never move the pass at once. One conditioned UpdateItem.
    pub async fn take_reconcile_lease(
        &self,
        run: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<Option<(Checkpoint, u64)>, StoreError> {
        let mut x = Expr::default();
        let update = stamped(&mut x)
            .set(x.eq(reconcile_attr::LEASE_OWNER, run))
            .set(x.eq(reconcile_attr::LEASE_UNTIL, until));
        let free = or(
            or(
                x.not_exists(reconcile_attr::LEASE_UNTIL),
                x.lt(reconcile_attr::LEASE_UNTIL, now),
            ),
            x.eq(reconcile_attr::LEASE_OWNER, run),
        );
        match self
            .update_checkpoint(&x, &update, Some(free), ReturnValue::AllNew)
            .await?
        {
            Some(attributes) => {
                let requests = attributes
                    .as_ref()
                    .and_then(|item| item.get(reconcile_attr::PASS_REQUESTS))
                    .and_then(|v| v.as_n().ok())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                Ok(Some((checkpoint_of(attributes.as_ref())?, requests)))
            }
            None => Ok(None),
        }
    }

    /// Asks for a pass at once (a deletion in Cognito whose record named no
    /// user): counted on the checkpoint item with no lease, so a run that
    /// holds the lease cannot lose it; the next run to take the lease starts
    /// a pass.
    pub async fn request_reconcile_pass(&self) -> Result<(), StoreError> {
        let mut x = Expr::default();
        let count = x.name(reconcile_attr::PASS_REQUESTS);
        let (zero, one) = (
            x.value(reconcile_attr::PASS_REQUESTS, 0u64),
            x.value(reconcile_attr::PASS_REQUESTS, 1u64),
        );
        // The first request finds no count yet.
        let update = stamped(&mut x).set(format!("{count} = if_not_exists({count}, {zero}) + {one}"));
        self.update_checkpoint(&x, &update, None, ReturnValue::None).await?;
        Ok(())
    }

    /// Writes where the pass stands, while `run` still holds the lease, and
    /// gives the lease up when `release`. A run whose lease another took over
    /// gets `Superseded` and writes nothing.
    pub async fn save_reconcile(&self, run: &str, checkpoint: &Checkpoint, release: bool) -> Result<(), StoreError> {
        let state =
            serde_json::to_string(checkpoint).map_err(|_| StoreError::Inconsistent("checkpoint not encoded"))?;
        let mut x = Expr::default();
        let mut update = stamped(&mut x).set(x.eq(reconcile_attr::STATE, state));
        if release {
            update = update
                .remove(x.name(reconcile_attr::LEASE_OWNER))
                .remove(x.name(reconcile_attr::LEASE_UNTIL));
        }
        let held = x.eq(reconcile_attr::LEASE_OWNER, run);
        match self
            .update_checkpoint(&x, &update, Some(held), ReturnValue::None)
            .await?
        {
            Some(_) => Ok(()),
            None => Err(StoreError::Superseded),
        }
    }

    /// One UpdateItem of the checkpoint item: the attributes `returning` asks
    /// for, or `None` when `condition` (if any) failed.
    async fn update_checkpoint(
        &self,
        x: &Expr,
        update: &Update,
        condition: Option<String>,
        returning: ReturnValue,
    ) -> Result<Option<Option<Item>>, StoreError> {
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::reconcile_checkpoint_key()))
            .update_expression(update.text())
            .set_condition_expression(condition)
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none())
            .return_values(returning);
        match send_by_deadline!(&self.client, request) {
            Ok(out) => Ok(Some(out.attributes)),
            Err(err)
                if matches!(
                    err.as_service_error(),
                    Some(UpdateItemError::ConditionalCheckFailedException(_))
                ) =>
            {
                Ok(None)
            }
            Err(err) => Err(err.into()),
        }
    }

    /// Where the pass stands, without the lease (for tests and operators).
    pub async fn reconcile_checkpoint(&self) -> Result<Checkpoint, StoreError> {
        let item = self.get(keys::reconcile_checkpoint_key()).await?;
        checkpoint_of(item.as_ref())
    }

    /// One page of scan segment `segment` of `segments`: the profiles after
    /// `after`, live and deleted. A page evaluates at most
    /// [`reconcile::SCAN_PAGE_ITEMS`] items, so it returns quickly.
    pub async fn scan_profiles(
        &self,
        segment: u32,
        segments: u32,
        after: Option<&(String, String)>,
    ) -> Result<ScanPage, StoreError> {
        let mut x = Expr::default();
        let user_type: AttributeValue =
            serde_dynamo::to_attribute_value(EntityType::User).map_err(StoreError::Corrupt)?;
        let filter = x.eq(attr::ENTITY_TYPE, user_type);
        let projection = [
            keys::PK,
            keys::SK,
            attr::USER_ID,
            attr::CREATED_AT,
            attr::STATUS,
            attr::GONE_FROM_COGNITO,
        ]
        .map(|name| x.name(name))
        .join(", ");
        let request = self
            .scan_segment(
                &x,
                filter,
                (segment, segments),
                reconcile::SCAN_PAGE_ITEMS,
                after.map(start_key),
            )
            .projection_expression(projection);
        let page = send_by_deadline!(&self.client, request)?;
        let profiles = page
            .items
            .unwrap_or_default()
            .iter()
            .filter_map(|item| {
                let deleted = keys::key_string(item, attr::STATUS)? == UserStatus::Deleted.as_str();
                let gone = item
                    .get(attr::GONE_FROM_COGNITO)
                    .and_then(|v| v.as_bool().ok())
                    .copied()
                    .unwrap_or(false);
                Some(ScannedProfile {
                    user_id: UserId::parse(keys::key_string(item, attr::USER_ID)?).ok()?,
                    created_at: Timestamp::parse(keys::key_string(item, attr::CREATED_AT)?).ok()?,
                    key: key_pair(item)?,
                    snapshot: match (deleted, gone) {
                        (false, _) => Some(Snapshot::Live),
                        (true, false) => Some(Snapshot::Deleted),
                        (true, true) => None,
                    },
                })
            })
            .collect();
        Ok(ScanPage {
            profiles,
            next: page.last_evaluated_key.as_ref().and_then(key_pair),
        })
    }

    /// Writes one snapshot chunk (the same key again overwrites it: a run that
    /// crashed before its checkpoint writes its chunks again). TTL removes it
    /// after `expires`.
    pub async fn write_snapshot_chunk(
        &self,
        at: ChunkAt<'_>,
        subs: &[Sub],
        expires: Timestamp,
    ) -> Result<(), StoreError> {
        let mut x = Expr::default();
        let update = stamped(&mut x)
            .set(x.eq(
                reconcile_attr::SUBS,
                AttributeValue::B(Blob::new(reconcile::pack(subs))),
            ))
            .set(x.eq(keys::TTL, expires.unix_seconds()));
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::snapshot_chunk_key(
                at.pass,
                at.snapshot,
                at.bucket,
                at.segment,
                at.chunk,
            )))
            .update_expression(update.text())
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none());
        send_by_deadline!(&self.client, request)?;
        Ok(())
    }

    /// Every sub of the pass's snapshot that starts with `prefix`, from the
    /// chunks whose bucket can hold it (a Query per bucket width).
    pub async fn snapshot_subs(&self, pass: &str, snapshot: Snapshot, prefix: &str) -> Result<Vec<Sub>, StoreError> {
        let mut subs = Vec::new();
        for sk_prefix in keys::snapshot_sk_prefixes(snapshot, prefix) {
            // Strongly consistent: a sub's place in the partition's snapshot
            // names it in the partition's progress across runs.
            let query = self
                .query(|x| {
                    and([
                        x.eq(keys::PK, keys::snapshot_pk(pass)),
                        x.begins_with(keys::SK, sk_prefix),
                    ])
                })
                .consistent_read(true);
            for item in query_all(&self.client, query).await? {
                let bytes = item
                    .get(reconcile_attr::SUBS)
                    .and_then(|v| v.as_b().ok())
                    .ok_or(StoreError::Inconsistent("a snapshot chunk has no subs"))?;
                let chunk =
                    reconcile::unpack(bytes.as_ref()).ok_or(StoreError::Inconsistent("a snapshot chunk is cut"))?;
                subs.extend(chunk.into_iter().filter(|sub| sub.starts_with(prefix)));
            }
        }
        Ok(subs)
    }
}

impl Store {
    /// A partition's progress in `pass`, if a run saved one that fits a
    /// snapshot of `live` subs; `None` starts the partition from its first page.
    pub async fn partition_progress(
        &self,
        pass: &str,
        prefix: &str,
        live: usize,
    ) -> Result<Option<PartitionProgress>, StoreError> {
        let Some(item) = self.get(keys::partition_progress_key(pass, prefix)).await? else {
            return Ok(None);
        };
        let state = keys::key_string(&item, reconcile_attr::STATE)
            .ok_or(StoreError::Inconsistent("a partition's progress has no state"))?;
        let mut progress: PartitionProgress = serde_json::from_str(state)
            .map_err(|_| StoreError::Inconsistent("a partition's progress does not parse"))?;
        let bits = item
            .get(reconcile_attr::LISTED)
            .and_then(|v| v.as_b().ok())
            .map(|b| b.as_ref().to_vec())
            .unwrap_or_default();
        let Some(listed) = Listed::from_bytes(bits, live) else {
            return Ok(None);
        };
        progress.listed = listed;
        Ok(Some(progress))
    }

    /// Saves a partition's progress (overwriting the last), removed by TTL after `expires`.
    pub async fn save_partition_progress(
        &self,
        pass: &str,
        prefix: &str,
        progress: &PartitionProgress,
        expires: Timestamp,
    ) -> Result<(), StoreError> {
        let state = serde_json::to_string(progress)
            .map_err(|_| StoreError::Inconsistent("a partition's progress not encoded"))?;
        let mut x = Expr::default();
        let update = stamped(&mut x)
            .set(x.eq(reconcile_attr::STATE, state))
            .set(x.eq(
                reconcile_attr::LISTED,
                AttributeValue::B(Blob::new(progress.listed.as_bytes())),
            ))
            .set(x.eq(keys::TTL, expires.unix_seconds()));
        let request = self
            .client
            .update_item()
            .table_name(self.table())
            .set_key(Some(keys::partition_progress_key(pass, prefix)))
            .update_expression(update.text())
            .set_expression_attribute_names(x.names_or_none())
            .set_expression_attribute_values(x.values_or_none());
        send_by_deadline!(&self.client, request)?;
        Ok(())
    }

    /// What the table says of a confirmed Cognito user that neither snapshot
    /// lists: the address's verified claim read first, then the user's
    /// profile, strongly consistent and last, just before any delete, so a
    /// sign-up confirmed while the pass ran is found with its profile and its
    /// own claim, and is never closed. A pending holder is not "another
    /// account": its primary migrates to this user at their next sign-in, and
    /// a secondary is closed by that sign-in's trigger.
    pub async fn unknown_user(&self, user: &UserId, email: &EmailAddress) -> Result<Unknown, StoreError> {
        let holder = self.verified_holder(email, Timestamp::now()).await?;
        let another = holder.is_some_and(|holder| holder != *user && !holder.is_pending());
        if self.profile_status(user).await?.is_some() {
            return Ok(Unknown::HasProfile);
        }
        Ok(if another {
            Unknown::OwnedByAnother
        } else {
            Unknown::NoProfile
        })
    }
}

fn checkpoint_of(item: Option<&Item>) -> Result<Checkpoint, StoreError> {
    match item
        .and_then(|item| item.get(reconcile_attr::STATE))
        .map(AttributeValue::as_s)
    {
        None => Ok(Checkpoint::default()),
        Some(Ok(state)) => {
            serde_json::from_str(state).map_err(|_| StoreError::Inconsistent("the reconcile checkpoint does not parse"))
        }
        Some(Err(_)) => Err(StoreError::Inconsistent("the reconcile checkpoint is not a string")),
    }
}
