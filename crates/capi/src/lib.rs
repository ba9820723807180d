//! `liblever`: the C library of `lever daemon`.
//!
//! Two APIs over one connection per process (the daemon ties requests to
//! the connection, so every lock dies with the process):
//!
//! - a drop-in for Qualcomm's `libqti-perfd-client.so` (seed 000 §3.4,
//!   §6.4): [`perf_lock_acq`] and [`perf_lock_rel`]. `clients/c/Makefile`
//!   also installs the library under that file name, so programs that
//!   `dlopen("/usr/lib/libqti-perfd-client.so")` work unchanged;
//! - the richer API of `include/lever.h`: [`lever_tune`] (with priority),
//!   [`lever_retune`], [`lever_untune`], [`lever_signal`] and
//!   [`lever_unsignal`] (use cases), [`lever_register_app`], [`lever_status`], [`lever_ping`] and
//!   [`lever_last_error`].
//!
//! The socket is `$LEVER_SOCKET`, else `/run/lever/lever.sock`. The
//! library connects on first use, starts a new connection in a forked
//! child, and reconnects once when the daemon closed the connection
//! (restarted). No call panics across the FFI boundary; every failure
//! returns -1 and leaves a message for [`lever_last_error`].
//!
//! This is the only crate of the workspace with `unsafe` code: reading
//! the caller's arrays and writing the caller's buffer.

mod session;

use lever_client::Priority;
use session::with_session;
pub use session::Error;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Largest number of opcode/value pairs one request can carry.
pub const MAX_PAIRS: usize = lever_protocol::MAX_PAIRS;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: String) {
    let message = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = message);
}

/// Run one entry point: failures and panics become -1 plus a message.
fn guard(name: &str, f: impl FnOnce() -> Result<c_int, Error>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            set_last_error(format!("{name}: {e}"));
            -1
        }
        Err(_) => {
            set_last_error(format!("{name}: internal error (panic); see stderr"));
            -1
        }
    }
}

fn invalid<T>(message: impl Into<String>) -> Result<T, Error> {
    Err(Error::Invalid(message.into()))
}

/// Check a count of ints (`what` names the argument): even, > 0, and at
/// most [`MAX_PAIRS`] pairs. Done before an array is read.
fn check_count(n: usize, what: &str) -> Result<(), Error> {
    if n == 0 || n % 2 != 0 {
        return invalid(format!(
            "{what} {n} must be even and > 0 (opcode, value, ...)"
        ));
    }
    if n / 2 > MAX_PAIRS {
        return invalid(format!("{} pairs exceed the limit of {MAX_PAIRS}", n / 2));
    }
    Ok(())
}

/// Opcode/value pairs from a perflock `int list[]` (opcodes are 32-bit
/// patterns, so `0x80000000`-style opcodes stored in an `int` survive).
pub fn pairs_from_ints(list: &[c_int]) -> Result<Vec<(u32, i64)>, Error> {
    check_count(list.len(), "numArgs")?;
    Ok(list
        .chunks_exact(2)
        .map(|p| (p[0] as u32, i64::from(p[1])))
        .collect())
}

/// Opcode/value pairs from `lever_tune`'s `int64_t` array. An opcode must
/// be a 32-bit value: 0..=0xFFFFFFFF, or a negative `int32_t` (a
/// sign-extended `int`), taken as its 32-bit pattern.
pub fn pairs_from_i64(values: &[i64]) -> Result<Vec<(u32, i64)>, Error> {
    check_count(values.len(), "n_values")?;
    values
        .chunks_exact(2)
        .map(|p| {
            let op = if let Ok(op) = u32::try_from(p[0]) {
                op
            } else if let Ok(op) = i32::try_from(p[0]) {
                op as u32
            } else {
                return invalid(format!("opcode {:#x} is not a 32-bit value", p[0]));
            };
            Ok((op, p[1]))
        })
        .collect()
}

fn priority_from(priority: c_int) -> Result<Priority, Error> {
    match u8::try_from(priority).ok().map(Priority::try_from) {
        Some(Ok(p)) => Ok(p),
        _ => invalid(format!(
            "priority {priority} is not 0..=3 (LEVER_PRIO_THIRD_PARTY_LOW .. LEVER_PRIO_SYSTEM_HIGH)"
        )),
    }
}

extern "C" fn child_after_fork() {
    session::reset_after_fork();
}

/// Register the fork handler once per process (called on first use).
pub(crate) fn register_at_fork() {
    // SAFETY: pthread_atfork only stores the function pointers; the child
    // handler is a plain `extern "C"` function that never unwinds (it only
    // allocates and stores a pointer).
    let rc = unsafe { libc::pthread_atfork(None, None, Some(child_after_fork)) };
    // On failure (ENOMEM) the library still works; only the fork-while-
    // locked case stays unprotected.
    let _ = rc;
}

/// Acquire a perflock, or update the live one behind `handle` (seed 000
/// §3.4). `duration` in ms, 0 = until [`perf_lock_rel`]; `list` holds
/// `numArgs` ints, opcode/value pairs. Returns a handle > 0, or -1.
///
/// # Safety
/// `list` must point to `numArgs` readable `int`s (it is only read).
#[no_mangle]
#[allow(non_snake_case)] // the seed's parameter name
pub unsafe extern "C" fn perf_lock_acq(
    handle: c_int,
    duration: c_int,
    list: *const c_int,
    numArgs: c_int,
) -> c_int {
    guard("perf_lock_acq", || {
        let duration_ms = u32::try_from(duration).or_else(|_| {
            invalid(format!(
                "duration {duration} ms is negative (0 = until released)"
            ))
        })?;
        if list.is_null() {
            return invalid("list is NULL");
        }
        let Ok(n) = usize::try_from(numArgs) else {
            return invalid(format!("numArgs {numArgs} is negative"));
        };
        check_count(n, "numArgs")?;
        // SAFETY: the caller promises `numArgs` readable ints at `list`
        // (the perflock contract); `list` is non-null and n is bounded.
        let ints = unsafe { std::slice::from_raw_parts(list, n) };
        let pairs = pairs_from_ints(ints)?;
        with_session(|s| s.acquire(handle, duration_ms, None, &pairs))
    })
}

/// Release the perflock `handle`. Returns `handle` on success, -1 on
/// failure (seed 000: "a non-zero integer: success").
#[no_mangle]
pub extern "C" fn perf_lock_rel(handle: c_int) -> c_int {
    guard("perf_lock_rel", || {
        with_session(|s| s.release(handle))?;
        Ok(handle)
    })
}

/// Acquire a new lock with an explicit priority (0..=3). `pairs` holds
/// `n_values` `int64_t`s: opcode, value, opcode, value, ... Returns a
/// handle > 0, or -1.
///
/// # Safety
/// `pairs` must point to `n_values` readable `int64_t`s.
#[no_mangle]
pub unsafe extern "C" fn lever_tune(
    duration_ms: u32,
    priority: c_int,
    pairs: *const i64,
    n_values: usize,
) -> c_int {
    guard("lever_tune", || {
        let priority = priority_from(priority)?;
        if pairs.is_null() {
            return invalid("pairs is NULL");
        }
        check_count(n_values, "n_values")?;
        // SAFETY: the caller promises `n_values` readable int64_t at
        // `pairs`; it is non-null and n_values is bounded above.
        let values = unsafe { std::slice::from_raw_parts(pairs, n_values) };
        let pairs = pairs_from_i64(values)?;
        with_session(|s| s.acquire(0, duration_ms, Some(priority), &pairs))
    })
}

/// Acquire `handle` again with the pairs and priority it was made with and
/// a new duration (extend, shorten, or make indefinite with 0). Works for
/// a lock that has expired too. Returns the handle, or -1.
#[no_mangle]
pub extern "C" fn lever_retune(handle: c_int, duration_ms: u32) -> c_int {
    guard("lever_retune", || {
        with_session(|s| s.retune(handle, duration_ms))
    })
}

/// Release `handle`. Returns 0, or -1.
#[no_mangle]
pub extern "C" fn lever_untune(handle: c_int) -> c_int {
    guard("lever_untune", || {
        with_session(|s| s.release(handle))?;
        Ok(0)
    })
}

/// Trigger the use case named (or numbered) by the C string `usecase`:
/// `duration_ms` 0 = its own duration, `0xFFFFFFFF` = until
/// [`lever_unsignal`]; `fps`/`width`/`height` 0 = not given. Returns a
/// handle > 0, or -1.
///
/// # Safety
/// `usecase` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn lever_signal(
    usecase: *const c_char,
    duration_ms: u32,
    priority: c_int,
    fps: u32,
    width: u32,
    height: u32,
) -> c_int {
    guard("lever_signal", || {
        let priority = priority_from(priority)?;
        if usecase.is_null() {
            return invalid("usecase is NULL");
        }
        // SAFETY: non-null, and the caller promises a NUL-terminated string.
        let name = unsafe { key_arg(usecase, "usecase") }?;
        let signal = lever_client::Signal {
            usecase: name.to_string(),
            lease: lever_client::SignalLease::from_wire(duration_ms),
            priority,
            detach: false,
            report: false,
            fps: std::num::NonZeroU32::new(fps),
            width: std::num::NonZeroU32::new(width),
            height: std::num::NonZeroU32::new(height),
        };
        with_session(|s| s.signal(&signal))
    })
}

/// A name argument (a use case, an app): non-NULL, UTF-8, 1..=255 bytes.
///
/// # Safety
/// `ptr` must be NULL or a NUL-terminated string.
unsafe fn key_arg<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Error> {
    if ptr.is_null() {
        return invalid(format!("{what} is NULL"));
    }
    // SAFETY: non-null, and the caller promises a NUL-terminated string.
    let name = unsafe { std::ffi::CStr::from_ptr(ptr) };
    let Ok(name) = name.to_str() else {
        return invalid(format!("{what} is not UTF-8"));
    };
    if name.is_empty() || name.len() > lever_protocol::MAX_USECASE_KEY {
        return invalid(format!(
            "{what} {name:?} must be 1..={} bytes",
            lever_protocol::MAX_USECASE_KEY
        ));
    }
    Ok(name)
}

/// Register process `pid` (0 = the calling process) as app `app` of the
/// daemon's target: the daemon applies the app's configuration until that
/// process exits (`lever run --app`, for machines where the daemon cannot
/// detect apps). Returns 0, or -1.
///
/// # Safety
/// `app` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn lever_register_app(pid: c_int, app: *const c_char) -> c_int {
    guard("lever_register_app", || {
        // SAFETY: the caller's promise, passed on.
        let app = unsafe { key_arg(app, "app") }?;
        let pid = match pid {
            0 => std::process::id(),
            p if p > 0 => p as u32,
            p => return invalid(format!("pid {p} is not a process")),
        };
        with_session(|s| s.register(pid, app))?;
        Ok(0)
    })
}

/// End a use case triggered with [`lever_signal`]. Returns 0, or -1.
#[no_mangle]
pub extern "C" fn lever_unsignal(handle: c_int) -> c_int {
    guard("lever_unsignal", || {
        with_session(|s| s.release(handle))?;
        Ok(0)
    })
}

/// Write the daemon's status (JSON) into `buf`, NUL-terminated and cut to
/// `len - 1` bytes if needed. Returns the full length without the NUL
/// (like `snprintf`; call with `NULL, 0` to size the buffer), or -1.
///
/// # Safety
/// `buf` must point to `len` writable bytes, or be NULL with `len` 0.
#[no_mangle]
pub unsafe extern "C" fn lever_status(buf: *mut c_char, len: usize) -> c_int {
    guard("lever_status", || {
        if buf.is_null() && len > 0 {
            return invalid(format!("buf is NULL but len is {len}"));
        }
        let json = with_session(|s| s.status())?;
        let bytes = json.as_bytes();
        if len > 0 {
            let n = bytes.len().min(len - 1);
            // SAFETY: buf is non-null with `len` writable bytes (caller's
            // promise); we write n + 1 <= len bytes, from a separate buffer.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
                *buf.add(n) = 0;
            }
        }
        c_int::try_from(bytes.len()).or_else(|_| invalid("status is larger than INT_MAX"))
    })
}

/// The message of this thread's last failed call ("" if none yet). The
/// text stays valid until the next failing call on this thread.
#[no_mangle]
pub extern "C" fn lever_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Check that the daemon answers. Returns its protocol version (> 0), or
/// -1.
#[no_mangle]
pub extern "C" fn lever_ping() -> c_int {
    guard("lever_ping", || with_session(|s| s.ping()).map(c_int::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last_error() -> String {
        // SAFETY: lever_last_error returns a valid NUL-terminated string
        // owned by this thread.
        unsafe { CStr::from_ptr(lever_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    // None of these reach the socket: validation comes first, so they need
    // no daemon (LEVER_SOCKET is pointed at nothing to be sure).
    fn no_daemon() {
        std::env::set_var("LEVER_SOCKET", "/nonexistent/lever-capi-test.sock");
    }

    #[test]
    fn perf_lock_acq_refuses_bad_arguments() {
        no_daemon();
        let list = [0x44008100, 1958400, 0x44008000];
        // SAFETY (all calls): list has 3 readable ints, never more is read.
        assert_eq!(unsafe { perf_lock_acq(0, 0, list.as_ptr(), 3) }, -1);
        assert!(
            last_error().contains("numArgs 3 must be even"),
            "{}",
            last_error()
        );
        assert_eq!(unsafe { perf_lock_acq(0, 0, std::ptr::null(), 2) }, -1);
        assert_eq!(last_error(), "perf_lock_acq: list is NULL");
        assert_eq!(unsafe { perf_lock_acq(0, 0, list.as_ptr(), -2) }, -1);
        assert!(last_error().contains("numArgs -2 is negative"));
        assert_eq!(unsafe { perf_lock_acq(0, 0, list.as_ptr(), 0) }, -1);
        assert!(last_error().contains("numArgs 0 must be even and > 0"));
        assert_eq!(unsafe { perf_lock_acq(0, -5, list.as_ptr(), 2) }, -1);
        assert!(last_error().contains("duration -5 ms is negative"));
        // Too many pairs is refused before the (huge) array is read.
        assert_eq!(
            unsafe { perf_lock_acq(0, 0, list.as_ptr(), i32::MAX - 1) },
            -1
        );
        assert!(
            last_error().contains("exceed the limit"),
            "{}",
            last_error()
        );
    }

    #[test]
    fn lever_tune_refuses_bad_arguments() {
        no_daemon();
        let pairs = [0x44008100i64, 1958400, 1];
        // SAFETY (all calls): pairs has 3 readable int64s, never more is read.
        assert_eq!(unsafe { lever_tune(0, 0, pairs.as_ptr(), 3) }, -1);
        assert!(last_error().contains("n_values 3 must be even"));
        assert_eq!(unsafe { lever_tune(0, 0, std::ptr::null(), 2) }, -1);
        assert_eq!(last_error(), "lever_tune: pairs is NULL");
        assert_eq!(unsafe { lever_tune(0, 4, pairs.as_ptr(), 2) }, -1);
        assert!(last_error().contains("priority 4 is not 0..=3"));
        assert_eq!(unsafe { lever_tune(0, -1, pairs.as_ptr(), 2) }, -1);
        assert!(last_error().contains("priority -1"));
        assert_eq!(unsafe { lever_tune(0, 0, pairs.as_ptr(), usize::MAX) }, -1);
        assert!(last_error().contains("must be even"));
        let bad = [0x1_0000_0000i64, 1];
        assert_eq!(unsafe { lever_tune(0, 0, bad.as_ptr(), 2) }, -1);
        assert!(last_error().contains("opcode 0x100000000 is not a 32-bit value"));
    }

    #[test]
    fn status_and_handles_are_checked_first() {
        no_daemon();
        // SAFETY: NULL with a non-zero length is refused before any write.
        assert_eq!(unsafe { lever_status(std::ptr::null_mut(), 10) }, -1);
        assert!(last_error().contains("buf is NULL but len is 10"));
        assert_eq!(perf_lock_rel(0), -1);
        assert!(last_error().contains("handle 0 is not a lock handle"));
        assert_eq!(lever_untune(-3), -1);
        assert!(last_error().contains("handle -3"));
        assert_eq!(lever_retune(12345, 10), -1);
        assert!(last_error().contains("handle 12345 is not held by this process"));
    }

    #[test]
    fn no_daemon_is_a_clear_error() {
        no_daemon();
        let list = [0x44008100, 1958400];
        // SAFETY: list has 2 readable ints.
        assert_eq!(unsafe { perf_lock_acq(0, 0, list.as_ptr(), 2) }, -1);
        let e = last_error();
        assert!(
            e.contains("cannot connect") && e.contains("lever-capi-test.sock"),
            "{e}"
        );
        assert_eq!(lever_ping(), -1);
    }

    #[test]
    fn pairs_conversion() {
        // An opcode with the top bit set survives a trip through `int`.
        let ints = [0x8000_0001u32 as c_int, -7];
        assert_eq!(pairs_from_ints(&ints).unwrap(), vec![(0x8000_0001, -7)]);
        let wide = [-0x7fff_ffffi64, 5, 0xffff_ffff, 1 << 40];
        assert_eq!(
            pairs_from_i64(&wide).unwrap(),
            vec![(0x8000_0001, 5), (0xffff_ffff, 1 << 40)]
        );
        assert!(pairs_from_i64(&[i64::from(i32::MIN) - 1, 0]).is_err());
    }
}
