//! Seats: everything that holds descriptors in the daemon for a client —
//! a connection (its socket and its pidfd), a process-owned configuration
//! (a registered or detected app, a BIND such as a GameMode game: its
//! pidfd) — takes a seat, counted in all, per uid and for third-party
//! clients together, against the caps the descriptor limit allows
//! ([`crate::server::ConnLimits`]). So a uid that opens connections or
//! registers processes by the thousand meets the same cap either way, and
//! third-party uids never take the seats kept for system clients.

use crate::server::ConnLimits;
use std::collections::HashMap;

/// The seats taken, and the caps.
#[derive(Debug)]
pub struct Seats {
    limits: ConnLimits,
    per_uid: HashMap<u32, usize>,
    third_party: usize,
    total: usize,
}

impl Seats {
    /// No seats taken, under `limits`.
    pub fn new(limits: ConnLimits) -> Seats {
        Seats {
            limits,
            per_uid: HashMap::new(),
            third_party: 0,
            total: 0,
        }
    }

    /// The caps.
    pub fn limits(&self) -> &ConnLimits {
        &self.limits
    }

    /// Replace the caps (tests); seats already taken stay.
    pub fn set_limits(&mut self, limits: ConnLimits) {
        self.limits = limits;
    }

    /// Seats taken in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Why `uid` (a system client or not) may not take one more seat for
    /// `what` ("connections", "processes registered"), if so.
    pub fn refusal(&self, uid: u32, system: bool) -> Option<String> {
        let l = &self.limits;
        let held = self.per_uid.get(&uid).copied().unwrap_or(0);
        if self.total >= l.total {
            Some(format!(
                "too many connections and watched processes (limit {})",
                l.total
            ))
        } else if !system && self.third_party >= l.total - l.reserve {
            Some(format!(
                "too many third-party connections and watched processes (limit {}; the rest is kept for system clients)",
                l.total - l.reserve
            ))
        } else if uid != 0 && held >= l.per_uid {
            Some(format!(
                "uid {uid} already has {held} connections and watched processes (limit {} per uid)",
                l.per_uid
            ))
        } else {
            None
        }
    }

    /// Take a seat (after [`Seats::refusal`] said none).
    pub fn take(&mut self, uid: u32, system: bool) {
        *self.per_uid.entry(uid).or_default() += 1;
        self.third_party += usize::from(!system);
        self.total += 1;
    }

    /// Give a seat back.
    pub fn give_back(&mut self, uid: u32, system: bool) {
        if let Some(n) = self.per_uid.get_mut(&uid) {
            *n -= 1;
            if *n == 0 {
                self.per_uid.remove(&uid);
            }
        }
        self.third_party -= usize::from(!system);
        self.total -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn third_party_uids_leave_the_reserve_and_root_has_no_per_uid_cap() {
        let mut s = Seats::new(ConnLimits {
            total: 8,
            reserve: 2,
            per_uid: 4,
        });
        for _ in 0..4 {
            assert!(s.refusal(1000, false).is_none());
            s.take(1000, false);
        }
        let r = s.refusal(1000, false).unwrap();
        assert!(r.contains("uid 1000 already has 4"), "{r}");
        for _ in 0..2 {
            s.take(1001, false);
        }
        let r = s.refusal(1002, false).unwrap();
        assert!(r.contains("kept for system clients"), "{r}");
        assert!(s.refusal(0, true).is_none());
        s.take(0, true);
        s.take(0, true);
        assert!(s.refusal(0, true).unwrap().contains("limit 8"));
        s.give_back(1000, false);
        assert!(s.refusal(1002, false).is_none());
        assert_eq!(s.total(), 7);
    }
}
