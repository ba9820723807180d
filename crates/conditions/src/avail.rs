//! A measured value, or the reason this machine cannot provide it.

use serde::{Deserialize, Serialize};

/// A value or a plain statement of why it is not available here. Serializes
/// as `{"value": …}` or `{"unavailable": "…"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Avail<T> {
    /// The measured value.
    Value(T),
    /// Why there is no value (e.g. "no /sys/block/zram* devices").
    Unavailable(String),
}

impl<T> Avail<T> {
    /// The value, if any.
    pub fn value(&self) -> Option<&T> {
        match self {
            Avail::Value(v) => Some(v),
            Avail::Unavailable(_) => None,
        }
    }

    /// Map the value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Avail<U> {
        match self {
            Avail::Value(v) => Avail::Value(f(v)),
            Avail::Unavailable(r) => Avail::Unavailable(r),
        }
    }

    /// The value or the reason, as a borrowed pair.
    pub fn as_ref(&self) -> Avail<&T> {
        match self {
            Avail::Value(v) => Avail::Value(v),
            Avail::Unavailable(r) => Avail::Unavailable(r.clone()),
        }
    }
}
