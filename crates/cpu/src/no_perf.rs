//! Stands in for the `perf-event2` API `counters` uses, on architectures
//! that crate has no bindings for (32-bit ARM, e.g. TI AM437x): every
//! counter fails to open with a message saying so, and `lever cpu ipc`
//! reports that, as on a kernel without perf events.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "this build of Lever cannot open perf counters on {} (the perf-event2 crate has no bindings for it)",
            std::env::consts::ARCH
        ),
    )
}

/// The event kinds `counters` names.
pub mod events {
    use super::{unsupported, PathBuf};
    use std::io;

    /// A hardware event.
    #[derive(Clone, Copy)]
    pub struct Hardware;
    impl Hardware {
        pub const INSTRUCTIONS: Hardware = Hardware;
        pub const CPU_CYCLES: Hardware = Hardware;
    }

    /// A software event.
    #[derive(Clone, Copy)]
    pub struct Software;
    impl Software {
        pub const TASK_CLOCK: Software = Software;
        pub const CONTEXT_SWITCHES: Software = Software;
        pub const CPU_MIGRATIONS: Software = Software;
        pub const PAGE_FAULTS: Software = Software;
    }

    /// A PMU event named in sysfs.
    #[derive(Debug)]
    pub struct Dynamic;
    impl Dynamic {
        pub fn builder(_pmu: PathBuf) -> io::Result<Dynamic> {
            Err(unsupported())
        }
        pub fn event(&mut self, _name: &str) -> io::Result<&mut Dynamic> {
            Err(unsupported())
        }
        pub fn field(&mut self, _name: &str, _value: u64) -> io::Result<&mut Dynamic> {
            Err(unsupported())
        }
        pub fn params(&self) -> std::iter::Empty<&str> {
            std::iter::empty()
        }
        pub fn build(&self) -> io::Result<Dynamic> {
            Err(unsupported())
        }
    }
}

/// A counter's configuration; never builds here.
pub struct Builder<'a>(std::marker::PhantomData<&'a ()>);

impl Builder<'static> {
    pub fn new<E>(_event: E) -> Builder<'static> {
        Builder(std::marker::PhantomData)
    }
}

impl Builder<'_> {
    pub fn inherit(&mut self, _on: bool) -> &mut Self {
        self
    }
    pub fn enabled(&mut self, _on: bool) -> &mut Self {
        self
    }
    pub fn exclude_kernel(&mut self, _on: bool) -> &mut Self {
        self
    }
    pub fn build(&mut self) -> io::Result<Counter> {
        Err(unsupported())
    }
}

/// An open counter: none is ever opened here.
pub struct Counter(());

/// What a read returns.
pub struct CounterData(());

impl CounterData {
    pub fn count(&self) -> u64 {
        0
    }
    pub fn time_enabled(&self) -> Option<Duration> {
        None
    }
    pub fn time_running(&self) -> Option<Duration> {
        None
    }
}

impl Counter {
    pub fn reset(&mut self) -> io::Result<()> {
        Err(unsupported())
    }
    pub fn enable(&mut self) -> io::Result<()> {
        Err(unsupported())
    }
    pub fn disable(&mut self) -> io::Result<()> {
        Err(unsupported())
    }
    pub fn read_full(&mut self) -> io::Result<CounterData> {
        Err(unsupported())
    }
}
