//! The keys of the reconcile's own items: its checkpoint, each pass's
//! snapshot chunks and each partition's progress, and the recoveries whose
//! hold on sign-in it finishes if the stream does not.

use super::names::{Item, key};
use crate::domain::UserId;
use crate::reconcile::Snapshot;

pub(super) const RECONCILE_PK: &str = "RECONCILE";
pub(super) const CHECKPOINT_SK: &str = "CHECKPOINT";
pub(super) const PASS_PREFIX: &str = "RECONCILE#PASS#";
const LIVE_SK_PREFIX: &str = "LIVE#";
const PARTITION_SK_PREFIX: &str = "PARTITION#";
const DELETED_SK_PREFIX: &str = "DELETED#";
const HOLD_SK_PREFIX: &str = "HOLD#";

fn snapshot_label(snapshot: Snapshot) -> &'static str {
    match snapshot {
        Snapshot::Live => LIVE_SK_PREFIX,
        Snapshot::Deleted => DELETED_SK_PREFIX,
    }
}

/// Key of the reconcile's checkpoint: where the pass stands, and its lease.
pub fn reconcile_checkpoint_key() -> Item {
    key(RECONCILE_PK.to_owned(), CHECKPOINT_SK.to_owned())
}

/// The partition of one pass's snapshot of live subs.
pub fn snapshot_pk(pass: &str) -> String {
    format!("{PASS_PREFIX}{pass}")
}

/// The sort-key prefixes of the snapshot chunks that may hold subs starting
/// with `prefix`: a chunk's bucket is 0 to 2 hex digits, so the chunks of
/// each narrower bucket the prefix starts with, and those of every bucket at
/// least as long that starts with it.
pub fn snapshot_sk_prefixes(snapshot: Snapshot, prefix: &str) -> Vec<String> {
    const WIDEST: usize = crate::reconcile::MAX_PREFIX_DIGITS;
    let label = snapshot_label(snapshot);
    let mut out: Vec<String> = (0..prefix.len().min(WIDEST + 1))
        .map(|digits| format!("{label}{}#", &prefix[..digits]))
        .collect();
    if prefix.len() <= WIDEST {
        out.push(format!("{label}{prefix}"));
    }
    out
}

/// Key of one snapshot chunk: its subs' bucket (their first 0 to 2 hex
/// digits, ended by `#`), then the scan segment and that segment's chunk
/// number, so a run that writes a chunk again after a crash overwrites it.
pub fn snapshot_chunk_key(pass: &str, snapshot: Snapshot, bucket: &str, segment: u32, chunk: u32) -> Item {
    key(
        snapshot_pk(pass),
        format!("{}{bucket}#{segment:03}#{chunk:06}", snapshot_label(snapshot)),
    )
}

/// Key of a partition's progress between runs in one pass (its prefix, `""`
/// for the one partition of a small pool): beside the pass's snapshot, and
/// removed by TTL with it.
pub fn partition_progress_key(pass: &str, prefix: &str) -> Item {
    key(snapshot_pk(pass), format!("{PARTITION_SK_PREFIX}{prefix}"))
}

/// Key of a recovery's hold on `user`'s sign-in, the recovery at
/// `recovered_at` (epoch seconds, its `tokensValidAfter`): in the
/// reconcile's partition, zero-padded, so the holds list oldest first.
pub fn sign_in_hold_key(recovered_at: i64, user: &UserId) -> Item {
    key(
        RECONCILE_PK.to_owned(),
        format!("{HOLD_SK_PREFIX}{recovered_at:012}#{user}"),
    )
}

/// The partition of every recovery's hold item: the reconcile's own.
pub fn sign_in_holds_pk() -> &'static str {
    RECONCILE_PK
}

/// The sort-key bounds of the holds of recoveries before `before` (epoch
/// seconds): every hold's key is between them, a later one's above.
pub fn sign_in_holds_before(before: i64) -> (String, String) {
    (HOLD_SK_PREFIX.to_owned(), format!("{HOLD_SK_PREFIX}{before:012}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::keys::SK;

    fn s(item: &Item, k: &str) -> String {
        item[k].as_s().unwrap().clone()
    }

    #[test]
    fn holds_list_oldest_first_and_the_bounds_take_the_older_ones_alone() {
        let user = UserId::parse("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e").unwrap();
        let k = sign_in_hold_key(1_800_000_000, &user);
        assert_eq!(s(&k, "PK"), "RECONCILE");
        assert_eq!(s(&k, SK), "HOLD#001800000000#3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert!(s(&sign_in_hold_key(999, &user), SK) < s(&k, SK), "zero-padded");
        let (low, high) = sign_in_holds_before(1_800_000_000);
        assert!(low.as_str() < s(&sign_in_hold_key(1_799_999_999, &user), SK).as_str());
        assert!(s(&sign_in_hold_key(1_799_999_999, &user), SK) < high);
        assert!(s(&k, SK) > high, "a recovery at the bound itself is not before it");
        // Beside the checkpoint, never mistaken for it.
        assert_ne!(s(&k, SK), s(&reconcile_checkpoint_key(), SK));
    }

    #[test]
    fn a_prefix_finds_the_chunks_of_every_bucket_width_that_can_hold_it() {
        let live = Snapshot::Live;
        assert_eq!(snapshot_sk_prefixes(live, ""), ["LIVE#"]);
        assert_eq!(snapshot_sk_prefixes(live, "a"), ["LIVE##", "LIVE#a"]);
        assert_eq!(snapshot_sk_prefixes(live, "ab"), ["LIVE##", "LIVE#a#", "LIVE#ab"]);
        assert_eq!(snapshot_sk_prefixes(live, "abc"), ["LIVE##", "LIVE#a#", "LIVE#ab#"]);
        assert_eq!(snapshot_sk_prefixes(Snapshot::Deleted, "a"), ["DELETED##", "DELETED#a"]);
        // The two snapshots never read each other's chunks.
        let deleted = s(&snapshot_chunk_key("p", Snapshot::Deleted, "", 1, 2), SK);
        assert!(
            !snapshot_sk_prefixes(live, "")
                .iter()
                .any(|p| deleted.starts_with(p.as_str()))
        );
        let sk = |bucket: &str| s(&snapshot_chunk_key("p", live, bucket, 1, 2), SK);
        let found = |prefix: &str, bucket: &str| {
            snapshot_sk_prefixes(live, prefix)
                .iter()
                .any(|p| sk(bucket).starts_with(p.as_str()))
        };
        for (prefix, bucket, wanted) in [
            ("", "", true),
            ("", "ab", true),
            ("a", "", true),
            ("a", "a", true),
            ("a", "ab", true),
            ("a", "b", false),
            ("a", "ba", false),
            ("ab", "a", true),
            ("ab", "ab", true),
            ("ab", "ac", false),
            ("abc", "ab", true),
            ("abc", "a", true),
            ("abc", "ac", false),
        ] {
            assert_eq!(found(prefix, bucket), wanted, "{prefix} in {bucket}");
        }
    }
}
