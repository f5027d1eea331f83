//! Checking a password against the hash an imported user brought from the
//! system they came from, for the sign-in migration (docs/import-export.md).
//! bcrypt, Argon2id, scrypt and PBKDF2-SHA256, through the RustCrypto
//! password-hash crates and `bcrypt`.
//!
//! Cognito waits 5 s for the migration trigger, so a hash whose cost could
//! not be checked within that budget is refused before any work: an import
//! line can name any cost, and one costly hash must not hold a function (or
//! its memory) for minutes. [`CostLimits::TRIGGER`] is what the trigger
//! accepts; the import's dry run reports hashes above it.

use argon2::password_hash::{PasswordHash as Phc, PasswordVerifier};

use crate::import::{HashAlgorithm, PasswordHash};

/// The most work a hash may ask for, per algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CostLimits {
    /// bcrypt's cost (log2 of the rounds).
    pub bcrypt_cost: u32,
    /// Argon2's memory in KiB.
    pub argon2_memory_kib: u32,
    /// Argon2's passes.
    pub argon2_passes: u32,
    /// Argon2's lanes.
    pub argon2_lanes: u32,
    /// scrypt's log2 N.
    pub scrypt_log_n: u8,
    /// scrypt's block size r.
    pub scrypt_r: u32,
    /// scrypt's parallelism p.
    pub scrypt_p: u32,
    /// PBKDF2's iterations.
    pub pbkdf2_iterations: u32,
}

impl CostLimits {
    /// What the migration trigger checks within Cognito's 5 s, on its 1,769 MB
    /// (the bench measures each format at these costs' common settings):
    /// bcrypt 14, Argon2id 64 MiB × 4 passes, scrypt 2^17 × 8 (128 MiB),
    /// PBKDF2 1,000,000 iterations; each well above the usual defaults
    /// (bcrypt 10 to 12, OWASP's 19 MiB × 2 for Argon2id, scrypt 2^15, and
    /// 600,000 for PBKDF2-SHA256).
    pub const TRIGGER: Self = Self {
        bcrypt_cost: 14,
        argon2_memory_kib: 64 * 1024,
        argon2_passes: 4,
        argon2_lanes: 4,
        scrypt_log_n: 17,
        scrypt_r: 8,
        scrypt_p: 1,
        pbkdf2_iterations: 1_000_000,
    };
}

/// Why a hash cannot be checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    /// The hash's parameters ask for more work than the limits allow.
    #[error("the hash's cost is above what a sign-in can check in time")]
    TooCostly,
    /// The hash does not parse as its algorithm's format.
    #[error("the hash is not in its algorithm's format")]
    Malformed,
}

/// Whether `password` is the one `hash` was made from. A hash over `limits`,
/// or one that does not parse, is refused without any work.
pub fn verify(hash: &PasswordHash, password: &str, limits: &CostLimits) -> Result<bool, Unusable> {
    check_cost(hash, limits)?;
    match hash.algorithm() {
        // bcrypt uses at most 72 bytes of the password: a longer one checks
        // as its first 72, as in every bcrypt the hashes came from.
        HashAlgorithm::Bcrypt => bcrypt::verify(password, hash.hash()).map_err(|_| Unusable::Malformed),
        HashAlgorithm::Argon2id => phc_verify(&argon2::Argon2::default(), hash.hash(), password),
        HashAlgorithm::Scrypt => phc_verify(&scrypt::Scrypt, hash.hash(), password),
        HashAlgorithm::Pbkdf2Sha256 => phc_verify(&pbkdf2::Pbkdf2, hash.hash(), password),
    }
}

/// Refuses a hash whose parameters exceed `limits`, before any hashing.
pub fn check_cost(hash: &PasswordHash, limits: &CostLimits) -> Result<(), Unusable> {
    let within = match hash.algorithm() {
        HashAlgorithm::Bcrypt => {
            let cost: u32 = hash
                .hash()
                .get(4..6)
                .and_then(|c| c.parse().ok())
                .ok_or(Unusable::Malformed)?;
            cost <= limits.bcrypt_cost
        }
        HashAlgorithm::Argon2id => {
            let phc = parse(hash.hash())?;
            let params = argon2::Params::try_from(&phc).map_err(|_| Unusable::Malformed)?;
            params.m_cost() <= limits.argon2_memory_kib
                && params.t_cost() <= limits.argon2_passes
                && params.p_cost() <= limits.argon2_lanes
        }
        HashAlgorithm::Scrypt => {
            let phc = parse(hash.hash())?;
            let params = scrypt::Params::try_from(&phc).map_err(|_| Unusable::Malformed)?;
            params.log_n() <= limits.scrypt_log_n && params.r() <= limits.scrypt_r && params.p() <= limits.scrypt_p
        }
        HashAlgorithm::Pbkdf2Sha256 => {
            let phc = parse(hash.hash())?;
            let params = pbkdf2::Params::try_from(&phc).map_err(|_| Unusable::Malformed)?;
            params.rounds <= limits.pbkdf2_iterations
        }
    };
    if within { Ok(()) } else { Err(Unusable::TooCostly) }
}

fn parse(hash: &str) -> Result<Phc<'_>, Unusable> {
    Phc::new(hash).map_err(|_| Unusable::Malformed)
}

fn phc_verify(verifier: &dyn PasswordVerifier, hash: &str, password: &str) -> Result<bool, Unusable> {
    let phc = parse(hash)?;
    match verifier.verify_password(password.as_bytes(), &phc) {
        Ok(()) => Ok(true),
        Err(argon2::password_hash::Error::Password) => Ok(false),
        Err(_) => Err(Unusable::Malformed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWORD: &str = "correct horse battery staple";

    fn hash(algorithm: HashAlgorithm, text: &str) -> PasswordHash {
        PasswordHash::parse(algorithm, text).unwrap()
    }

    /// Made by other implementations than the ones that check them: Python's
    /// `bcrypt` (cost 5), hashlib's `pbkdf2_hmac` and `scrypt` written as PHC
    /// strings, and `argon2-cffi`; each from [`PASSWORD`].
    fn foreign() -> Vec<PasswordHash> {
        vec![
            hash(
                HashAlgorithm::Bcrypt,
                "$2b$05$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG",
            ),
            hash(
                HashAlgorithm::Pbkdf2Sha256,
                "$pbkdf2-sha256$i=1000,l=32$bGVnYWN5LXNhbHQtMDAwMQ$a0kZ4eid5Ymb9P5aXEoCN+0op94SVD22BrmQQ7j2EVw",
            ),
            hash(
                HashAlgorithm::Scrypt,
                "$scrypt$ln=10,r=8,p=1$bGVnYWN5LXNhbHQtMDAwMQ$a2OqTCFWthJhelfDUvfw5YddT/X5LMS5VAtRtLRK7/U",
            ),
            hash(
                HashAlgorithm::Argon2id,
                "$argon2id$v=19$m=1024,t=1,p=1$ix66jRQPSm15Zm13MHCgmg$rWCsCsGRYFnSoTKqs6Jq8RUJjernZ7zW8KsHw+z79sI",
            ),
        ]
    }

    #[test]
    fn each_format_made_elsewhere_takes_its_password_and_no_other() {
        for hash in foreign() {
            let algorithm = hash.algorithm();
            assert_eq!(verify(&hash, PASSWORD, &CostLimits::TRIGGER), Ok(true), "{algorithm:?}");
            assert_eq!(
                verify(&hash, "correct horse battery stapler", &CostLimits::TRIGGER),
                Ok(false),
                "{algorithm:?}"
            );
            assert_eq!(verify(&hash, "", &CostLimits::TRIGGER), Ok(false), "{algorithm:?}");
        }
    }

    #[test]
    fn bcrypts_2a_and_2y_prefixes_are_the_same_hash() {
        // OpenBSD's and PHP's spellings of one bcrypt hash.
        let b = "$2b$05$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG";
        for prefix in ["$2a$", "$2y$"] {
            let text = format!("{prefix}{}", &b[4..]);
            assert_eq!(
                verify(&hash(HashAlgorithm::Bcrypt, &text), PASSWORD, &CostLimits::TRIGGER),
                Ok(true)
            );
        }
    }

    #[test]
    fn a_hash_costlier_than_the_limits_is_refused_before_any_work() {
        // Costs no sign-in could check in 5 s; none of these is ever hashed
        // (the test would take minutes, or gigabytes, if they were).
        let costly = [
            hash(
                HashAlgorithm::Bcrypt,
                "$2b$31$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG",
            ),
            hash(
                HashAlgorithm::Argon2id,
                "$argon2id$v=19$m=4194304,t=1,p=1$ix66jRQPSm15Zm13MHCgmg$rWCsCsGRYFnSoTKqs6Jq8RUJjernZ7zW8KsHw+z79sI",
            ),
            hash(
                HashAlgorithm::Argon2id,
                "$argon2id$v=19$m=1024,t=1000,p=1$ix66jRQPSm15Zm13MHCgmg$rWCsCsGRYFnSoTKqs6Jq8RUJjernZ7zW8KsHw+z79sI",
            ),
            hash(
                HashAlgorithm::Scrypt,
                "$scrypt$ln=30,r=8,p=1$bGVnYWN5LXNhbHQtMDAwMQ$a2OqTCFWthJhelfDUvfw5YddT/X5LMS5VAtRtLRK7/U",
            ),
            hash(
                HashAlgorithm::Pbkdf2Sha256,
                "$pbkdf2-sha256$i=4000000000,l=32$bGVnYWN5LXNhbHQtMDAwMQ$a0kZ4eid5Ymb9P5aXEoCN+0op94SVD22BrmQQ7j2EVw",
            ),
        ];
        for hash in costly {
            assert_eq!(check_cost(&hash, &CostLimits::TRIGGER), Err(Unusable::TooCostly));
            assert_eq!(
                verify(&hash, PASSWORD, &CostLimits::TRIGGER),
                Err(Unusable::TooCostly),
                "{:?}",
                hash.algorithm()
            );
        }
    }

    #[test]
    fn the_limits_admit_the_foreign_hashes_and_tighter_ones_refuse_them() {
        let nothing = CostLimits {
            bcrypt_cost: 4,
            argon2_memory_kib: 8,
            argon2_passes: 1,
            argon2_lanes: 1,
            scrypt_log_n: 1,
            scrypt_r: 1,
            scrypt_p: 1,
            pbkdf2_iterations: 1,
        };
        for hash in foreign() {
            assert_eq!(check_cost(&hash, &CostLimits::TRIGGER), Ok(()));
            assert_eq!(check_cost(&hash, &nothing), Err(Unusable::TooCostly));
        }
    }
}
