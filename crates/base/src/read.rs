//! Reading the extension's plain data from JSON values by hand.
//!
//! For: the input types of the guard (`entry`, `pass`, `recall`, answers),
//! which read a `serde_json::Value` field by field: a missing or wrong-typed
//! field reads as empty or 0 instead of failing the whole call (the core must
//! not lose a pass to one odd field), and one small reader replaces serde's
//! derived code, which is instantiated per type and costs kilobytes each in
//! the wasm (budget: `pkg/*.wasm` ≤ 512 KB). Not for: output types, which
//! keep derived `Serialize`.

use serde_json::{Map, Value};

/// A JSON object's fields, taken apart.
pub struct Fields(Map<String, Value>);

impl Fields {
    /// The fields of an object; anything else has none.
    pub fn of(v: Value) -> Fields {
        match v {
            Value::Object(map) => Fields(map),
            _ => Fields(Map::new()),
        }
    }

    /// A field's value, moved out (`null` when missing). Taken, not removed:
    /// the map's removal code is kilobytes in the wasm and nothing reads a
    /// field twice.
    pub fn take(&mut self, key: &str) -> Value {
        self.0.get_mut(key).map(Value::take).unwrap_or(Value::Null)
    }

    pub fn string(&mut self, key: &str) -> String {
        match self.take(key) {
            Value::String(s) => s,
            _ => String::new(),
        }
    }

    pub fn opt_string(&mut self, key: &str) -> Option<String> {
        match self.take(key) {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn boolean(&self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    /// A number (`None` when missing, `null` or not a number; JavaScript's
    /// NaN stringifies to `null`).
    pub fn number(&self, key: &str) -> Option<f64> {
        self.0.get(key).and_then(Value::as_f64)
    }

    /// A whole non-negative number, 0 otherwise.
    pub fn count(&self, key: &str) -> usize {
        self.opt_count(key).unwrap_or(0)
    }

    pub fn opt_count(&self, key: &str) -> Option<usize> {
        let v = self.0.get(key)?;
        v.as_u64().and_then(|n| usize::try_from(n).ok())
    }

    /// An array read item by item (empty when missing or not an array).
    pub fn list<T>(&mut self, key: &str, item: impl FnMut(Value) -> T) -> Vec<T> {
        match self.take(key) {
            Value::Array(items) => items.into_iter().map(item).collect(),
            _ => Vec::new(),
        }
    }
}

/// `serde_json::from_str::<T>` for a type read through `Value`: the same
/// value and the same errors, through the one `from_str::<Value>` in the
/// `.wasm` (a typed `from_str` instantiates serde_json's `Value` reader again).
pub fn from_json<T>(text: &str, read: impl FnOnce(Value) -> T) -> Result<T, serde_json::Error> {
    serde_json::from_str::<Value>(text).map(read)
}

/// Implements `Deserialize` for a type through `Value` and its `from_value`.
#[macro_export]
macro_rules! deserialize_via_value {
    ($($t:ty),* $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <serde_json::Value as serde::Deserialize>::deserialize(d).map(<$t>::from_value)
            }
        }
    )*};
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn odd_fields_read_as_empty() {
        let mut f = Fields::of(json!({"s": 1, "b": "yes", "n": "2", "c": -1, "d": 2.5, "l": {"x": 1}, "ok": 7}));
        assert_eq!(f.string("s"), "");
        assert!(!f.boolean("b"));
        assert_eq!(f.number("n"), None);
        assert_eq!(f.count("c"), 0);
        assert_eq!(f.count("d"), 0);
        assert_eq!(f.count("ok"), 7);
        assert!(f.list("l", |v| v).is_empty());
        assert_eq!(f.take("missing"), Value::Null);
        let mut none = Fields::of(json!([1, 2]));
        assert_eq!(none.string("x"), "");
    }
}
