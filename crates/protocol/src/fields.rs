//! The typed fields of an ACQUIRE: [`Priority`], [`Handle`] and [`Lease`].
//!
//! On the wire a handle of 0 means "a new request" and a duration of 0 ms
//! means "until released" (the perflock convention, kept by the C API).
//! In Rust those are `Option<Handle>` and [`Lease::UntilReleased`]; the
//! conversion to and from the wire numbers happens here and nowhere else.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::time::Duration;

/// Priority class of a request, as clients ask for it. It ranks votes only
/// where a resource's rule cannot order them by value (`newest`/`oldest`
/// resources, a floor above a ceiling of one min/max pair); on a `max` or
/// `min` resource the value decides. The daemon refuses the system classes
/// to third-party clients. On the wire it is one byte, 0..=3; in JSON and
/// on the command line its kebab-case name (`third-party-low` ..).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[repr(u8)]
pub enum Priority {
    /// Third-party, low (the default).
    #[default]
    ThirdPartyLow = 0,
    /// Third-party, high.
    ThirdPartyHigh = 1,
    /// System, low: root or the system group only.
    SystemLow = 2,
    /// System, high: root or the system group only.
    SystemHigh = 3,
}

impl Priority {
    /// Every class, lowest first.
    pub const ALL: [Priority; 4] = [
        Priority::ThirdPartyLow,
        Priority::ThirdPartyHigh,
        Priority::SystemLow,
        Priority::SystemHigh,
    ];

    /// The kebab-case name (`third-party-low`).
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::ThirdPartyLow => "third-party-low",
            Priority::ThirdPartyHigh => "third-party-high",
            Priority::SystemLow => "system-low",
            Priority::SystemHigh => "system-high",
        }
    }

    /// True for the classes only system clients may use.
    pub fn is_system(self) -> bool {
        matches!(self, Priority::SystemLow | Priority::SystemHigh)
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A priority that is not one of the four classes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriorityError {
    /// A wire number outside 0..=3.
    #[error("priority {0} is not 0..=3")]
    Number(u8),
    /// A name that is not a class.
    #[error("unknown priority {0:?}: use third-party-low, third-party-high, system-low or system-high (or 0..3)")]
    Name(String),
}

impl TryFrom<u8> for Priority {
    type Error = PriorityError;
    fn try_from(v: u8) -> Result<Priority, PriorityError> {
        Priority::ALL
            .get(usize::from(v))
            .copied()
            .ok_or(PriorityError::Number(v))
    }
}

impl FromStr for Priority {
    type Err = PriorityError;
    /// `third-party-low`, `third-party-high`, `system-low`, `system-high`,
    /// or the wire number `0`..`3`.
    fn from_str(s: &str) -> Result<Priority, PriorityError> {
        let s = s.trim();
        Priority::ALL
            .into_iter()
            .find(|p| p.as_str() == s || (*p as u8).to_string() == s)
            .ok_or_else(|| PriorityError::Name(s.to_string()))
    }
}

/// The handle of a live request: never 0 (0 on the wire asks for a new one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Handle(NonZeroU32);

impl Handle {
    /// A handle from its number; `None` for 0.
    pub fn new(n: u32) -> Option<Handle> {
        NonZeroU32::new(n).map(Handle)
    }

    /// Its number.
    pub fn get(self) -> u32 {
        self.0.get()
    }

    /// The wire number of an optional handle (0 = new request).
    pub fn to_wire(handle: Option<Handle>) -> u32 {
        handle.map_or(0, Handle::get)
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for Handle {
    type Err = String;
    fn from_str(s: &str) -> Result<Handle, String> {
        s.trim()
            .parse::<u32>()
            .ok()
            .and_then(Handle::new)
            .ok_or_else(|| format!("{s:?} is not a request handle (a number > 0)"))
    }
}

/// How long a request lasts. In JSON and on the wire it is a number of
/// milliseconds, 0 meaning until released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(from = "u32", into = "u32")]
pub enum Lease {
    /// Until the client releases it or its connection closes.
    #[default]
    UntilReleased,
    /// For this many milliseconds, then the daemon ends it.
    For {
        /// Milliseconds (> 0).
        ms: NonZeroU32,
    },
}

/// A duration that is no timed lease.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    /// Zero: a timed lease must last.
    #[error("a timed lease needs a duration > 0")]
    Zero,
    /// More milliseconds than the protocol's u32 holds (about 49 days).
    #[error("{0:?} is longer than the longest lease (4294967295 ms)")]
    TooLong(Duration),
}

impl Lease {
    /// A lease of `duration`, rounded up to whole milliseconds.
    pub fn timed(duration: Duration) -> Result<Lease, LeaseError> {
        let ms = duration.as_nanos().div_ceil(1_000_000);
        let ms = u32::try_from(ms).map_err(|_| LeaseError::TooLong(duration))?;
        NonZeroU32::new(ms)
            .map(|ms| Lease::For { ms })
            .ok_or(LeaseError::Zero)
    }

    /// The lease of a wire (and C API) duration: 0 = until released.
    pub fn from_ms(ms: u32) -> Lease {
        NonZeroU32::new(ms).map_or(Lease::UntilReleased, |ms| Lease::For { ms })
    }

    /// The wire duration: milliseconds, 0 = until released.
    pub fn ms(self) -> u32 {
        match self {
            Lease::UntilReleased => 0,
            Lease::For { ms } => ms.get(),
        }
    }

    /// How long it lasts; `None` until released.
    pub fn duration(self) -> Option<Duration> {
        match self {
            Lease::UntilReleased => None,
            Lease::For { ms } => Some(Duration::from_millis(u64::from(ms.get()))),
        }
    }
}

impl From<u32> for Lease {
    fn from(ms: u32) -> Lease {
        Lease::from_ms(ms)
    }
}

impl From<Lease> for u32 {
    fn from(lease: Lease) -> u32 {
        lease.ms()
    }
}

impl fmt::Display for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lease::UntilReleased => f.write_str("until released"),
            Lease::For { ms } => write!(f, "{ms} ms"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_names_numbers_and_json_agree() {
        for (n, p) in Priority::ALL.into_iter().enumerate() {
            assert_eq!(p as u8 as usize, n);
            assert_eq!(Priority::try_from(n as u8), Ok(p));
            assert_eq!(p.as_str().parse(), Ok(p));
            assert_eq!(n.to_string().parse(), Ok(p));
            assert_eq!(p.to_string(), p.as_str());
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.as_str()));
            assert_eq!(serde_json::from_str::<Priority>(&json).unwrap(), p);
        }
        assert_eq!(Priority::try_from(4), Err(PriorityError::Number(4)));
        assert_eq!(
            Priority::try_from(9).unwrap_err().to_string(),
            "priority 9 is not 0..=3"
        );
        let err = "high".parse::<Priority>().unwrap_err().to_string();
        assert!(
            err.contains("\"high\"") && err.contains("system-high"),
            "{err}"
        );
        assert!("4".parse::<Priority>().is_err());
        assert!(Priority::SystemLow.is_system() && !Priority::ThirdPartyHigh.is_system());
        assert_eq!(Priority::default(), Priority::ThirdPartyLow);
    }

    #[test]
    fn handles_are_never_zero() {
        assert_eq!(Handle::new(0), None);
        assert_eq!(Handle::new(7).unwrap().get(), 7);
        assert_eq!(Handle::to_wire(None), 0);
        assert_eq!(Handle::to_wire(Handle::new(5)), 5);
        assert_eq!("42".parse::<Handle>().unwrap().get(), 42);
        assert!("0".parse::<Handle>().is_err());
        assert_eq!(
            serde_json::to_string(&Handle::new(9).unwrap()).unwrap(),
            "9"
        );
        assert!(serde_json::from_str::<Handle>("0").is_err());
    }

    #[test]
    fn leases_convert_to_wire_milliseconds_in_one_place() {
        assert_eq!(Lease::from_ms(0), Lease::UntilReleased);
        assert_eq!(Lease::UntilReleased.ms(), 0);
        assert_eq!(Lease::from_ms(2000).ms(), 2000);
        assert_eq!(
            Lease::from_ms(2000).duration(),
            Some(Duration::from_secs(2))
        );
        assert_eq!(Lease::UntilReleased.duration(), None);
        assert_eq!(Lease::timed(Duration::from_secs(10)).unwrap().ms(), 10_000);
        // Sub-millisecond parts round up: a lease never ends early.
        assert_eq!(Lease::timed(Duration::from_micros(1500)).unwrap().ms(), 2);
        assert_eq!(Lease::timed(Duration::ZERO), Err(LeaseError::Zero));
        assert!(matches!(
            Lease::timed(Duration::from_secs(50 * 86400)),
            Err(LeaseError::TooLong(_))
        ));
        assert_eq!(serde_json::to_string(&Lease::from_ms(300)).unwrap(), "300");
        assert_eq!(
            serde_json::from_str::<Lease>("0").unwrap(),
            Lease::UntilReleased
        );
    }
}
