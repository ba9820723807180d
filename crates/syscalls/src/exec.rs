//! Where a program would be found, looked up as `execvp` does, before it
//! is started.
//!
//! `std::process::Command::spawn` reports a program that cannot be
//! executed as the spawn's error, through a close-on-exec pipe from the
//! child. Under qemu-user the failed `execve` happens inside the emulated
//! child, after that pipe was closed, so the spawn succeeds and the child
//! exits 127 with nothing said. Looking the program up first gives the
//! same answer a shell gives, with the same errno, everywhere.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The search path `execvp` uses when `PATH` is unset (glibc's default).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// The file `program` names, as `execvp` would run it: the path itself
/// when it contains a `/`, else the first executable regular file of
/// that name in `PATH` (an empty entry is the current directory).
///
/// Errors carry the errno the `execve` would have given: `ENOENT` (shown
/// as "No such file or directory") where nothing of that name exists,
/// `EACCES` ("Permission denied") where something does but cannot be
/// executed (no execute permission, a directory, not a regular file).
///
/// ```
/// let sh = lever_syscalls::find_program("sh".as_ref()).unwrap();
/// assert!(sh.is_absolute());
/// let err = lever_syscalls::find_program("/no/such/program".as_ref()).unwrap_err();
/// assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
/// ```
pub fn find_program(program: &OsStr) -> io::Result<PathBuf> {
    if program.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    if program.as_bytes().contains(&b'/') {
        let path = Path::new(program);
        return executable(path).map(|()| path.to_path_buf());
    }
    let search = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    let mut denied = None;
    for dir in std::env::split_paths(&search) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(program);
        match executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => denied = Some(e),
            Err(_) => {}
        }
    }
    Err(denied.unwrap_or_else(|| io::Error::from_raw_os_error(libc::ENOENT)))
}

/// Whether `path` could be exec'd: a regular file the caller may execute.
fn executable(path: &Path) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::from_raw_os_error(libc::EACCES));
    }
    // access(2) answers for the real uid with the file's mode and ACLs;
    // for root it still needs one execute bit, which it checks too.
    rustix::fs::access(path, rustix::fs::Access::EXEC_OK)
        .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))?;
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(io::Error::from_raw_os_error(libc::EACCES));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn errno(r: io::Result<PathBuf>) -> Option<i32> {
        r.unwrap_err().raw_os_error()
    }

    #[test]
    fn paths_are_checked_as_execve_would() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script");
        fs::write(&script, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(errno(find_program(script.as_os_str())), Some(libc::EACCES));
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_program(script.as_os_str()).unwrap(), script);
        assert_eq!(
            errno(find_program(dir.path().as_os_str())),
            Some(libc::EACCES)
        );
        let missing = dir.path().join("missing");
        assert_eq!(errno(find_program(missing.as_os_str())), Some(libc::ENOENT));
        assert_eq!(errno(find_program("".as_ref())), Some(libc::ENOENT));
    }

    #[test]
    fn names_are_searched_in_path() {
        let sh = find_program("sh".as_ref()).unwrap();
        assert!(sh.ends_with("sh") && sh.is_absolute(), "{sh:?}");
        let missing = find_program("lever-no-such-command".as_ref());
        assert_eq!(errno(missing), Some(libc::ENOENT));
    }
}
