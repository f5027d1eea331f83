//! What the migration trigger's password check costs, built as the functions
//! are: makes one hash of a password at the parameters asked for (with the
//! RustCrypto crates and `bcrypt`, as another system would have), then times
//! `legacy_password::verify` against it `rounds` times, with the trigger's
//! `CostLimits::TRIGGER`, exactly as migrate-user calls it.
//!
//! `hash-probe <rounds> <spec>`, a spec being one of `bcrypt:cost=12`,
//! `argon2id:m=19456,t=2,p=1`, `scrypt:ln=15,r=8,p=1` or
//! `pbkdf2-sha256:i=600000`, prints on stdout one JSON line: the hash (for
//! the bench's pending users), the time of each check in nanoseconds, and the
//! process's peak RSS; or, for a hash over the limits, why it was refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

use std::time::Instant;

use argon2::password_hash::{PasswordHasher, SaltString};
use user_service::import::{HashAlgorithm, PasswordHash};
use user_service::legacy_password::{self, CostLimits};

/// The password of events/migrate-user.json.
const PASSWORD: &str = "correct horse battery staple";
/// A salt for the PHC formats: its value changes nothing of the work.
const SALT: &[u8; 16] = b"user-service-bnc";

fn main() {
    let mut args = std::env::args().skip(1);
    let usage =
        "usage: hash-probe <rounds> <bcrypt:cost=N | argon2id:m=KIB,t=N,p=N | scrypt:ln=N,r=N,p=N | pbkdf2-sha256:i=N>";
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).expect(usage);
    let spec = args.next().expect(usage);
    let (algorithm, params) = spec.split_once(':').expect(usage);
    let param = |name: &str| -> u32 {
        params
            .split(',')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{spec}: no {name}"))
    };

    let made = Instant::now();
    let (algorithm, text) = match algorithm {
        "bcrypt" => (HashAlgorithm::Bcrypt, bcrypt::hash(PASSWORD, param("cost")).unwrap()),
        "argon2id" => {
            // Argon2id, version 0x13: the crate's defaults, with these costs.
            let params = argon2::Params::new(param("m"), param("t"), param("p"), None).unwrap();
            (HashAlgorithm::Argon2id, phc(&argon2::Argon2::default(), None, params))
        }
        "scrypt" => {
            let log_n = u8::try_from(param("ln")).unwrap();
            let params = scrypt::Params::new(log_n, param("r"), param("p"), scrypt::Params::RECOMMENDED_LEN).unwrap();
            (HashAlgorithm::Scrypt, phc(&scrypt::Scrypt, None, params))
        }
        "pbkdf2-sha256" => {
            let params = pbkdf2::Params {
                rounds: param("i"),
                output_length: 32,
            };
            let ident = Some(pbkdf2::Algorithm::Pbkdf2Sha256.ident());
            (HashAlgorithm::Pbkdf2Sha256, phc(&pbkdf2::Pbkdf2, ident, params))
        }
        other => panic!("{other}: not a format ({usage})"),
    };
    let made_in = made.elapsed();
    let hash = PasswordHash::parse(algorithm, &text).unwrap_or_else(|e| panic!("{spec}: {text}: {e:?}"));

    let limits = CostLimits::TRIGGER;
    let mut report = serde_json::json!({ "spec": spec, "hash": text, "generate_ns": made_in.as_nanos() as u64 });
    match legacy_password::verify(&hash, "not the password", &limits) {
        Ok(false) => {}
        Ok(true) => panic!("{spec}: a wrong password matched"),
        Err(unusable) => {
            report["unusable"] = serde_json::json!(unusable.to_string());
            println!("{report}");
            return;
        }
    }
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        let verified = legacy_password::verify(&hash, std::hint::black_box(PASSWORD), &limits);
        times.push(start.elapsed().as_nanos() as u64);
        assert_eq!(verified, Ok(true), "{spec}");
    }
    report["verify_ns"] = serde_json::json!(times);
    report["peak_rss_kib"] = serde_json::json!(peak_rss_kib());
    println!("{report}");
}

/// A PHC string of [`PASSWORD`] under [`SALT`], with `params` (and the
/// hasher's own algorithm and version, unless `algorithm` names one).
fn phc<H: PasswordHasher>(
    hasher: &H,
    algorithm: Option<argon2::password_hash::Ident<'_>>,
    params: H::Params,
) -> String {
    let salt = SaltString::encode_b64(SALT).unwrap();
    hasher
        .hash_password_customized(PASSWORD.as_bytes(), algorithm, None, params, &salt)
        .unwrap()
        .to_string()
}

/// The process's peak resident set (VmHWM), in KiB.
fn peak_rss_kib() -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
