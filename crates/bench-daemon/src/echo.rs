//! The machine's floor: one thread, one epoll set, every message sent back
//! as it came, nothing else — what a daemon costs with no work at all.

use rustix::event::epoll;
use rustix::fd::AsFd;
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};

/// Serve `listener` until `stop` becomes readable (the bench closes the
/// echo process's stdin to stop it).
pub fn serve(listener: UnixListener, stop: impl AsFd) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let ep = epoll::create(epoll::CreateFlags::CLOEXEC)?;
    let ev = epoll::EventFlags::IN;
    epoll::add(&ep, &listener, epoll::EventData::new_u64(0), ev)?;
    epoll::add(&ep, &stop, epoll::EventData::new_u64(1), ev)?;
    let mut conns: Vec<Option<UnixStream>> = Vec::new();
    let mut events = Vec::with_capacity(256);
    let mut buf = [0u8; 4096];
    loop {
        events.clear();
        match epoll::wait(&ep, rustix::buffer::spare_capacity(&mut events), None) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        for e in events.iter() {
            match e.data.u64() {
                0 => {
                    while let Ok((c, _)) = listener.accept() {
                        c.set_nonblocking(true)?;
                        let key = conns.len() as u64 + 2;
                        epoll::add(&ep, &c, epoll::EventData::new_u64(key), ev)?;
                        conns.push(Some(c));
                    }
                }
                1 => return Ok(()),
                k => {
                    let slot = &mut conns[(k - 2) as usize];
                    let Some(c) = slot else { continue };
                    match c.read(&mut buf) {
                        Ok(0) => *slot = None,
                        Ok(n) => {
                            if c.write_all(&buf[..n]).is_err() {
                                *slot = None;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(_) => *slot = None,
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_until_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("echo.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let (stop_r, stop_w) = std::os::unix::net::UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || serve(listener, stop_r));
        let mut c = UnixStream::connect(&path).unwrap();
        for msg in [&b"ping"[..], &[7u8; 32]] {
            c.write_all(msg).unwrap();
            let mut back = vec![0u8; msg.len()];
            c.read_exact(&mut back).unwrap();
            assert_eq!(back, msg);
        }
        drop(stop_w); // EOF on the stop socket: the loop returns
        server.join().unwrap().unwrap();
    }
}
