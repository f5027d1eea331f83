//! The sub space: Cognito subs packed in 16 bytes, the partitions their hex
//! prefixes cut, and the snapshot chunks a scan writes them into.

use uuid::Uuid;

use crate::domain::UserId;

/// A partition of phase two holds about this many users, up to 2M users in
/// all (39,000 at 10M): its table subs are held in memory, 16 bytes each, and
/// its progress between runs is a bit each.
pub const PARTITION_TARGET: u64 = 8_000;
/// The longest partition prefix, in hex digits (256 partitions), and the
/// longest bucket of the snapshot.
pub const MAX_PREFIX_DIGITS: usize = 2;
/// A chunk's bucket is as narrow as leaves it this many subs on average:
/// a small step writes one chunk, not one per bucket.
pub const CHUNK_FILL: usize = 500;
/// A segment writes its buffer out once it holds this many subs (3.2 MB),
/// so 64 segments stay within a small function's memory.
pub const BUFFER_SUBS: usize = 200_000;
/// Subs per snapshot chunk: 16 bytes each, 320 KB, under DynamoDB's 400 KB.
pub const CHUNK_SUBS: usize = 20_000;
/// Table items a Scan page evaluates at most, so one page never outlasts
/// what is left of a run.
pub const SCAN_PAGE_ITEMS: i32 = 1_000;
/// The partition prefix length for a pass over `live` profiles: the fewest
/// hex digits that bring a partition under [`PARTITION_TARGET`] users. A small
/// pool is one partition and one listing; 10M users are 256 partitions.
pub fn prefix_digits(live: u64) -> usize {
    let mut digits = 0;
    let mut per_partition = live;
    while digits < MAX_PREFIX_DIGITS && per_partition > PARTITION_TARGET {
        per_partition /= 16;
        digits += 1;
    }
    digits
}

/// How many partitions `digits` hex digits cut the sub space into.
pub fn partition_count(digits: usize) -> u32 {
    16u32.pow(u32::try_from(digits).unwrap_or(0))
}

/// The prefix of partition `index` (`""` for the one partition of a small pool).
pub fn partition_prefix(index: u32, digits: usize) -> String {
    if digits == 0 {
        return String::new();
    }
    format!("{index:0digits$x}")
}

/// A Cognito sub, packed: the snapshot stores 16 bytes per user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sub(u128);

impl Sub {
    /// The sub of a user id in Cognito's form (a lower-case UUID); `None` for
    /// anything else, which no ListUsers filter by prefix can find.
    pub fn of(user: &UserId) -> Option<Self> {
        UserId::parse_sub(user.as_str())
            .ok()
            .and_then(|_| Uuid::try_parse(user.as_str()).ok())
            .map(|uuid| Self(uuid.as_u128()))
    }

    /// The user id it packs.
    pub fn user_id(self) -> UserId {
        // A UUID's hyphenated form is always a valid sub.
        UserId::parse_sub(&Uuid::from_u128(self.0).hyphenated().to_string())
            .unwrap_or_else(|_| unreachable!("a UUID is a sub"))
    }

    /// Its snapshot bucket: its first `digits` hex digits.
    pub fn bucket(self, digits: usize) -> String {
        let hex = format!("{:032x}", self.0);
        hex[..digits.min(hex.len())].to_owned()
    }

    /// Whether its hex form starts with `prefix` (hex digits).
    pub fn starts_with(self, prefix: &str) -> bool {
        format!("{:032x}", self.0).starts_with(prefix)
    }
}

/// The snapshot chunks of `subs` (one step of one segment): sorted, grouped
/// by bucket, the bucket as wide as leaves [`CHUNK_FILL`] subs a chunk on
/// average (0 to [`MAX_PREFIX_DIGITS`] hex digits), each chunk at most
/// [`CHUNK_SUBS`]. Pure: the step's writes, in order.
pub fn chunks(mut subs: Vec<Sub>) -> Vec<(String, Vec<Sub>)> {
    subs.sort_unstable();
    subs.dedup();
    let mut digits = 0;
    while digits < MAX_PREFIX_DIGITS && subs.len() / 16usize.pow(u32::try_from(digits + 1).unwrap_or(0)) >= CHUNK_FILL {
        digits += 1;
    }
    let mut out: Vec<(String, Vec<Sub>)> = Vec::new();
    for sub in subs {
        let bucket = sub.bucket(digits);
        match out.last_mut() {
            Some((last, chunk)) if *last == bucket && chunk.len() < CHUNK_SUBS => chunk.push(sub),
            _ => out.push((bucket, vec![sub])),
        }
    }
    out
}

/// Which profiles a snapshot chunk lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Snapshot {
    /// Live (active or suspended) profiles: Cognito must still have their users.
    Live,
    /// Deleted profiles whose Cognito user was not known gone: Cognito must no
    /// longer have them (a delete whose Cognito side never happened).
    Deleted,
}

/// Bytes a packed sub takes in a snapshot chunk.
pub const SUB_BYTES: usize = 16;

/// Subs as a chunk stores them: 16 big-endian bytes each.
pub fn pack(subs: &[Sub]) -> Vec<u8> {
    subs.iter().flat_map(|s| s.0.to_be_bytes()).collect()
}

/// A chunk's subs; `None` if its length is not a whole number of subs.
pub fn unpack(bytes: &[u8]) -> Option<Vec<Sub>> {
    let chunks = bytes.chunks_exact(SUB_BYTES);
    if !chunks.remainder().is_empty() {
        return None;
    }
    Some(
        chunks
            .map(|c| {
                let mut raw = [0u8; SUB_BYTES];
                raw.copy_from_slice(c);
                Sub(u128::from_be_bytes(raw))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(raw: &str) -> Sub {
        Sub::of(&UserId::parse(raw).unwrap()).unwrap()
    }

    #[test]
    fn small_pools_are_one_partition_large_ones_256() {
        assert_eq!(prefix_digits(0), 0);
        assert_eq!(prefix_digits(PARTITION_TARGET), 0);
        assert_eq!(prefix_digits(PARTITION_TARGET + 1), 1);
        assert_eq!(prefix_digits(16 * PARTITION_TARGET + 15), 1);
        assert_eq!(prefix_digits(16 * PARTITION_TARGET + 16), 2);
        assert_eq!(prefix_digits(10_000_000), 2);
        assert_eq!(prefix_digits(u64::MAX), MAX_PREFIX_DIGITS);
        assert_eq!(partition_count(0), 1);
        assert_eq!(partition_count(2), 256);
        assert_eq!(partition_prefix(0, 0), "");
        assert_eq!(partition_prefix(10, 1), "a");
        assert_eq!(partition_prefix(10, 2), "0a");
        assert_eq!(partition_prefix(255, 2), "ff");
    }

    #[test]
    fn subs_pack_to_16_bytes_and_back() {
        let subs = [
            sub("3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e"),
            sub("00000000-0000-4000-8000-000000000001"),
            sub("ffffffff-ffff-4fff-bfff-ffffffffffff"),
        ];
        let bytes = pack(&subs);
        assert_eq!(bytes.len(), 48);
        assert_eq!(unpack(&bytes).unwrap(), subs);
        assert_eq!(unpack(&bytes[..47]), None);
        assert_eq!(subs[0].user_id().as_str(), "3f1c2a7e-2b7d-4b0e-9a57-0e0f0b1c2d3e");
        assert_eq!(subs[0].bucket(2), "3f");
        assert_eq!(subs[0].bucket(0), "");
        assert_eq!(subs[1].bucket(2), "00");
        // A bucket is the start of the sub as ListUsers' prefix filter reads it.
        assert!(subs[2].user_id().as_str().starts_with(&subs[2].bucket(2)));
        assert!(subs[0].starts_with("3f1c2"));
        assert!(subs[0].starts_with(""));
        assert!(!subs[0].starts_with("3f1d"));
        assert_eq!(CHUNK_SUBS * 16, 320_000);
    }

    #[test]
    fn a_small_step_is_one_chunk_a_large_one_a_chunk_per_bucket() {
        let subs = |n: u128| -> Vec<Sub> {
            (0..n)
                .map(|i| Sub(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)))
                .collect()
        };
        let small = chunks(subs(2_000));
        assert_eq!(small.len(), 1);
        assert_eq!(small[0].0, "");
        assert_eq!(small[0].1.len(), 2_000);
        let middle = chunks(subs(20_000));
        assert!(middle.iter().all(|(bucket, _)| bucket.len() == 1));
        assert_eq!(middle.iter().map(|(_, c)| c.len()).sum::<usize>(), 20_000);
        let large = chunks(subs(200_000));
        assert!(
            large
                .iter()
                .all(|(bucket, chunk)| bucket.len() == 2 && chunk.iter().all(|s| s.bucket(2) == *bucket))
        );
        assert_eq!(large.iter().map(|(_, c)| c.len()).sum::<usize>(), 200_000);
        // One bucket's subs over the most a chunk holds go to two chunks.
        let crowded: Vec<Sub> = (0..(CHUNK_SUBS as u128 + 5)).map(Sub).collect();
        let split = chunks(crowded);
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].1.len(), CHUNK_SUBS);
        // Duplicates are one sub.
        assert_eq!(chunks(vec![Sub(7), Sub(7)])[0].1, [Sub(7)]);
    }

    #[test]
    fn ids_that_are_not_subs_are_not_packed() {
        for raw in [
            "user-a",
            "3F1C2A7E-2B7D-4B0E-9A57-0E0F0B1C2D3E",
            "3f1c2a7e2b7d4b0e9a570e0f0b1c2d3e",
        ] {
            assert_eq!(Sub::of(&UserId::parse(raw).unwrap()), None, "{raw}");
        }
    }
}
