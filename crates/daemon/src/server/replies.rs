//! The reply budgets: bytes of replies the daemon holds for clients that
//! have not taken them yet, counted per uid and in all, not per
//! connection (a uid with 512 connections must not get 512 backlogs).
//!
//! A connection is answered, and its document produced, only while its
//! uid and the pool it draws from are under their caps; otherwise it is
//! not answered (nor read) until replies of that uid, or of the pool, are
//! taken: back-pressure, like the per-connection backlog. The check comes
//! before each reply is built and a document is produced about one frame
//! at a time, so a cap is passed by one reply or one frame at most. The
//! accounting is O(1) per reply: each connection's charge is adjusted
//! where bytes are queued, where `flush` sends them, and on close.

use super::Conn;
use std::collections::{HashMap, VecDeque};

/// Caps on reply bytes queued for clients that have not taken them yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyBudget {
    /// What one uid other than root may have queued over all its
    /// connections.
    pub per_uid: usize,
    /// What may be queued in all, root's included.
    pub total: usize,
    /// Of `total`, what third-party clients together can never take: kept
    /// for root and the system group.
    pub reserve: usize,
}

impl Default for ReplyBudget {
    fn default() -> Self {
        ReplyBudget {
            per_uid: 512 << 10,
            total: 4 << 20,
            reserve: 1 << 20,
        }
    }
}

/// Why a connection may not be answered now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Blocked {
    /// Its uid is at its cap: it waits for that uid's replies to be taken.
    Uid(u32),
    /// The pool it draws from (third-party, or all) is at its cap.
    Pool,
}

/// What one connection has charged to the budgets.
#[derive(Debug, Default)]
pub(super) struct Charge {
    bytes: usize,
    /// Frames read and not answered yet (its read buffer).
    input: usize,
    uid: u32,
    system: bool,
    /// The queue it waits in, if it waits.
    pub waiting: Option<Blocked>,
}

/// The counters and the connections waiting for them.
#[derive(Debug, Default)]
pub(super) struct Replies {
    budget: ReplyBudget,
    per_uid: HashMap<u32, usize>,
    total: usize,
    third_party: usize,
    /// Frames read and not answered yet, per uid and of third-party
    /// clients in all: capped as replies are, for reading only (answering
    /// is what gives them back).
    input_uid: HashMap<u32, usize>,
    input_third_party: usize,
    by_uid: HashMap<u32, VecDeque<u64>>,
    pool: VecDeque<u64>,
    /// Uids whose bytes were taken since the last wake-up, and whether any
    /// were.
    freed: Vec<u32>,
    pool_freed: bool,
}

/// Waiters woken per queue when bytes are taken: each re-checks the caps
/// and goes back to the end of a queue if they are still reached.
const WAKE: usize = 2;

impl Replies {
    pub fn new(budget: ReplyBudget) -> Replies {
        Replies {
            budget,
            ..Replies::default()
        }
    }

    pub fn budget(&self) -> &ReplyBudget {
        &self.budget
    }

    pub fn set_budget(&mut self, budget: ReplyBudget) {
        self.budget = budget;
    }

    /// May a client of `uid` (of the system class or not) be answered now?
    pub fn allows(&self, uid: u32, system: bool) -> Result<(), Blocked> {
        let b = &self.budget;
        if self.total >= b.total
            || (!system && self.third_party >= b.total.saturating_sub(b.reserve))
        {
            return Err(Blocked::Pool);
        }
        if uid != 0 && self.per_uid.get(&uid).copied().unwrap_or(0) >= b.per_uid {
            return Err(Blocked::Uid(uid));
        }
        Ok(())
    }

    /// May a client of `uid` read more frames now: its replies within
    /// their caps ([`Replies::allows`]) and its unanswered frames too?
    pub fn allows_read(&self, uid: u32, system: bool) -> Result<(), Blocked> {
        self.allows(uid, system)?;
        let b = &self.budget;
        if !system && self.input_third_party >= b.total.saturating_sub(b.reserve) {
            return Err(Blocked::Pool);
        }
        if uid != 0 && self.input_uid.get(&uid).copied().unwrap_or(0) >= b.per_uid {
            return Err(Blocked::Uid(uid));
        }
        Ok(())
    }

    /// Charge `c` for what it holds now (unsent replies, the text and list
    /// of a document in progress; apart, frames read and not answered),
    /// to the uid and class it has now.
    pub fn charge(&mut self, c: &mut Conn) {
        let bytes = c.queued();
        let input = c.rbuf.capacity();
        let (uid, system) = (c.client.id.uid, c.client.id.system);
        let ch = &mut c.charge;
        if (ch.bytes != 0 || ch.input != 0) && (ch.uid, ch.system) != (uid, system) {
            // Its identity changed (BEHALF): the old one gets its share back.
            let old = std::mem::take(&mut ch.bytes);
            self.add(ch.uid, ch.system, old, false);
            let old = std::mem::take(&mut ch.input);
            self.add_input(ch.uid, ch.system, old, false);
        }
        ch.uid = uid;
        ch.system = system;
        if input != ch.input {
            let (old, new) = (ch.input, input);
            ch.input = new;
            self.add_input(uid, system, old.abs_diff(new), new > old);
        }
        if bytes != ch.bytes {
            let (old, new) = (ch.bytes, bytes);
            ch.bytes = new;
            if new > old {
                self.add(uid, system, new - old, true);
            } else {
                self.add(uid, system, old - new, false);
            }
        }
    }

    fn add_input(&mut self, uid: u32, system: bool, n: usize, more: bool) {
        let entry = self.input_uid.entry(uid).or_default();
        if more {
            *entry += n;
            if !system {
                self.input_third_party += n;
            }
            return;
        }
        *entry = entry.saturating_sub(n);
        if *entry == 0 {
            self.input_uid.remove(&uid);
        }
        if !system {
            self.input_third_party = self.input_third_party.saturating_sub(n);
        }
        if !self.freed.contains(&uid) {
            self.freed.push(uid);
        }
        self.pool_freed = true;
    }

    fn add(&mut self, uid: u32, system: bool, n: usize, more: bool) {
        let entry = self.per_uid.entry(uid).or_default();
        if more {
            *entry += n;
            self.total += n;
            if !system {
                self.third_party += n;
            }
            return;
        }
        *entry = entry.saturating_sub(n);
        if *entry == 0 {
            self.per_uid.remove(&uid);
        }
        self.total = self.total.saturating_sub(n);
        if !system {
            self.third_party = self.third_party.saturating_sub(n);
        }
        if !self.freed.contains(&uid) {
            self.freed.push(uid);
        }
        self.pool_freed = true;
    }

    /// `conn` waits until bytes of what blocked it are taken.
    pub fn wait(&mut self, conn: u64, charge: &mut Charge, why: Blocked) {
        if charge.waiting.is_some() {
            return;
        }
        charge.waiting = Some(why);
        match why {
            Blocked::Uid(uid) => self.by_uid.entry(uid).or_default().push_back(conn),
            Blocked::Pool => self.pool.push_back(conn),
        }
    }

    /// `conn` closes: its bytes are given back, it waits no more.
    pub fn forget(&mut self, conn: u64, charge: &mut Charge) {
        let bytes = std::mem::take(&mut charge.bytes);
        if bytes > 0 {
            self.add(charge.uid, charge.system, bytes, false);
        }
        let input = std::mem::take(&mut charge.input);
        if input > 0 {
            self.add_input(charge.uid, charge.system, input, false);
        }
        match charge.waiting.take() {
            Some(Blocked::Uid(uid)) => {
                if let Some(q) = self.by_uid.get_mut(&uid) {
                    q.retain(|&c| c != conn);
                    if q.is_empty() {
                        self.by_uid.remove(&uid);
                    }
                }
            }
            Some(Blocked::Pool) => self.pool.retain(|&c| c != conn),
            None => {}
        }
    }

    /// A connection of `uid` was served: if its uid, or the pool, still has
    /// room, one more of their waiters gets a turn (so waiters go on one
    /// after another while there is room, not only when bytes are taken).
    pub fn nudge(&mut self, uid: u32, system: bool) {
        let uid_waits = self.by_uid.contains_key(&uid);
        if uid_waits && self.allows_read(uid, system).is_ok() && !self.freed.contains(&uid) {
            self.freed.push(uid);
        }
        if !self.pool.is_empty() && self.allows_read(u32::MAX, false).is_ok() {
            self.pool_freed = true;
        }
    }

    /// The connections to try again now that bytes were taken: a few of
    /// each uid that freed some, and a few waiting for the pool. The
    /// caller clears their `waiting` and gives them a turn.
    pub fn woken(&mut self) -> Vec<u64> {
        let mut out = Vec::new();
        for uid in std::mem::take(&mut self.freed) {
            if let Some(q) = self.by_uid.get_mut(&uid) {
                for _ in 0..WAKE {
                    out.extend(q.pop_front());
                }
                if q.is_empty() {
                    self.by_uid.remove(&uid);
                }
            }
        }
        if std::mem::take(&mut self.pool_freed) {
            for _ in 0..WAKE {
                out.extend(self.pool.pop_front());
            }
        }
        out
    }
}
