//! The admin list: the users of some statuses in creation order, from GSI2.
//! Each status is spread over `keys::USER_LIST_SHARDS` partition keys, so a
//! page merges their Queries by sort key (`<createdAt>#<sub>`), reading each
//! shard lazily, a few items at a time: a page of `limit` reads about `limit`
//! items plus one small Query per shard, not shards × `limit`.

use std::collections::VecDeque;

use tokio::time::Instant;

use crate::deadline;
use crate::domain::{ListPosition, UserStatus, UserSummary};
use crate::store::keys::{self, Item};

use super::expr::and;
use super::items::{self, IndexedUser};
use super::retry::send_by_deadline;
use super::{Store, StoreError};

/// One page of the admin list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserPage {
    /// The users, oldest first.
    pub users: Vec<UserSummary>,
    /// Where the next page starts (after the last user here); `None` when
    /// the list is known to end here.
    pub next: Option<ListPosition>,
}

/// What the merge does next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step<T> {
    /// The smallest head of all shards: every shard that may hold a smaller
    /// one has been read far enough to tell.
    Next(T),
    /// Shard `n` has nothing buffered and may have more: read it.
    Fetch(usize),
    /// Every shard is read to its end.
    Done,
}

/// A k-way merge of sorted shards read lazily: pure, so the order and the
/// reads it asks for are tested without a table.
#[derive(Debug)]
pub(crate) struct Merge<T> {
    shards: Vec<Shard<T>>,
}

#[derive(Debug)]
struct Shard<T> {
    buffered: VecDeque<(String, T)>,
    more: bool,
}

impl<T> Merge<T> {
    /// `n` shards, none read yet.
    pub(crate) fn new(n: usize) -> Self {
        Self {
            shards: (0..n)
                .map(|_| Shard {
                    buffered: VecDeque::new(),
                    more: true,
                })
                .collect(),
        }
    }

    /// The next step. A shard is read only when its head is needed.
    pub(crate) fn step(&mut self) -> Step<T> {
        if let Some(empty) = self.shards.iter().position(|s| s.buffered.is_empty() && s.more) {
            return Step::Fetch(empty);
        }
        let smallest = self
            .shards
            .iter()
            .enumerate()
            .filter_map(|(n, s)| s.buffered.front().map(|(key, _)| (key, n)))
            .min()
            .map(|(_, n)| n);
        match smallest.and_then(|n| self.shards[n].buffered.pop_front()) {
            Some((_, value)) => Step::Next(value),
            None => Step::Done,
        }
    }

    /// What a read of shard `n` returned, in key order, and whether it may hold more.
    pub(crate) fn feed(&mut self, n: usize, items: impl IntoIterator<Item = (String, T)>, more: bool) {
        if let Some(shard) = self.shards.get_mut(n) {
            shard.buffered.extend(items);
            shard.more = more;
        }
    }
}

/// Items one Query of a shard asks for: the shard's share of the page and
/// one more, so a page rarely reads a shard twice and never much past its end.
pub(crate) fn per_query(limit: usize, shards: usize) -> i32 {
    i32::try_from(limit.div_ceil(shards.max(1)) + 1).unwrap_or(i32::MAX)
}

/// A shard being read: its partition key and where its next Query starts.
struct Cursor {
    pk: String,
    start: Option<Item>,
}

impl Store {
    /// Up to `limit` users whose status is one of `statuses`, oldest first,
    /// after `after`. GSI2 is eventually consistent: a new or changed profile
    /// shows there a moment later. A user moving between two listed statuses
    /// keeps their place (the sort key is the same in both), so a listing
    /// over both visits them once. The page ends early, with its next
    /// position, when the invocation's deadline comes.
    pub async fn list_users(
        &self,
        statuses: &[UserStatus],
        after: Option<&ListPosition>,
        limit: usize,
    ) -> Result<UserPage, StoreError> {
        let mut cursors: Vec<Cursor> = statuses
            .iter()
            .flat_map(|status| keys::user_list_pks(*status))
            .map(|pk| Cursor { pk, start: None })
            .collect();
        let page_size = per_query(limit, cursors.len());
        let after = after.map(|p| keys::user_list_sk(p.created_at, &p.user_id));
        let deadline = deadline::deadline_from_now();
        let mut merge: Merge<IndexedUser> = Merge::new(cursors.len());
        // Every shard's head is needed before the first user: one round of
        // Queries at once, not one after another.
        let first = cursors
            .iter_mut()
            .map(|cursor| self.read_shard(cursor, after.as_deref(), page_size));
        for (n, (read, more)) in futures::future::try_join_all(first).await?.into_iter().enumerate() {
            merge.feed(n, read, more);
        }
        let mut users: Vec<UserSummary> = Vec::new();
        let mut last: Option<ListPosition> = None;
        let complete = loop {
            // Out of time ends the page early, once it has someone to resume after.
            if users.len() == limit || (!users.is_empty() && Instant::now() >= deadline) {
                // The list ends here only if the merge knows it without another read.
                break matches!(merge.step(), Step::Done);
            }
            match merge.step() {
                Step::Next(user) => {
                    last = Some(ListPosition {
                        created_at: user.created_at,
                        user_id: user.user_id.clone(),
                    });
                    users.push(user.into_domain());
                }
                Step::Fetch(n) => {
                    let Some(cursor) = cursors.get_mut(n) else {
                        return Err(StoreError::Inconsistent("the merge asked for a shard it does not have"));
                    };
                    let (read, more) = self.read_shard(cursor, after.as_deref(), page_size).await?;
                    merge.feed(n, read, more);
                }
                Step::Done => break true,
            }
        };
        let next = if complete { None } else { last };
        Ok(UserPage { users, next })
    }

    /// One Query of a shard, after `after`, from where its last one stopped.
    async fn read_shard(
        &self,
        cursor: &mut Cursor,
        after: Option<&str>,
        page_size: i32,
    ) -> Result<(Vec<(String, IndexedUser)>, bool), StoreError> {
        let query = self
            .query(|x| match after {
                Some(after) => and([x.eq(keys::GSI2PK, cursor.pk.clone()), x.gt(keys::GSI2SK, after)]),
                None => x.eq(keys::GSI2PK, cursor.pk.clone()),
            })
            .index_name(keys::GSI2)
            .limit(page_size)
            .set_exclusive_start_key(cursor.start.take());
        let out = send_by_deadline!(&self.client, query)?;
        let mut read = Vec::new();
        for item in out.items.unwrap_or_default() {
            let sk = keys::key_string(&item, keys::GSI2SK)
                .ok_or(StoreError::Inconsistent("a GSI2 item without its sort key"))?
                .to_owned();
            read.push((sk, items::from_item(item)?));
        }
        cursor.start = out.last_evaluated_key.filter(|k| !k.is_empty());
        Ok((read, cursor.start.is_some()))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Runs the merge over `shards` (each sorted), reading `size` at a time;
    /// returns what it emitted and how many reads it made.
    fn run(shards: &[Vec<String>], size: usize, limit: usize) -> (Vec<String>, usize) {
        let mut merge = Merge::new(shards.len());
        let mut read = vec![0; shards.len()];
        let (mut out, mut reads) = (Vec::new(), 0);
        while out.len() < limit {
            match merge.step() {
                Step::Next(v) => out.push(v),
                Step::Fetch(n) => {
                    reads += 1;
                    let end = (read[n] + size).min(shards[n].len());
                    let chunk = shards[n][read[n]..end].iter().map(|k| (k.clone(), k.clone()));
                    merge.feed(n, chunk.collect::<Vec<_>>(), end < shards[n].len());
                    read[n] = end;
                }
                Step::Done => break,
            }
        }
        (out, reads)
    }

    #[test]
    fn the_merge_emits_in_key_order_and_reads_lazily() {
        let shards = vec![
            vec!["a".to_owned(), "d".to_owned(), "e".to_owned()],
            vec![],
            vec!["b".to_owned(), "c".to_owned(), "f".to_owned()],
        ];
        let (out, reads) = run(&shards, 2, 100);
        assert_eq!(out, ["a", "b", "c", "d", "e", "f"]);
        // One read per shard, then one more for each non-empty shard's second half.
        assert_eq!(reads, 5);
        // A page of two reads each shard once and no further.
        let (out, reads) = run(&shards, 2, 2);
        assert_eq!(
            (out.as_slice(), reads),
            (["a".to_owned(), "b".to_owned()].as_slice(), 3)
        );
    }

    #[test]
    fn a_query_asks_for_its_share_of_the_page() {
        assert_eq!(per_query(50, 16), 5);
        assert_eq!(per_query(100, 8), 14);
        assert_eq!(per_query(1, 8), 2);
        assert_eq!(per_query(1, 0), 2);
    }

    proptest! {
        /// Whatever the shards and read sizes: every key once, in order, and a
        /// page of `limit` never reads more than `limit` plus one per shard items.
        #[test]
        fn the_merge_is_a_sorted_union(
            mut shards in prop::collection::vec(prop::collection::btree_set("[a-z]{1,4}", 0..20), 1..10),
            size in 1usize..8,
        ) {
            // Keys are unique across shards, as GSI2 sort keys end with the sub.
            let mut seen = std::collections::BTreeSet::new();
            for shard in &mut shards {
                shard.retain(|k| seen.insert(k.clone()));
            }
            let shards: Vec<Vec<String>> = shards.into_iter().map(|s| s.into_iter().collect()).collect();
            let (out, _) = run(&shards, size, usize::MAX);
            let all: Vec<String> = seen.into_iter().collect();
            prop_assert_eq!(out, all.clone());
            for limit in [1usize, 3, 10] {
                let (page, reads) = run(&shards, size, limit);
                prop_assert_eq!(page.as_slice(), &all[..limit.min(all.len())]);
                // Each shard is read once to learn its head, and again only
                // after handing out everything it had.
                prop_assert!(reads <= shards.len() + limit);
            }
        }
    }
}
