//! A user's password hash from the other system, checked against its
//! algorithm's standard format (bcrypt's modular crypt, or a PHC string).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::domain::Invalid;

/// How a password hash was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashAlgorithm {
    /// Modular crypt format: `$2b$12$` and 53 characters.
    Bcrypt,
    /// PHC string: `$argon2id$v=19$m=…,t=…,p=…$salt$hash`.
    Argon2id,
    /// PHC string: `$scrypt$ln=…,r=…,p=…$salt$hash`.
    Scrypt,
    /// PHC string: `$pbkdf2-sha256$i=…[,l=…]$salt$hash`.
    #[serde(rename = "pbkdf2-sha256")]
    Pbkdf2Sha256,
}

/// A password hash in its algorithm's standard format. Its `Debug` hides the hash.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawPassword", into = "RawPassword")]
pub struct PasswordHash {
    algorithm: HashAlgorithm,
    hash: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPassword {
    algorithm: HashAlgorithm,
    hash: String,
}

impl PasswordHash {
    /// A hash, checked against its algorithm's format.
    pub fn parse(algorithm: HashAlgorithm, hash: &str) -> Result<Self, Invalid> {
        let well_formed = match algorithm {
            HashAlgorithm::Bcrypt => is_bcrypt(hash),
            HashAlgorithm::Argon2id => is_phc(hash, "argon2id", &["m", "t", "p"], &[]),
            HashAlgorithm::Scrypt => is_phc(hash, "scrypt", &["ln", "r", "p"], &[]),
            HashAlgorithm::Pbkdf2Sha256 => is_phc(hash, "pbkdf2-sha256", &["i"], &["l"]),
        };
        if !well_formed {
            return Err(Invalid("hash is not in the algorithm's standard format"));
        }
        Ok(Self {
            algorithm,
            hash: hash.to_owned(),
        })
    }

    /// How it was made.
    pub fn algorithm(&self) -> HashAlgorithm {
        self.algorithm
    }

    /// The hash as given.
    pub fn hash(&self) -> &str {
        &self.hash
    }
}

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasswordHash")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl TryFrom<RawPassword> for PasswordHash {
    type Error = Invalid;
    fn try_from(raw: RawPassword) -> Result<Self, Self::Error> {
        Self::parse(raw.algorithm, &raw.hash)
    }
}

impl From<PasswordHash> for RawPassword {
    fn from(value: PasswordHash) -> Self {
        Self {
            algorithm: value.algorithm,
            hash: value.hash,
        }
    }
}

/// `$2a$`, `$2b$` or `$2y$`, a cost of 04 to 31, then 22 characters of salt
/// and 31 of hash in bcrypt's base64.
fn is_bcrypt(hash: &str) -> bool {
    let bytes = hash.as_bytes();
    let alphabet = |b: &u8| b.is_ascii_alphanumeric() || *b == b'.' || *b == b'/';
    let cost = hash.get(4..6).and_then(|c| c.parse::<u8>().ok());
    bytes.len() == 60
        && matches!(&bytes[..4], b"$2a$" | b"$2b$" | b"$2y$")
        && bytes[4..6].iter().all(u8::is_ascii_digit)
        && cost.is_some_and(|c| (4..=31).contains(&c))
        && bytes[6] == b'$'
        && bytes[7..].iter().all(alphabet)
}

/// A PHC string: `$id[$v=19]$k=n,…$salt$hash`, with every `required`
/// parameter, no others than `required` and `optional`, each a number; salt
/// and hash in base64 without padding (passlib's `.` for `+` admitted).
fn is_phc(hash: &str, id: &str, required: &[&str], optional: &[&str]) -> bool {
    let mut parts = hash.split('$');
    if parts.next() != Some("") || parts.next() != Some(id) {
        return false;
    }
    let mut rest: Vec<&str> = parts.collect();
    if rest.first().is_some_and(|v| v.starts_with("v=")) {
        let version = rest.remove(0);
        if version[2..].parse::<u32>().is_err() {
            return false;
        }
    }
    let [params, salt, digest] = rest.as_slice() else {
        return false;
    };
    let mut seen = Vec::new();
    for param in params.split(',') {
        let Some((name, value)) = param.split_once('=') else {
            return false;
        };
        let known = required.contains(&name) || optional.contains(&name);
        if !known || seen.contains(&name) || value.parse::<u64>().is_err() {
            return false;
        }
        seen.push(name);
    }
    let b64 = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/.".contains(&b));
    required.iter().all(|name| seen.contains(name)) && b64(salt) && b64(digest)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::import) const BCRYPT: &str = "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW";

    #[test]
    fn password_hashes_are_held_to_their_formats() {
        use HashAlgorithm::*;
        let good = [
            (Bcrypt, BCRYPT),
            (
                Argon2id,
                "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
            ),
            (
                Scrypt,
                "$scrypt$ln=16,r=8,p=1$aM15713r3Xsvxbi31lqr1Q$nFNh2CVHVjNldFVKDHDlm4CbdRSCdEBsjjJxD+iCs5E",
            ),
            (
                Pbkdf2Sha256,
                "$pbkdf2-sha256$i=600000,l=32$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
            ),
            (
                Pbkdf2Sha256,
                "$pbkdf2-sha256$i=29000$N2YuJ8l5M2bsfWwPYQyxbg$Hh7sjS.R8ex4b2Q6d8WyfxsK1g3w2C4G6FQZ3s8mJNo",
            ),
        ];
        for (algorithm, hash) in good {
            assert!(PasswordHash::parse(algorithm, hash).is_ok(), "{algorithm:?} {hash}");
        }
        let bad = [
            (Bcrypt, "$2b$03$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"),
            (Bcrypt, "$2x$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"),
            (Bcrypt, "$2b$12$R9h/cIPz0gi"),
            (Argon2id, "$argon2i$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub"),
            (Argon2id, "$argon2id$v=19$m=65536,t=3$c29tZXNhbHQ$RdescudvJCsgt3ub"),
            (
                Argon2id,
                "$argon2id$v=19$m=65536,t=3,p=4,x=1$c29tZXNhbHQ$RdescudvJCsgt3ub",
            ),
            (Scrypt, "$scrypt$ln=16,r=8,p=1$$hash"),
            (Pbkdf2Sha256, "$pbkdf2-sha256$i=many$c2FsdA$aGFzaA"),
            (Pbkdf2Sha256, BCRYPT),
        ];
        for (algorithm, hash) in bad {
            assert!(PasswordHash::parse(algorithm, hash).is_err(), "{algorithm:?} {hash}");
        }
        let debug = format!("{:?}", PasswordHash::parse(Bcrypt, BCRYPT).unwrap());
        assert!(!debug.contains("$2b$"), "{debug}");
    }
}
