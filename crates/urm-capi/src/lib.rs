//! `libUrmClient.so`: the client library of Qualcomm's Userspace Resource
//! Manager (URM, seed 001) for `lever daemon --urm DIR`.
//!
//! A program built against URM's `UrmAPIs.h` and linked with URM's
//! `libUrmClient.so.1` runs unchanged against Lever: this library has
//! URM's file name, soname and C ABI (the functions are `extern "C"` in
//! URM's header, so the symbols are plain C names), and turns each call
//! into a request to Lever's daemon through `lever-client`:
//!
//! | URM call | Lever |
//! |---|---|
//! | `tuneResources(duration, properties, n, list)` | ACQUIRE: each `SysResource`'s `mResCode`/`mResInfo` becomes an opcode through the daemon's URM table (URM request), its value times the resource's `Unit` factor; `duration` -1 = until released |
//! | `retuneResources(handle, duration)` | ACQUIRE of the same handle with the new duration (pairs and class from STATUS) |
//! | `untuneResources(handle)`, `untuneSignal(handle)` | RELEASE |
//! | `getProp(name, buf, size, default)` | the URM table's properties (URM's `PropertiesConfig.yaml`), else `default` |
//! | `tuneSignal(sigId, sigType, duration, …)` | SIGNAL of use case `sigType << 24 \| sigId` (0 = the signal's own `Timeout`, -1 = until released) |
//! | `relaySignal(…)` | checks that the daemon answers; Lever has no URM extensions to relay to |
//!
//! The class of a request is URM's: system for a root process (effective
//! uid 0), third-party otherwise; `properties & 0xFF` high (0) or low (1).
//! Requests last as long as this process's connection (the daemon
//! releases them when the process exits, as URM's garbage collector
//! does). URM's `urmCli` is special-cased by URM itself (its requests
//! belong to its parent shell); here a timed request of a process named
//! `urmCli` is detached, so it lasts its duration after `urmCli` exits.
//!
//! URM promises only that a call was *sent* (see `session`): -1 means
//! the daemon could not be reached or the arguments are ones URM's own
//! client refuses before sending; a request the daemon refuses still gets
//! a handle, and the reason goes to syslog and [`lever_urm_last_error`].
//! The socket is `$LEVER_SOCKET`, else `/run/lever/lever.sock`.
//!
//! This crate's `unsafe` is confined to reading the caller's arrays and
//! strings and writing the caller's buffer, in this file.

// URM's library name, `libUrmClient.so`, is the crate name.
#![allow(non_snake_case)]

mod session;

pub use session::{lease, priority, Error, Resource, Sent, REFUSED_BASE};
use session::{with_session, Session};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// URM's client refuses a request of more resources than this.
pub const MAX_RESOURCES: i32 = 20;

/// URM's `SysResource` (`UrmPlatformAL.h`), 24 bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)] // URM's field names
pub struct SysResource {
    /// `ResType << 16 | ResID` (MSB set for a custom resource).
    pub mResCode: u32,
    /// Bits 15..8 the logical cluster, 7..0 the core (from 1).
    pub mResInfo: i32,
    /// Unused by URM's client and by Lever.
    pub mOptionalInfo: i32,
    /// How many values: 1 reads `mResValue.value`, more read
    /// `mResValue.values`.
    pub mNumValues: i32,
    /// The value, or a pointer to the values.
    pub mResValue: ResValue,
}

/// URM's value union.
#[repr(C)]
#[derive(Clone, Copy)]
pub union ResValue {
    /// A single value.
    pub value: i32,
    /// `mNumValues` values.
    pub values: *mut i32,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Remember `message` for [`lever_urm_last_error`] and send it to syslog
/// (where URM logs its own errors).
fn report(message: String) {
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // SAFETY: both strings are NUL-terminated; the format takes one %s.
    unsafe {
        libc::syslog(
            libc::LOG_ERR,
            c"libUrmClient (lever): %s".as_ptr(),
            text.as_ptr(),
        )
    };
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Run one entry point: `Err` and panics become `fail` plus a message.
fn guard<T: Copy>(name: &str, fail: T, f: impl FnOnce() -> Result<T, Error>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            report(format!("{name}: {e}"));
            fail
        }
        Err(_) => {
            report(format!("{name}: internal error (panic)"));
            fail
        }
    }
}

fn invalid<T>(message: impl Into<String>) -> Result<T, Error> {
    Err(Error::Invalid(message.into()))
}

/// A handle for what the daemon made of a sent request: its own handle,
/// or for a refusal a handle that holds nothing (URM's contract).
fn handle_of(s: &mut Session, name: &str, sent: Sent<lever_client::Handle>) -> i64 {
    match sent {
        Sent::Done(h) => i64::from(h.get()),
        Sent::Refused(why) => {
            report(format!("{name}: lever daemon refused: {why}"));
            s.refused_handle()
        }
    }
}

/// 0 for a sent request, whatever the daemon made of it (URM's contract),
/// with a refusal reported.
fn zero_of(name: &str, sent: Sent<()>) -> i8 {
    if let Sent::Refused(why) = sent {
        report(format!("{name}: lever daemon refused: {why}"));
    }
    0
}

fn is_system() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Whether this process is URM's `urmCli`, whose requests URM gives to
/// its parent (so they outlive it).
fn is_urm_cli() -> bool {
    // Read once per process (a file read on every call would cost more
    // than the rest of the call's own work).
    static URM_CLI: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *URM_CLI.get_or_init(|| {
        std::fs::read_to_string("/proc/self/comm").is_ok_and(|c| c.trim_end() == "urmCli")
    })
}

/// A C string argument, `what` naming it in errors.
///
/// # Safety
/// `ptr` must be NULL or a NUL-terminated string.
unsafe fn text_arg<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Error> {
    if ptr.is_null() {
        return invalid(format!("{what} is NULL"));
    }
    // SAFETY: non-null, and the caller promises a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(ptr) };
    s.to_str()
        .or_else(|_| invalid(format!("{what} is not UTF-8")))
}

/// Read `n` `SysResource`s, checked as URM's client checks them.
///
/// # Safety
/// `list` must point to `n` readable `SysResource`s, each with
/// `mNumValues > 1` pointing `values` at that many `int32_t`s.
unsafe fn read_resources(list: *const SysResource, n: i32) -> Result<Vec<Resource>, Error> {
    if list.is_null() || n <= 0 {
        return invalid(format!("resource list is NULL or empty (numRes {n})"));
    }
    if n > MAX_RESOURCES {
        return invalid(format!(
            "numRes {n} exceeds URM's limit of {MAX_RESOURCES} resources per request"
        ));
    }
    // SAFETY: the caller promises n readable SysResources; n is 1..=20.
    let raw = unsafe { std::slice::from_raw_parts(list, n as usize) };
    let mut out = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        if r.mResCode == 0 || r.mResInfo < 0 || r.mOptionalInfo < 0 || r.mNumValues <= 0 {
            return invalid(format!(
                "resource {i}: mResCode 0x{:X}, mResInfo {}, mOptionalInfo {}, mNumValues {} (URM's client needs a code > 0, info >= 0, optional info >= 0, values > 0)",
                r.mResCode, r.mResInfo, r.mOptionalInfo, r.mNumValues
            ));
        }
        let values = if r.mNumValues == 1 {
            // SAFETY: one value is stored in the union's `value`.
            vec![unsafe { r.mResValue.value }]
        } else {
            // SAFETY: more than one value: the union holds a pointer.
            let p = unsafe { r.mResValue.values };
            if p.is_null() {
                return invalid(format!(
                    "resource {i}: mNumValues {} but values is NULL",
                    r.mNumValues
                ));
            }
            // SAFETY: the caller promises mNumValues readable ints there.
            unsafe { std::slice::from_raw_parts(p, r.mNumValues as usize) }.to_vec()
        };
        out.push(Resource {
            code: r.mResCode,
            info: r.mResInfo as u32,
            values,
        });
    }
    Ok(out)
}

/// `tuneResources`: tune `numRes` resources for `duration` ms (-1 =
/// until released). Returns a handle > 0, or -1 when the request could
/// not be sent.
///
/// # Safety
/// `resourceList` must point to `numRes` readable `SysResource`s.
#[no_mangle]
#[allow(non_snake_case)] // URM's names
pub unsafe extern "C" fn tuneResources(
    duration: i64,
    prop: i32,
    numRes: i32,
    resourceList: *mut SysResource,
) -> i64 {
    guard("tuneResources", -1, || {
        let Some(lease) = lease(duration) else {
            return invalid(format!(
                "duration {duration} ms (URM takes -1 or > 0; Lever at most 4294967295)"
            ));
        };
        if prop < 0 {
            return invalid(format!("properties {prop} is negative"));
        }
        // SAFETY: the caller's promise, passed on.
        let resources = unsafe { read_resources(resourceList, numRes) }?;
        let class = priority(prop, is_system());
        let detach = is_urm_cli();
        with_session(|s| {
            let Some(class) = class else {
                let why = format!("priority {} is not URM's HIGH (0) or LOW (1)", prop & 0xFF);
                return Ok(handle_of(s, "tuneResources", Sent::Refused(why)));
            };
            let sent = s.tune(lease, class, detach, &resources)?;
            Ok(handle_of(s, "tuneResources", sent))
        })
    })
}

/// `retuneResources`: give request `handle` a new duration. Returns 0 when
/// sent, -1 otherwise.
#[no_mangle]
pub extern "C" fn retuneResources(handle: i64, duration: i64) -> i8 {
    guard("retuneResources", -1, || {
        let Some(lease) = lease(duration).filter(|_| handle > 0) else {
            return invalid(format!("handle {handle}, duration {duration} ms"));
        };
        if handle > REFUSED_BASE {
            return Ok(0);
        }
        with_session(|s| s.retune(handle, lease)).map(|sent| zero_of("retuneResources", sent))
    })
}

/// `untuneResources`: release request `handle`. Returns 0 when sent, -1
/// otherwise.
#[no_mangle]
pub extern "C" fn untuneResources(handle: i64) -> i8 {
    untune("untuneResources", handle)
}

/// `untuneSignal`: release signal `handle`. Returns 0 when sent, -1
/// otherwise.
#[no_mangle]
pub extern "C" fn untuneSignal(handle: i64) -> i8 {
    untune("untuneSignal", handle)
}

fn untune(name: &str, handle: i64) -> i8 {
    guard(name, -1, || {
        if handle <= 0 {
            return invalid(format!("handle {handle} (handles are > 0)"));
        }
        with_session(|s| s.untune(handle)).map(|sent| zero_of(name, sent))
    })
}

/// `getProp`: URM property `prop` into `buffer` (NUL-terminated, cut to
/// `bufferSize - 1` bytes), or `defValue` when the daemon has no such
/// property. Returns 0, or -1 when the daemon could not be asked.
///
/// # Safety
/// `prop` and `defValue` must be NULL or NUL-terminated strings; `buffer`
/// must point to `bufferSize` writable bytes.
#[no_mangle]
#[allow(non_snake_case)] // URM's names
pub unsafe extern "C" fn getProp(
    prop: *const c_char,
    buffer: *mut c_char,
    bufferSize: usize,
    defValue: *const c_char,
) -> i8 {
    guard("getProp", -1, || {
        // SAFETY: the caller's promise, passed on.
        let name = unsafe { text_arg(prop, "prop") }?;
        if buffer.is_null() || bufferSize == 0 {
            return invalid(format!("buffer is NULL or bufferSize {bufferSize} is 0"));
        }
        let value = with_session(|s| s.property(name))?;
        let bytes: Vec<u8> = match value {
            Some(v) => v.into_bytes(),
            // SAFETY: the caller's promise (NULL gives an empty string).
            None if !defValue.is_null() => unsafe { CStr::from_ptr(defValue) }.to_bytes().to_vec(),
            None => Vec::new(),
        };
        let n = bytes.len().min(bufferSize - 1);
        // SAFETY: buffer has bufferSize writable bytes; n + 1 <= bufferSize,
        // copied from a separate allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.cast::<u8>(), n);
            *buffer.add(n) = 0;
        }
        Ok(0)
    })
}

/// Checks shared by `tuneSignal` and `relaySignal` (URM's client's): the
/// lease, and the argument list's count.
///
/// # Safety
/// `appName` and `scenario` must be NULL or NUL-terminated strings.
unsafe fn signal_args(
    duration: i64,
    properties: i32,
    app_name: *const c_char,
    scenario: *const c_char,
    num_args: i32,
    list: *const u32,
) -> Result<lever_client::SignalLease, Error> {
    if duration < -1 || num_args < 0 || (!list.is_null() && num_args == 0) || properties < 0 {
        return invalid(format!(
            "duration {duration} ms, numArgs {num_args}, properties {properties}"
        ));
    }
    // SAFETY: the caller's promise, passed on.
    unsafe { text_arg(app_name, "appName") }?;
    // SAFETY: as above.
    unsafe { text_arg(scenario, "scenario") }?;
    Ok(match duration {
        0 => lever_client::SignalLease::UseCaseDefault,
        -1 => lever_client::SignalLease::Given(lever_client::Lease::UntilReleased),
        d => match u32::try_from(d) {
            Ok(ms)
                if ms
                    != lever_client::SignalLease::Given(lever_client::Lease::UntilReleased)
                        .to_wire() =>
            {
                lever_client::SignalLease::Given(lever_client::Lease::from_ms(ms))
            }
            _ => return invalid(format!("duration {d} ms is beyond Lever's 32-bit ms")),
        },
    })
}

/// `tuneSignal`: trigger signal `sigId` (`Category << 16 | SigId`) of
/// type `sigType`. Returns a handle > 0, or -1 when not sent. The
/// argument list (URM's `"%d"` values) is not used: Lever's use cases
/// have fixed values.
///
/// # Safety
/// `appName` and `scenario` must be NULL or NUL-terminated strings.
#[no_mangle]
#[allow(non_snake_case, clippy::too_many_arguments)] // URM's signature
pub unsafe extern "C" fn tuneSignal(
    sigId: u32,
    sigType: u32,
    duration: i64,
    properties: i32,
    appName: *const c_char,
    scenario: *const c_char,
    numArgs: i32,
    list: *mut u32,
) -> i64 {
    guard("tuneSignal", -1, || {
        // SAFETY: the caller's promise, passed on.
        let lease = unsafe { signal_args(duration, properties, appName, scenario, numArgs, list) }?;
        let class = priority(properties, is_system());
        let detach = is_urm_cli();
        with_session(|s| {
            let refused = match class {
                None => Some(format!("priority {} is not URM's HIGH (0) or LOW (1)", properties & 0xFF)),
                Some(_) if sigType > 0xFF => Some(format!("sigType {sigType} is over 255 (Lever keeps SigType in the use case id's top byte)")),
                Some(_) => None,
            };
            if let Some(why) = refused {
                return Ok(handle_of(s, "tuneSignal", Sent::Refused(why)));
            }
            let id = sigType << 24 | (sigId & 0x00FF_FFFF);
            let sent = s.signal(id, lease, class.expect("checked above"), detach)?;
            Ok(handle_of(s, "tuneSignal", sent))
        })
    })
}

/// `relaySignal`: URM hands the signal to the extensions subscribed to
/// it; Lever has none, so this only checks the arguments and that the
/// daemon answers. Returns 0, or -1.
///
/// # Safety
/// `appName` and `scenario` must be NULL or NUL-terminated strings.
#[no_mangle]
#[allow(non_snake_case, clippy::too_many_arguments)] // URM's signature
pub unsafe extern "C" fn relaySignal(
    sigId: u32,
    sigType: u32,
    duration: i64,
    properties: i32,
    appName: *const c_char,
    scenario: *const c_char,
    numArgs: i32,
    list: *mut u32,
) -> i8 {
    let _ = (sigId, sigType);
    guard("relaySignal", -1, || {
        // SAFETY: the caller's promise, passed on.
        unsafe { signal_args(duration, properties, appName, scenario, numArgs, list) }?;
        with_session(|s| s.ping())?;
        Ok(0)
    })
}

/// The message of this thread's last refused or failed call ("" if none
/// yet): not part of URM's API, a Lever addition for debugging. Valid
/// until the next failing call on this thread.
#[no_mangle]
pub extern "C" fn lever_urm_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        // SAFETY: a valid NUL-terminated string owned by this thread.
        unsafe { CStr::from_ptr(lever_urm_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    fn no_daemon() {
        std::env::set_var("LEVER_SOCKET", "/nonexistent/lever-urm-capi-test.sock");
    }

    fn one(code: u32, value: i32) -> SysResource {
        SysResource {
            mResCode: code,
            mResInfo: 0,
            mOptionalInfo: 0,
            mNumValues: 1,
            mResValue: ResValue { value },
        }
    }

    #[test]
    fn sys_resource_has_urms_layout() {
        // URM's union holds an int32 or a pointer: 24 bytes on 64-bit
        // targets, 20 on 32-bit ones (armv7), the same offsets.
        let size = if cfg!(target_pointer_width = "64") {
            24
        } else {
            20
        };
        assert_eq!(std::mem::size_of::<SysResource>(), size);
        assert_eq!(std::mem::offset_of!(SysResource, mNumValues), 12);
        assert_eq!(std::mem::offset_of!(SysResource, mResValue), 16);
    }

    #[test]
    fn urms_client_checks_come_first() {
        no_daemon();
        let mut list = [one(0x00FF_0002, 5)];
        // SAFETY (all calls): list holds one SysResource; null is refused
        // before any read.
        assert_eq!(unsafe { tuneResources(0, 0, 1, list.as_mut_ptr()) }, -1);
        assert!(last_error().contains("duration 0 ms"), "{}", last_error());
        assert_eq!(unsafe { tuneResources(-2, 0, 1, list.as_mut_ptr()) }, -1);
        assert_eq!(unsafe { tuneResources(-1, 0, 0, std::ptr::null_mut()) }, -1);
        assert!(last_error().contains("NULL or empty"), "{}", last_error());
        assert_eq!(unsafe { tuneResources(-1, 0, 21, list.as_mut_ptr()) }, -1);
        assert!(last_error().contains("limit of 20"), "{}", last_error());
        let mut bad = [SysResource {
            mResInfo: -1,
            ..one(0xFFFF_FFFF, 0)
        }];
        assert_eq!(unsafe { tuneResources(-1, 0, 1, bad.as_mut_ptr()) }, -1);
        assert!(last_error().contains("mResInfo -1"), "{}", last_error());
        let mut null_values = [SysResource {
            mNumValues: 2,
            mResValue: ResValue {
                values: std::ptr::null_mut(),
            },
            ..one(1, 0)
        }];
        assert_eq!(
            unsafe { tuneResources(-1, 0, 1, null_values.as_mut_ptr()) },
            -1
        );
        assert!(last_error().contains("values is NULL"), "{}", last_error());
        assert_eq!(retuneResources(0, 10), -1);
        assert_eq!(retuneResources(5, 0), -1);
        assert_eq!(untuneResources(-4), -1);
        assert_eq!(untuneSignal(0), -1);
        // A refused request's handle: nothing to untune or retune.
        assert_eq!(untuneResources(REFUSED_BASE + 1), 0);
        assert_eq!(retuneResources(REFUSED_BASE + 1, 100), 0);
        let s = c"x";
        // SAFETY: valid strings; list NULL with numArgs 0.
        assert_eq!(
            unsafe { tuneSignal(1, 0, -2, 0, s.as_ptr(), s.as_ptr(), 0, std::ptr::null_mut()) },
            -1
        );
        let mut args = [1u32];
        // SAFETY: as above; a list with numArgs 0 is refused unread.
        assert_eq!(
            unsafe { relaySignal(1, 0, 0, 0, s.as_ptr(), s.as_ptr(), 0, args.as_mut_ptr()) },
            -1
        );
        // SAFETY: NULL names are refused.
        assert_eq!(
            unsafe {
                tuneSignal(
                    1,
                    0,
                    0,
                    0,
                    std::ptr::null(),
                    s.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                )
            },
            -1
        );
        assert!(last_error().contains("appName is NULL"), "{}", last_error());
        let mut buf = [0 as c_char; 4];
        // SAFETY: a zero size is refused before any write.
        assert_eq!(
            unsafe { getProp(s.as_ptr(), buf.as_mut_ptr(), 0, s.as_ptr()) },
            -1
        );
    }

    #[test]
    fn no_daemon_is_minus_one_with_the_socket_named() {
        no_daemon();
        let mut list = [one(0x00FF_0002, 5)];
        // SAFETY: list holds one SysResource.
        assert_eq!(unsafe { tuneResources(2000, 0, 1, list.as_mut_ptr()) }, -1);
        let e = last_error();
        assert!(
            e.contains("cannot connect") && e.contains("lever-urm-capi-test.sock"),
            "{e}"
        );
        let mut buf = [0 as c_char; 16];
        // SAFETY: valid strings, a 16-byte buffer.
        assert_eq!(
            unsafe { getProp(c"a.b".as_ptr(), buf.as_mut_ptr(), 16, c"na".as_ptr()) },
            -1
        );
    }
}
