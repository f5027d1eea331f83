//! Capacity units of a request by DynamoDB's documented formula, from the
//! request and the items it touched: DynamoDB Local misreports transactions.
//!
//! - Item size: attribute names plus values (strings and binary by length,
//!   numbers about one byte per two digits plus one, lists and maps 3 bytes
//!   plus their elements and 1 byte each, booleans and nulls 1 byte).
//! - Reads: 1 RCU per 4 KB read (GetItem per item; Query and Scan on the sum
//!   of the items returned), halved when not strongly consistent.
//! - Writes: 1 WCU per 1 KB of the larger of the item before and after.
//! - Transactions: 2 WCU per 1 KB for every item, a ConditionCheck counted as
//!   a write of its item (the conservative reading).

use serde_json::Value;

/// Read and write capacity units.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Units {
    pub(crate) read: f64,
    pub(crate) write: f64,
}

impl std::ops::Add for Units {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        Self {
            read: self.read + other.read,
            write: self.write + other.write,
        }
    }
}

impl std::ops::Sub for Units {
    type Output = Self;
    fn sub(self, other: Self) -> Self {
        Self {
            read: self.read - other.read,
            write: self.write - other.write,
        }
    }
}

/// The size of a value in DynamoDB's JSON (`{"S": "…"}`), in bytes.
fn value_size(value: &Value) -> u64 {
    let Some((kind, inner)) = value.as_object().and_then(|o| o.iter().next()) else {
        return 0;
    };
    match (kind.as_str(), inner) {
        ("S", Value::String(s)) => s.len() as u64,
        ("B", Value::String(b)) => (b.len() as u64 * 3) / 4,
        ("N", Value::String(n)) => {
            let digits = n.chars().filter(char::is_ascii_digit).count() as u64;
            digits.div_ceil(2) + 1
        }
        ("BOOL" | "NULL", _) => 1,
        ("SS", Value::Array(a)) => a.iter().map(|s| s.as_str().map_or(0, |s| s.len() as u64)).sum(),
        ("NS", Value::Array(a)) => a.iter().map(|n| n.as_str().map_or(0, |n| n.len() as u64 / 2 + 1)).sum(),
        ("L", Value::Array(a)) => 3 + a.iter().map(|v| value_size(v) + 1).sum::<u64>(),
        ("M", Value::Object(m)) => 3 + m.iter().map(|(k, v)| k.len() as u64 + value_size(v) + 1).sum::<u64>(),
        _ => 0,
    }
}

/// The size of an item in DynamoDB's JSON, in bytes.
pub(crate) fn item_size(item: &Value) -> u64 {
    item.as_object()
        .map(|attrs| {
            attrs
                .iter()
                .map(|(name, value)| name.len() as u64 + value_size(value))
                .sum()
        })
        .unwrap_or(0)
}

fn read_units(bytes: u64, consistent: bool) -> f64 {
    let units = bytes.div_ceil(4096).max(1) as f64;
    if consistent { units } else { units / 2.0 }
}

fn write_units(bytes: u64) -> f64 {
    bytes.div_ceil(1024).max(1) as f64
}

/// The units of one request, given its operation, body and answer, and the size
/// of every item it writes as stored before and after it (`sizes`, by the
/// position of the write: one for a single write, one per item of a transaction).
pub(crate) fn units(operation: &str, request: &Value, answer: &Value, sizes: &[(u64, u64)]) -> Units {
    let consistent = request["ConsistentRead"].as_bool().unwrap_or(false);
    let larger = |i: usize| sizes.get(i).map_or(0, |(before, after)| *before.max(after));
    match operation {
        "GetItem" => Units {
            read: read_units(item_size(&answer["Item"]), consistent),
            write: 0.0,
        },
        "Query" | "Scan" => {
            let total: u64 = answer["Items"]
                .as_array()
                .map_or(0, |items| items.iter().map(item_size).sum());
            Units {
                read: read_units(total, consistent),
                write: 0.0,
            }
        }
        "PutItem" | "UpdateItem" | "DeleteItem" => Units {
            read: 0.0,
            write: write_units(larger(0)),
        },
        "TransactWriteItems" => Units {
            read: 0.0,
            write: (0..request["TransactItems"].as_array().map_or(0, Vec::len))
                .map(|i| 2.0 * write_units(larger(i)))
                .sum(),
        },
        _ => Units::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_follow_the_formula() {
        let item = json!({ "PK": { "S": "USER#1" }, "n": { "N": "123" }, "ok": { "BOOL": true } });
        assert_eq!(item_size(&item), 2 + 6 + 1 + 3 + 2 + 1);
        let nested = json!({ "l": { "L": [{ "S": "ab" }] } });
        assert_eq!(item_size(&nested), 1 + 3 + 2 + 1);
    }

    #[test]
    fn units_follow_the_formula() {
        let small = json!({ "PK": { "S": "x" } });
        let get = units(
            "GetItem",
            &json!({ "ConsistentRead": true }),
            &json!({ "Item": small }),
            &[],
        );
        assert_eq!(get, Units { read: 1.0, write: 0.0 });
        let eventual = units("GetItem", &json!({}), &json!({ "Item": small }), &[]);
        assert_eq!(eventual.read, 0.5);
        let tx = json!({ "TransactItems": [{}, {}, {}] });
        let written = units("TransactWriteItems", &tx, &json!({}), &[(100, 2000), (0, 10), (50, 0)]);
        assert_eq!(written.write, 2.0 * 2.0 + 2.0 + 2.0);
        assert_eq!(units("UpdateItem", &json!({}), &json!({}), &[(1500, 900)]).write, 2.0);
    }
}
