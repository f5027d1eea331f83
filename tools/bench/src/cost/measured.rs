//! The measured inputs: what one invocation of each function costs in
//! DynamoDB units and requests, the migration's paths beside them, and the
//! latencies that turn requests into billed milliseconds. Committed in
//! `tools/bench/prices.json`, overlaid with this run's figures where the bench
//! measured them.

use serde_json::Value;

/// What one invocation of a function costs in DynamoDB and time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FunctionInput {
    pub(crate) name: String,
    pub(crate) rcu: f64,
    pub(crate) wcu: f64,
    /// Index writes the bench's units leave out: an item with GSI1 keys (an
    /// address record or claim) written costs GSI1 its own WCU.
    pub(crate) gsi1_wcu: f64,
    /// DynamoDB requests other than transactions.
    pub(crate) requests: f64,
    pub(crate) transactions: f64,
    /// Calls to SES or Cognito (not measured: the bench has neither).
    pub(crate) external_calls: f64,
    /// Whether the invocation writes an EMF document (it counts a metric).
    pub(crate) emf: bool,
    /// Behind the HTTP API (billed by API Gateway, logged in its access log).
    pub(crate) http: bool,
    /// Reads the verification key's secret at init.
    pub(crate) reads_key: bool,
    /// Its memory: the catalog's (chosen by measured cost); none, the stack's.
    pub(crate) memory_mb: Option<f64>,
    /// Its billed milliseconds at that memory, measured under the CPU quota
    /// the size buys (tools/bench/tuning.json): warm, and a cold start's
    /// init and first invocation. None: modelled from its requests.
    pub(crate) billed: Option<Billed>,
}

/// Billed milliseconds of an invocation, warm and cold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Billed {
    pub(crate) warm_ms: f64,
    pub(crate) cold_ms: f64,
}

/// A function's billed milliseconds at its catalog size, from the committed
/// tuning figures (the worse of the periods and inits).
fn billed_at_size(function: &user_service::catalog::Function, rates: &crate::tuning::choice::Rates) -> Option<Billed> {
    let tuning = crate::tuning::Tuning::committed().ok()?;
    let sizes = crate::tuning::choice::at_sizes(&tuning.of(function.name), rates);
    let at = sizes.iter().find(|s| s.mb == function.memory_mb)?;
    Some(Billed {
        warm_ms: at.warm.billed_mean,
        cold_ms: at.cold_billed_ms,
    })
}

/// DynamoDB requests and units of one invocation on a path of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct PathInput {
    pub(crate) rcu: f64,
    pub(crate) wcu: f64,
    pub(crate) gsi1_wcu: f64,
    /// DynamoDB requests other than transactions.
    pub(crate) requests: f64,
    pub(crate) transactions: f64,
}

/// The migration's inputs beside the functions' success paths.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MigrationInput {
    /// migrate-user refusing a wrong password: the reads, and the count written.
    pub(crate) wrong_password: PathInput,
    /// post-authentication at a migrated user's first sign-in: the pending
    /// account (one address) moved to the new sub.
    pub(crate) adoption: PathInput,
    /// The check's p50 in ms per format and parameters (the hash section's labels).
    pub(crate) hash_ms: Vec<(String, f64)>,
}

/// The measured inputs: per function, and the latencies that turn requests
/// into billed milliseconds.
#[derive(Debug, Clone)]
pub(crate) struct Measured {
    pub(crate) functions: Vec<FunctionInput>,
    pub(crate) migration: MigrationInput,
    pub(crate) ms_per_request: f64,
    pub(crate) ms_per_transaction: f64,
    pub(crate) init_ms: f64,
    /// Where the figures come from, for the report.
    pub(crate) source: String,
}

/// The committed measurements: `prices.json`'s `measured`.
pub(super) fn parse(m: &Value, rates: &crate::tuning::choice::Rates) -> Result<Measured, String> {
    let number = |v: &Value, field: &str| {
        v[field]
            .as_f64()
            .ok_or_else(|| format!("prices.json: measured {field}"))
    };
    let mut functions = Vec::new();
    for f in m["functions"].as_array().ok_or("prices.json: no measured functions")? {
        let name = f["name"].as_str().ok_or("prices.json: a function without a name")?;
        let catalog = user_service::catalog::by_name(name);
        functions.push(FunctionInput {
            name: name.to_owned(),
            rcu: number(f, "rcu")?,
            wcu: number(f, "wcu")?,
            gsi1_wcu: number(f, "gsi1_wcu")?,
            requests: number(f, "requests")?,
            transactions: number(f, "transactions")?,
            external_calls: number(f, "external_calls")?,
            emf: f["emf"].as_bool().unwrap_or(false),
            http: catalog.is_some_and(|c| matches!(c.trigger, user_service::catalog::Trigger::Http { .. })),
            reads_key: catalog.is_some_and(|c| c.reads_verification_key),
            memory_mb: catalog.map(|c| f64::from(c.memory_mb)),
            billed: catalog.and_then(|c| billed_at_size(c, rates)),
        });
    }
    let g = &m["migration"];
    let path = |name: &str| -> Result<PathInput, String> {
        let v = &g[name];
        let n = |field: &str| number(v, field).map_err(|e| format!("{e} of migration.{name}"));
        Ok(PathInput {
            rcu: n("rcu")?,
            wcu: n("wcu")?,
            gsi1_wcu: n("gsi1_wcu")?,
            requests: n("requests")?,
            transactions: n("transactions")?,
        })
    };
    let hash_ms = g["hash_ms"]
        .as_object()
        .ok_or("prices.json: no measured migration.hash_ms")?
        .iter()
        .map(|(label, ms)| {
            ms.as_f64()
                .filter(|v| *v > 0.0)
                .map(|ms| (label.clone(), ms))
                .ok_or_else(|| format!("prices.json: migration.hash_ms {label}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let migration = MigrationInput {
        wrong_password: path("wrong_password")?,
        adoption: path("adoption")?,
        hash_ms,
    };
    Ok(Measured {
        functions,
        migration,
        ms_per_request: number(m, "ms_per_request")?,
        ms_per_transaction: number(m, "ms_per_transaction")?,
        init_ms: number(m, "init_ms")?,
        source: m["source"].as_str().unwrap_or("prices.json").to_owned(),
    })
}

/// Where the measured inputs come from.
pub(crate) enum Inputs<'a> {
    /// The committed defaults (the sections did not run).
    Committed,
    /// This run's requests section, and its warm p50s when it ran: get-profile
    /// (one GetItem) and the add-email + remove-email cycle.
    Run {
        rows: &'a [crate::requests::RequestRow],
        /// The migration's paths beside them.
        beside: &'a [crate::requests::RequestRow],
        get_profile_ms: Option<f64>,
        add_remove_ms: Option<f64>,
        /// The hash section's p50s (empty in the smoke).
        hash_ms: Vec<(String, f64)>,
    },
}

/// The committed table, overlaid with this run's measurements where there are some.
pub(super) fn measured(defaults: Measured, inputs: &Inputs<'_>) -> Measured {
    let Inputs::Run {
        rows,
        beside,
        get_profile_ms,
        add_remove_ms,
        hash_ms,
    } = inputs
    else {
        return defaults;
    };
    let mut m = defaults;
    let mut from = Vec::new();
    if !rows.is_empty() {
        for row in *rows {
            if let Some(f) = m.functions.iter_mut().find(|f| f.name == row.function) {
                let transactions = row.made.get("TransactWriteItems").copied().unwrap_or(0);
                let all: u64 = row.made.values().sum();
                f.rcu = row.units.read;
                f.wcu = row.units.write;
                f.transactions = transactions as f64;
                f.requests = all.saturating_sub(transactions) as f64;
            }
        }
        from.push("units and requests from this run's requests section");
    }
    let path_of = |row: &crate::requests::RequestRow, gsi1_wcu: f64| {
        let transactions = row.made.get("TransactWriteItems").copied().unwrap_or(0);
        let all: u64 = row.made.values().sum();
        PathInput {
            rcu: row.units.read,
            wcu: row.units.write,
            gsi1_wcu,
            requests: all.saturating_sub(transactions) as f64,
            transactions: transactions as f64,
        }
    };
    for row in *beside {
        match row.path {
            Some(crate::requests::WRONG_LEGACY_PASSWORD) => {
                m.migration.wrong_password = path_of(row, m.migration.wrong_password.gsi1_wcu);
            }
            Some(crate::requests::FIRST_SIGN_IN_OF_A_MIGRATED_USER) => {
                m.migration.adoption = path_of(row, m.migration.adoption.gsi1_wcu);
            }
            _ => {}
        }
    }
    if !hash_ms.is_empty() {
        m.migration.hash_ms = hash_ms.clone();
        from.push("legacy password checks from this run's hashes section");
    }
    if let Some(ms) = get_profile_ms {
        m.ms_per_request = *ms;
        if let Some(cycle) = add_remove_ms {
            m.ms_per_transaction = ((cycle - ms) / 2.0).max(*ms);
        }
        from.push("latencies from this run's warm section");
    }
    if !from.is_empty() {
        m.source = format!("{}; the rest from {}", from.join(", "), m.source);
    }
    m
}
