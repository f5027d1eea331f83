//! What the migration trigger's password check costs: `legacy_password::verify`
//! per hash format, at the parameters production systems use, timed in
//! `hash-probe` (tools/bench/floors, built as the functions are), which makes
//! each hash itself with the RustCrypto crates and `bcrypt`. Then the whole
//! migrate-user invocation per format: its binary in an execution environment,
//! a pending user holding each hash in DynamoDB Local (through the loopback
//! proxy), the right password, so every invocation answers the same and
//! writes nothing.
//!
//! The smoke runs every format at tiny costs, a few times, on the debug
//! binaries: it keeps the section working, it measures nothing.

use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use integration_tests::events;
use serde_json::{Value, json};
use user_service::import::{HashAlgorithm, PasswordHash};

use crate::plan::Plan;
use crate::proxy::Proxy;
use crate::runtime::Environment;
use crate::stats::{Sample, ms};

pub(crate) const PROBE: &str = "hash-probe";

/// migrate-user's memory in the catalog: at 1,769 MB Lambda gives a function
/// one full vCPU.
pub(crate) const TRIGGER_MEMORY_MB: u32 = user_service::catalog::MIGRATE_USER.memory_mb;

/// One format at one set of parameters.
pub(crate) struct Config {
    pub(crate) format: &'static str,
    pub(crate) parameters: &'static str,
    /// Where the parameters come from.
    pub(crate) why: &'static str,
    /// `hash-probe`'s spec.
    spec: &'static str,
    /// The same format at a tiny cost, for the smoke.
    smoke_spec: &'static str,
    /// At the trigger's ceiling (`CostLimits::TRIGGER`), not a production default:
    /// fewer checks, and no invocations.
    ceiling: bool,
}

impl Config {
    /// The label the cost model and the report name it by.
    pub(crate) fn label(&self) -> String {
        format!("{} {}", self.format, self.parameters)
    }
}

const BCRYPT_SMOKE: &str = "bcrypt:cost=4";
const ARGON2_SMOKE: &str = "argon2id:m=64,t=1,p=1";
const SCRYPT_SMOKE: &str = "scrypt:ln=4,r=8,p=1";
const PBKDF2_SMOKE: &str = "pbkdf2-sha256:i=1000";

/// The formats and parameters measured.
pub(crate) const CONFIGS: &[Config] = &[
    Config {
        format: "bcrypt",
        parameters: "cost 10",
        why: "a common default (PHP's `password_hash`, Go's `bcrypt.DefaultCost`); OWASP's minimum",
        spec: "bcrypt:cost=10",
        smoke_spec: BCRYPT_SMOKE,
        ceiling: false,
    },
    Config {
        format: "bcrypt",
        parameters: "cost 12",
        why: "a common default (Python's and Ruby's `bcrypt`, Laravel)",
        spec: "bcrypt:cost=12",
        smoke_spec: BCRYPT_SMOKE,
        ceiling: false,
    },
    Config {
        format: "argon2id",
        parameters: "m=19456 KiB, t=2, p=1",
        why: "OWASP's recommended minimum",
        spec: "argon2id:m=19456,t=2,p=1",
        smoke_spec: ARGON2_SMOKE,
        ceiling: false,
    },
    Config {
        format: "scrypt",
        parameters: "ln=15, r=8, p=1",
        why: "N=32768 (32 MiB): Go's x/crypto/scrypt recommendation for interactive logins",
        spec: "scrypt:ln=15,r=8,p=1",
        smoke_spec: SCRYPT_SMOKE,
        ceiling: false,
    },
    Config {
        format: "scrypt",
        parameters: "ln=17, r=8, p=1",
        why: "N=2^17 (128 MiB): OWASP's minimum, and the trigger's ceiling",
        spec: "scrypt:ln=17,r=8,p=1",
        smoke_spec: SCRYPT_SMOKE,
        ceiling: false,
    },
    Config {
        format: "pbkdf2-sha256",
        parameters: "600,000 iterations",
        why: "OWASP's recommendation for PBKDF2-HMAC-SHA256",
        spec: "pbkdf2-sha256:i=600000",
        smoke_spec: PBKDF2_SMOKE,
        ceiling: false,
    },
    Config {
        format: "bcrypt",
        parameters: "cost 14",
        why: "the trigger's ceiling (`CostLimits::TRIGGER`)",
        spec: "bcrypt:cost=14",
        smoke_spec: BCRYPT_SMOKE,
        ceiling: true,
    },
    Config {
        format: "argon2id",
        parameters: "m=65536 KiB, t=4, p=4",
        why: "the trigger's ceiling (`CostLimits::TRIGGER`); the lanes run one after another",
        spec: "argon2id:m=65536,t=4,p=4",
        smoke_spec: ARGON2_SMOKE,
        ceiling: true,
    },
    Config {
        format: "pbkdf2-sha256",
        parameters: "1,000,000 iterations",
        why: "the trigger's ceiling (`CostLimits::TRIGGER`)",
        spec: "pbkdf2-sha256:i=1000000",
        smoke_spec: PBKDF2_SMOKE,
        ceiling: true,
    },
];

/// What one format at one set of parameters cost.
pub(crate) struct HashRow {
    pub(crate) config: &'static Config,
    /// The spec the probe ran (the smoke's tiny one in the smoke).
    pub(crate) spec: &'static str,
    /// `legacy_password::verify` of the right password, each call.
    pub(crate) verify: Sample,
    /// Why the trigger's limits refused the hash, if they did.
    pub(crate) refused: Option<String>,
    pub(crate) peak_rss_kib: Option<u64>,
    /// Whole migrate-user invocations (None for the ceilings, or a refused hash).
    pub(crate) invocation: Option<Sample>,
    /// migrate-user's peak RSS after them (a fresh environment per config).
    pub(crate) invocation_peak_rss_kib: Option<u64>,
}

/// (checks, invocations) per config.
fn rounds(plan: &Plan, config: &Config) -> (usize, usize) {
    match (plan.smoke, config.ceiling) {
        (true, _) => (3, 2),
        (false, false) => (200, 100),
        (false, true) => (20, 0),
    }
}

/// One probe run: (the hash it made, its checks, why it was refused, peak RSS).
fn probe(plan: &Plan, spec: &str, rounds: usize) -> (String, Sample, Option<String>, Option<u64>) {
    let binary = plan.binary(PROBE);
    let out = Command::new(&binary)
        .arg(rounds.to_string())
        .arg(spec)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{} {spec}: {}",
        binary.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().rev().find(|l| l.starts_with('{')).unwrap_or_default();
    let report: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{PROBE} said {stdout}: {e}"));
    let times = report["verify_ns"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).map(Duration::from_nanos).collect())
        .unwrap_or_default();
    (
        report["hash"].as_str().unwrap_or_default().to_owned(),
        Sample::new(times),
        report["unusable"].as_str().map(str::to_owned),
        report["peak_rss_kib"].as_u64(),
    )
}

fn algorithm(format: &str) -> HashAlgorithm {
    match format {
        "bcrypt" => HashAlgorithm::Bcrypt,
        "argon2id" => HashAlgorithm::Argon2id,
        "scrypt" => HashAlgorithm::Scrypt,
        "pbkdf2-sha256" => HashAlgorithm::Pbkdf2Sha256,
        other => panic!("{other}: not a format"),
    }
}

/// Every config: the checks in the probe, then the invocations.
pub(crate) async fn run(plan: &Plan, proxy: &Proxy) -> Vec<HashRow> {
    let mut rows = Vec::new();
    let mut hashes = Vec::new();
    for config in CONFIGS {
        let spec = if plan.smoke { config.smoke_spec } else { config.spec };
        let (checks, _) = rounds(plan, config);
        let (hash, verify, refused, peak_rss_kib) = probe(plan, spec, checks);
        println!(
            "bench: hashes, {}{}: p50 {} ms, p99 {} ms ({checks} checks{})",
            config.label(),
            if plan.smoke {
                format!(" (smoke: {spec})")
            } else {
                String::new()
            },
            ms(verify.p50()),
            ms(verify.pct(0.99)),
            refused
                .as_deref()
                .map(|r| format!("; refused: {r}"))
                .unwrap_or_default()
        );
        hashes.push(hash);
        rows.push(HashRow {
            config,
            spec,
            verify,
            refused,
            peak_rss_kib,
            invocation: None,
            invocation_peak_rss_kib: None,
        });
    }

    // The whole invocation: a pending user per config, in a fresh table, and
    // an execution environment per config (its memory is that format's).
    let store = integration_tests::ddb::store().await;
    let table = store.config().table_name.clone();
    let launch = plan.launch("migrate-user", &table, &proxy.url, None);
    for (i, (row, hash)) in rows.iter_mut().zip(&hashes).enumerate() {
        let (_, invocations) = rounds(plan, row.config);
        if invocations == 0 || row.refused.is_some() {
            continue;
        }
        let address = format!("migrating{i}@example.com");
        let legacy = PasswordHash::parse(algorithm(row.config.format), hash).unwrap();
        crate::requests::import_pending(&store, &address, &legacy).await;
        let mut event = events::load("migrate-user");
        event["userName"] = json!(address);
        let env = Environment::start(&launch).await.unwrap();
        let mut times = Vec::with_capacity(invocations);
        // One untimed first: the connection.
        for round in 0..=invocations {
            let (took, answer) = env.invoke(&event).await.unwrap();
            assert_eq!(
                answer["response"]["finalUserStatus"],
                "CONFIRMED",
                "migrate-user, {}: {answer}",
                row.config.label()
            );
            if round > 0 {
                times.push(took);
            }
        }
        row.invocation_peak_rss_kib = env.memory_kib("VmHWM:");
        env.terminate().await;
        let sample = Sample::new(times);
        println!(
            "bench: hashes, migrate-user with {}{}: p50 {} ms, p99 {} ms ({invocations} invocations)",
            row.config.label(),
            if plan.smoke {
                format!(" (smoke: {})", row.spec)
            } else {
                String::new()
            },
            ms(sample.p50()),
            ms(sample.pct(0.99))
        );
        row.invocation = Some(sample);
    }
    rows
}

/// The p50 of each production config's check in ms, by label, for the cost
/// model (the smoke measures nothing: none).
pub(crate) fn p50s(rows: &[HashRow], smoke: bool) -> Vec<(String, f64)> {
    if smoke {
        return Vec::new();
    }
    rows.iter()
        .filter(|r| !r.config.ceiling && r.refused.is_none())
        .map(|r| (r.config.label(), crate::stats::millis(r.verify.p50())))
        .collect()
}

/// The report's section, in Markdown.
pub(crate) fn render(rows: &[HashRow], smoke: bool) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Legacy password checks (migrate-user)\n\nWhat the migration trigger's check of a pending user's legacy \
         password costs: `legacy_password::verify` with `CostLimits::TRIGGER`, as migrate-user calls it, timed in \
         `hash-probe` (tools/bench/floors, built as the functions are, one thread), on a hash the probe made of the \
         password at those parameters with the RustCrypto crates and `bcrypt`. Then whole migrate-user invocations \
         (its binary, a pending user holding that hash in DynamoDB Local behind the proxy: three GetItems and the \
         check, the right password).\n\nThese are this machine's figures ({}). Lambda gives migrate-user, at its \
         {TRIGGER_MEMORY_MB} MB (the catalog's), one vCPU: roughly one core here. The deployed functions are arm64 \
         (Graviton), so take them as an estimate; Cognito waits 5 s for the trigger.{}\n",
        crate::machine::cpu(),
        if smoke {
            " **Smoke: every format at a tiny cost on the debug binaries; these times measure nothing.**"
        } else {
            ""
        }
    );
    let _ = writeln!(
        md,
        "| format | parameters | why these | checks | check p50 ms | p99 ms | max ms | peak RSS MB | invocations | \
         invocation p50 ms | p99 ms | migrate-user's peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let parameters = if smoke {
            format!("{} (smoke: `{}`)", r.config.parameters, r.spec)
        } else {
            r.config.parameters.to_owned()
        };
        let (check_p50, check_p99, check_max) = match &r.refused {
            Some(why) => (format!("refused: {why}"), "–".to_owned(), "–".to_owned()),
            None => (ms(r.verify.p50()), ms(r.verify.pct(0.99)), ms(r.verify.max())),
        };
        let (n, inv_p50, inv_p99) = r.invocation.as_ref().map_or_else(
            || ("–".to_owned(), "–".to_owned(), "–".to_owned()),
            |s| (s.len().to_string(), ms(s.p50()), ms(s.pct(0.99))),
        );
        let mb = |kib: Option<u64>| {
            kib.map_or_else(|| "–".to_owned(), |k| format!("{:.1}", k as f64 * 1024.0 / 1_000_000.0))
        };
        let _ = writeln!(
            md,
            "| {} | {parameters} | {} | {} | **{check_p50}** | {check_p99} | {check_max} | {} | {n} | {inv_p50} | {inv_p99} | {} |",
            r.config.format,
            r.config.why,
            r.verify.len(),
            mb(r.peak_rss_kib),
            mb(r.invocation_peak_rss_kib),
        );
    }
    let _ = writeln!(
        md,
        "\nThe invocation adds the runtime's round trip and the three reads (two concurrent) to the check; \
         outside the smoke, the ceilings are checked fewer times and not invoked. Peak RSS: the probe's whole \
         process (the hash made, then checked), and migrate-user's after its invocations, each in an execution \
         environment of its own; glibc's allocator keeps freed buffers below its 32 MiB mmap threshold (argon2id's \
         19 MiB) in the heap, so a process that checks many of them holds several.\n"
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    use user_service::legacy_password::{CostLimits, check_cost};

    /// A hash in the format and at the parameters of `spec`, its salt and
    /// output borrowed (the cost check reads the parameters alone).
    fn shaped_like(spec: &str) -> PasswordHash {
        let (format, params) = spec.split_once(':').unwrap();
        let text = match format {
            "bcrypt" => {
                let cost: u32 = params.strip_prefix("cost=").unwrap().parse().unwrap();
                format!("$2b${cost:02}$.A.OjwTNTq.imIxv6bFMIuaLieDwek4.UmbiExkdH2.s82mnk5qeG")
            }
            "argon2id" => {
                format!("$argon2id$v=19${params}$ix66jRQPSm15Zm13MHCgmg$rWCsCsGRYFnSoTKqs6Jq8RUJjernZ7zW8KsHw+z79sI")
            }
            "scrypt" => format!("$scrypt${params}$bGVnYWN5LXNhbHQtMDAwMQ$a2OqTCFWthJhelfDUvfw5YddT/X5LMS5VAtRtLRK7/U"),
            "pbkdf2-sha256" => {
                format!(
                    "$pbkdf2-sha256${params},l=32$bGVnYWN5LXNhbHQtMDAwMQ$a0kZ4eid5Ymb9P5aXEoCN+0op94SVD22BrmQQ7j2EVw"
                )
            }
            other => panic!("{other}"),
        };
        PasswordHash::parse(algorithm(format), &text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    #[test]
    fn every_config_is_within_the_triggers_limits_and_names_its_format() {
        assert_eq!(TRIGGER_MEMORY_MB, 1769);
        for config in CONFIGS {
            for spec in [config.spec, config.smoke_spec] {
                let (format, _) = spec.split_once(':').unwrap();
                assert_eq!(format, config.format, "{spec}");
                assert_eq!(check_cost(&shaped_like(spec), &CostLimits::TRIGGER), Ok(()), "{spec}");
            }
        }
        let labels: Vec<String> = CONFIGS.iter().map(Config::label).collect();
        for (i, label) in labels.iter().enumerate() {
            assert!(!labels[..i].contains(label), "{label} twice");
        }
    }
}
