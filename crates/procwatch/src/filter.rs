//! The classic BPF socket filter on the connector socket: the kernel runs
//! it on every process event before queueing it, and drops what Lever
//! does not read, so a fork, a thread's exit or a uid change anywhere on
//! the machine wakes nobody.
//!
//! The program reads the datagram from its first byte (the netlink
//! header; see [`crate::event`] for the layout):
//!
//! ```text
//! offset 16  cn_msg.id.idx   must be CN_IDX_PROC
//! offset 20  cn_msg.id.val   must be CN_VAL_PROC
//! offset 36  proc_event.what PROC_EVENT_EXEC: keep
//!                            PROC_EVENT_EXIT (Interest::ExecAndExit only):
//! offset 52    exit.process_pid  } keep when equal: the process ended,
//! offset 56    exit.process_tgid } not one of its threads
//!                            anything else: drop
//! ```
//!
//! Netlink fields are in the host's byte order, but a BPF word load
//! (`BPF_LD | BPF_W | BPF_ABS`) reads its four bytes big-endian. Each
//! constant is therefore what a big-endian load of the field's native
//! bytes gives: [`be_load`]. Comparing two loaded fields with each other
//! (pid with tgid) needs no conversion.
//!
//! The kernel sends one connector message per datagram, so looking at the
//! first one is enough. A datagram too short for a load is dropped (a
//! load past the end ends a classic BPF program with 0).

use crate::event::{
    CN_IDX_PROC, CN_MSG_LEN, CN_VAL_PROC, NLMSG_HDRLEN, PROC_EVENT_EXEC, PROC_EVENT_EXIT,
};
use lever_syscalls::BpfInstruction;

/// Which process events reach the socket; the kernel drops the others
/// before queueing them ([`crate::ProcConnector::open_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interest {
    /// `PROC_EVENT_EXEC` only: what the daemon needs (it learns of an
    /// app's exit from its pidfd).
    Exec,
    /// Exec, and the exit of a whole process (the exit event of its
    /// thread-group leader, `process_pid == process_tgid`); the exits of
    /// other threads are dropped.
    ExecAndExit,
    /// No filter: fork, exec, exit, uid, gid, sid, comm, ptrace and
    /// coredump events of every thread on the machine.
    All,
}

// Opcodes (include/uapi/linux/bpf_common.h, filter.h).
/// `BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20)`: A = the big-endian u32 at
/// offset k.
const LD_W_ABS: u16 = 0x20;
/// `BPF_JMP (5) | BPF_JEQ (0x10) | BPF_K (0)`: skip jt if A == k, else jf.
const JEQ_K: u16 = 0x15;
/// `BPF_JMP (5) | BPF_JEQ (0x10) | BPF_X (8)`: skip jt if A == X, else jf.
const JEQ_X: u16 = 0x1d;
/// `BPF_MISC (7) | BPF_TAX (0)`: X = A.
const TAX: u16 = 0x07;
/// `BPF_RET (6) | BPF_K (0)`: end, keeping k bytes of the packet (0: drop
/// it).
const RET_K: u16 = 0x06;

const ID_IDX_AT: u32 = NLMSG_HDRLEN as u32;
const ID_VAL_AT: u32 = ID_IDX_AT + 4;
const WHAT_AT: u32 = (NLMSG_HDRLEN + CN_MSG_LEN) as u32;
/// `what`, `cpu`, `timestamp_ns`, then the event's data.
const DATA_AT: u32 = WHAT_AT + 16;
const EXIT_PID_AT: u32 = DATA_AT;
const EXIT_TGID_AT: u32 = DATA_AT + 4;

/// What a big-endian BPF word load gives for a field whose value is `v`
/// stored in the byte order `to_bytes` writes (the host's:
/// `u32::to_ne_bytes`).
pub(crate) fn be_load(v: u32, to_bytes: fn(u32) -> [u8; 4]) -> u32 {
    u32::from_be_bytes(to_bytes(v))
}

/// Where a jump goes.
#[derive(Clone, Copy)]
enum To {
    Next,
    Accept,
    Drop,
}

/// The filter for `interest` on this host; `None` for [`Interest::All`].
pub(crate) fn program(interest: Interest) -> Option<Vec<BpfInstruction>> {
    program_in(interest, u32::to_ne_bytes)
}

/// The filter for fields stored in the byte order `to_bytes` writes (a
/// parameter so that tests check both orders on any host).
pub(crate) fn program_in(
    interest: Interest,
    to_bytes: fn(u32) -> [u8; 4],
) -> Option<Vec<BpfInstruction>> {
    let k = |v| be_load(v, to_bytes);
    // (code, k, jump if true, jump if false)
    let mut body: Vec<(u16, u32, To, To)> = vec![
        (LD_W_ABS, ID_IDX_AT, To::Next, To::Next),
        (JEQ_K, k(CN_IDX_PROC), To::Next, To::Drop),
        (LD_W_ABS, ID_VAL_AT, To::Next, To::Next),
        (JEQ_K, k(CN_VAL_PROC), To::Next, To::Drop),
        (LD_W_ABS, WHAT_AT, To::Next, To::Next),
    ];
    match interest {
        Interest::All => return None,
        Interest::Exec => body.push((JEQ_K, k(PROC_EVENT_EXEC), To::Accept, To::Drop)),
        Interest::ExecAndExit => body.extend([
            (JEQ_K, k(PROC_EVENT_EXEC), To::Accept, To::Next),
            (JEQ_K, k(PROC_EVENT_EXIT), To::Next, To::Drop),
            (LD_W_ABS, EXIT_TGID_AT, To::Next, To::Next),
            (TAX, 0, To::Next, To::Next),
            (LD_W_ABS, EXIT_PID_AT, To::Next, To::Next),
            (JEQ_X, 0, To::Accept, To::Drop),
        ]),
    }
    // The two returns follow the body: accept, then drop.
    let accept = body.len();
    let drop = accept + 1;
    let mut prog: Vec<BpfInstruction> = body
        .iter()
        .enumerate()
        .map(|(i, &(code, k, t, f))| {
            let off = |to: To| -> u8 {
                let target = match to {
                    To::Next => i + 1,
                    To::Accept => accept,
                    To::Drop => drop,
                };
                (target - i - 1) as u8
            };
            BpfInstruction {
                code,
                jt: off(t),
                jf: off(f),
                k,
            }
        })
        .collect();
    prog.push(BpfInstruction {
        code: RET_K,
        jt: 0,
        jf: 0,
        k: u32::MAX,
    });
    prog.push(BpfInstruction {
        code: RET_K,
        jt: 0,
        jf: 0,
        k: 0,
    });
    Some(prog)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::PROC_EVENT_FORK;

    /// A classic BPF interpreter for the instructions above, with the
    /// kernel's semantics: word loads are big-endian, a load past the end
    /// of the packet returns 0.
    fn run(prog: &[BpfInstruction], packet: &[u8]) -> u32 {
        let (mut a, mut x, mut pc) = (0u32, 0u32, 0usize);
        loop {
            let i = prog[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => {
                    let at = i.k as usize;
                    match packet.get(at..at + 4) {
                        Some(b) => a = u32::from_be_bytes(b.try_into().unwrap()),
                        None => return 0,
                    }
                }
                TAX => x = a,
                JEQ_K | JEQ_X => {
                    let than = if i.code == JEQ_K { i.k } else { x };
                    pc += usize::from(if a == than { i.jt } else { i.jf });
                }
                RET_K => return i.k,
                other => panic!("opcode {other:#x} not expected"),
            }
        }
    }

    /// A process event datagram with its u32 fields in the byte order
    /// `to_bytes` writes.
    fn datagram(to_bytes: fn(u32) -> [u8; 4], idx: u32, what: u32, data: &[u32]) -> Vec<u8> {
        let mut words = vec![0, 0, 0, 0]; // nlmsghdr: len, type/flags, seq, pid
        words.extend([idx, CN_VAL_PROC, 0, 0, 0]); // cn_msg
        words.extend([what, 1, 0, 0]); // what, cpu, timestamp
        words.extend(data);
        words[0] = (words.len() * 4) as u32;
        words.iter().flat_map(|&w| to_bytes(w)).collect()
    }

    const PROC_EVENT_NONE: u32 = 0;
    const PROC_EVENT_UID: u32 = 0x4;
    const PROC_EVENT_COMM: u32 = 0x200;
    const PROC_EVENT_COREDUMP: u32 = 0x4000_0000;

    /// Every event kind against each interest, in both byte orders.
    #[test]
    fn the_filter_keeps_exec_and_leader_exits_in_either_byte_order() {
        for to_bytes in [u32::to_le_bytes, u32::to_be_bytes] {
            let exec_only = program_in(Interest::Exec, to_bytes).unwrap();
            let with_exit = program_in(Interest::ExecAndExit, to_bytes).unwrap();
            let d = |what, data: &[u32]| datagram(to_bytes, CN_IDX_PROC, what, data);
            let exec = d(PROC_EVENT_EXEC, &[4242, 4242]);
            // pid 70000 = 0x00011170: bytes differ in each position.
            let leader_exit = d(PROC_EVENT_EXIT, &[70000, 70000, 0, 17, 1, 1]);
            let thread_exit = d(PROC_EVENT_EXIT, &[70001, 70000, 0, 17, 1, 1]);
            let fork = d(PROC_EVENT_FORK, &[1, 1, 50, 50]);
            let others = [
                d(PROC_EVENT_NONE, &[0]), // the subscription's ack
                d(PROC_EVENT_UID, &[5, 5, 0, 0]),
                d(PROC_EVENT_COMM, &[5, 5, 0, 0, 0, 0]),
                d(PROC_EVENT_COREDUMP, &[5, 5, 1, 1]),
                d(PROC_EVENT_EXEC.swap_bytes(), &[5, 5]),
                d(PROC_EVENT_EXIT.swap_bytes(), &[5, 5, 0, 0, 1, 1]),
            ];
            assert_eq!(run(&exec_only, &exec), u32::MAX);
            assert_eq!(run(&with_exit, &exec), u32::MAX);
            assert_eq!(run(&exec_only, &leader_exit), 0);
            assert_eq!(run(&with_exit, &leader_exit), u32::MAX);
            for p in [&exec_only, &with_exit] {
                assert_eq!(run(p, &thread_exit), 0);
                assert_eq!(run(p, &fork), 0);
                for o in &others {
                    assert_eq!(run(p, o), 0, "{o:?}");
                }
                // Another connector's message, and datagrams cut short.
                let foreign = datagram(to_bytes, 9, PROC_EVENT_EXEC, &[1, 1]);
                assert_eq!(run(p, &foreign), 0);
                assert_eq!(run(p, &exec[..WHAT_AT as usize + 2]), 0);
                assert_eq!(run(p, &[]), 0);
            }
            assert_eq!(run(&with_exit, &leader_exit[..EXIT_TGID_AT as usize]), 0);
        }
    }

    #[test]
    fn the_host_program_reads_the_fields_parse_reads() {
        // The native program against the native datagrams the parser's
        // own tests use: what one accepts the other decodes.
        let p = program(Interest::ExecAndExit).unwrap();
        let exec = crate::event::tests::datagram(PROC_EVENT_EXEC, &[7, 7]);
        let exit = crate::event::tests::datagram(PROC_EVENT_EXIT, &[7, 7, 0, 17, 1, 1]);
        let fork = crate::event::tests::datagram(PROC_EVENT_FORK, &[1, 1, 7, 7]);
        assert_eq!(run(&p, &exec), u32::MAX);
        assert_eq!(run(&p, &exit), u32::MAX);
        assert_eq!(run(&p, &fork), 0);
        assert_eq!(crate::event::parse(&exit).len(), 1);
        assert!(program(Interest::All).is_none());
    }

    #[test]
    fn constants_are_big_endian_loads_of_native_fields() {
        assert_eq!(be_load(2, u32::to_be_bytes), 2);
        assert_eq!(be_load(2, u32::to_le_bytes), 0x0200_0000);
        assert_eq!(
            be_load(PROC_EVENT_EXIT, u32::to_le_bytes),
            0x0000_0080,
            "0x80000000 stored little-endian"
        );
        // Jumps land inside the program and it ends with the two returns.
        for i in [Interest::Exec, Interest::ExecAndExit] {
            let p = program(i).unwrap();
            for (at, ins) in p.iter().enumerate().filter(|(_, i)| i.code != RET_K) {
                assert!(at + 1 + usize::from(ins.jt.max(ins.jf)) < p.len());
            }
            assert_eq!(p[p.len() - 2].k, u32::MAX);
            assert_eq!(p[p.len() - 1].k, 0);
        }
    }
}
