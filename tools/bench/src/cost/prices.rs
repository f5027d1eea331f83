//! The price book: every price the model reads, with its unit, its date, its
//! source and how it was checked, parsed from `tools/bench/prices.json` and
//! refused when one is missing or has no date or source. The same file holds
//! the committed measurements, which `measured` reads.

use std::collections::BTreeMap;

use serde_json::Value;

use super::measured::{self, Measured};

/// The price book and the committed measurements, compiled in: one file to
/// update when AWS changes a price.
pub(crate) const DATA: &str = include_str!("../../prices.json");

/// One price as the data file gives it.
#[derive(Debug, Clone)]
pub(crate) struct Price {
    pub(crate) value: f64,
    pub(crate) unit: String,
    pub(crate) date: String,
    pub(crate) source: String,
    pub(crate) checked: String,
}

/// Every price the model reads, by name, checked once at parse time.
#[derive(Debug, Clone)]
pub(crate) struct Prices {
    pub(crate) entries: BTreeMap<String, Price>,
}

impl Prices {
    pub(super) fn get(&self, name: &str) -> f64 {
        // parse() refused a book without every name in NAMES.
        self.entries.get(name).map_or(f64::NAN, |p| p.value)
    }
}

/// The names the model reads: a data file without one of them is refused.
const NAMES: &[&str] = &[
    "lambda_requests",
    "lambda_gb_second_arm64",
    "lambda_gb_second_x86_64",
    "apigw_http_requests",
    "apigw_http_requests_over_tier",
    "apigw_http_first_tier",
    "dynamodb_read_request_units",
    "dynamodb_write_request_units",
    "dynamodb_rcu_hour",
    "dynamodb_wcu_hour",
    "dynamodb_storage_gb_month",
    "dynamodb_pitr_gb_month",
    "cognito_free_mau",
    "cognito_lite_mau_to_100k",
    "cognito_lite_mau_to_1m",
    "cognito_lite_mau_to_10m",
    "cognito_lite_mau_over_10m",
    "cognito_essentials_mau",
    "cognito_plus_mau",
    "ses_emails",
    "cloudwatch_custom_metric_month",
    "cloudwatch_alarm_metric_month",
    "cloudwatch_dashboard_month",
    "cloudwatch_logs_ingestion_gb",
    "cloudwatch_logs_storage_gb_month",
    "xray_traces_recorded",
    "secrets_manager_secret_month",
    "secrets_manager_api_calls",
    "eventbridge_aws_service_events",
    "eventbridge_custom_events",
    "cloudtrail_management_events_first_copy",
    "s3_storage_gb_month",
    "s3_put_requests",
];

/// The price book and the committed measurements.
pub(crate) fn parse(text: &str) -> Result<(Prices, Measured), String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("prices.json: {e}"))?;
    let mut entries = BTreeMap::new();
    for (name, p) in root["prices"].as_object().ok_or("prices.json: no prices")? {
        let text = |field: &str| {
            p[field]
                .as_str()
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned)
                .ok_or_else(|| format!("prices.json: {name} has no {field}"))
        };
        let price = Price {
            value: p["value"]
                .as_f64()
                .filter(|v| *v >= 0.0)
                .ok_or_else(|| format!("prices.json: {name} has no value"))?,
            unit: text("unit")?,
            date: text("date")?,
            source: text("source")?,
            checked: text("checked")?,
        };
        entries.insert(name.clone(), price);
    }
    if let Some(missing) = NAMES.iter().find(|n| !entries.contains_key(**n)) {
        return Err(format!("prices.json: no price {missing}"));
    }
    let prices = Prices { entries };
    let measured = measured::parse(&root["measured"], &super::rates_of(&prices))?;
    Ok((prices, measured))
}

/// The committed book, which the tests of every cost file price with.
#[cfg(test)]
pub(super) fn book() -> (Prices, Measured) {
    parse(DATA).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_price_the_model_reads_by_name_is_one_a_data_file_must_have() {
        // A name read but not required would price its line as NaN, silently.
        let sources = [
            include_str!("month.rs"),
            include_str!("usage.rs"),
            include_str!("sweep.rs"),
            include_str!("stack.rs"),
            include_str!("migration.rs"),
            include_str!("render.rs"),
            include_str!("measured.rs"),
        ];
        let mut read = 0;
        for source in sources {
            for (at, _) in source.match_indices("prices.get(\"") {
                let name: String = source[at + 12..].chars().take_while(|c| *c != '"').collect();
                read += 1;
                assert!(
                    NAMES.contains(&name.as_str()),
                    "{name} is read but a data file need not have it"
                );
            }
        }
        assert!(read > 20, "{read} prices read by name");
    }

    #[test]
    fn the_data_file_parses_and_every_price_has_a_date_and_a_source() {
        let (prices, measured) = book();
        for name in NAMES {
            let p = &prices.entries[*name];
            assert!(p.value.is_finite() && p.value >= 0.0, "{name}");
            assert!(!p.unit.is_empty(), "{name}: unit");
            assert!(
                p.date.len() == 10 && p.date.as_bytes()[4] == b'-' && p.date.as_bytes()[7] == b'-',
                "{name}: date {}",
                p.date
            );
            assert!(p.source.contains("https://"), "{name}: source {}", p.source);
            assert!(matches!(p.checked.as_str(), "search" | "knowledge"), "{name}: checked");
        }
        for p in prices.entries.values() {
            assert!(!p.date.is_empty() && !p.source.is_empty());
        }
        // Every function of the catalog has its committed row, and no other.
        let names: Vec<&str> = measured.functions.iter().map(|f| f.name.as_str()).collect();
        for f in user_service::catalog::FUNCTIONS {
            assert!(names.contains(&f.name), "{} has no row in prices.json", f.name);
        }
        assert_eq!(names.len(), user_service::catalog::FUNCTIONS.len());
        assert!(measured.functions.iter().any(|f| f.http) && measured.functions.iter().any(|f| f.reads_key));
    }

    #[test]
    fn a_price_without_a_source_is_refused() {
        let broken = DATA.replacen(
            "\"source\": \"https://aws.amazon.com/lambda/pricing/\"",
            "\"source\": \"\"",
            1,
        );
        assert!(parse(&broken).unwrap_err().contains("source"));
        let missing = DATA.replacen("\"ses_emails\"", "\"ses_mail\"", 1);
        assert!(parse(&missing).unwrap_err().contains("ses_emails"));
    }
}
