//! The Perfetto export decoded back with a minimal protobuf reader (wire
//! types 0 and 2 are all it writes), against the raw lines of a real
//! `-e sched -e irq` excerpt.

use lever_trace_analysis::export::perfetto::export_perfetto;

/// (field, value) of one message: varints as numbers, length-delimited
/// fields as bytes.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Int(u64),
    Bytes(Vec<u8>),
}

fn varint(b: &[u8], i: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let x = b[*i];
        *i += 1;
        v |= ((x & 0x7f) as u64) << shift;
        if x < 0x80 {
            return v;
        }
        shift += 7;
    }
}

fn fields(b: &[u8]) -> Vec<(u64, Val)> {
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let tag = varint(b, &mut i);
        let v = match tag & 7 {
            0 => Val::Int(varint(b, &mut i)),
            2 => {
                let n = varint(b, &mut i) as usize;
                i += n;
                Val::Bytes(b[i - n..i].to_vec())
            }
            w => panic!("wire type {w} at {i}"),
        };
        out.push((tag >> 3, v));
    }
    out
}

fn bytes(v: &Val) -> &[u8] {
    match v {
        Val::Bytes(b) => b,
        Val::Int(_) => panic!("not length-delimited"),
    }
}

fn int(v: &Val) -> u64 {
    match v {
        Val::Int(n) => *n,
        Val::Bytes(_) => panic!("not a varint"),
    }
}

/// Every (cpu, FtraceEvent fields) in file order.
fn events(file: &[u8]) -> Vec<(u64, Vec<(u64, Val)>)> {
    let mut out = Vec::new();
    for (f, packet) in fields(file) {
        assert_eq!(f, 1, "Trace.packet");
        let packet = fields(bytes(&packet));
        assert_eq!(packet.len(), 1);
        assert_eq!(packet[0].0, 1, "TracePacket.ftrace_events");
        let bundle = fields(bytes(&packet[0].1));
        assert_eq!(bundle[0].0, 1, "FtraceEventBundle.cpu first");
        let cpu = int(&bundle[0].1);
        for (f, ev) in &bundle[1..] {
            assert_eq!(*f, 2, "FtraceEventBundle.event");
            out.push((cpu, fields(bytes(ev))));
        }
    }
    out
}

fn fixture() -> Vec<u8> {
    let p = lever_testkit::fixture_path(env!("CARGO_MANIFEST_DIR"), "irq_critical_path.txt");
    std::fs::read(p).unwrap()
}

#[test]
fn perfetto_ftrace_bundles_carry_the_typed_events() {
    let text = fixture();
    let mut out = Vec::new();
    let (written, left_out, sum) =
        export_perfetto(lever_trace::Text(&text[..]), &mut out, |_| {}).unwrap();
    assert_eq!(written + left_out, sum.events);
    let evs = events(&out);
    assert_eq!(evs.len() as u64, written);
    // Per CPU in time order; each has a timestamp, a pid and one payload.
    let count = |field: u64| {
        evs.iter()
            .filter(|(_, e)| e.len() == 3 && e[2].0 == field)
            .count()
    };
    let lines = |name: &str| {
        String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| l.contains(&format!(" {name}: ")))
            .count()
    };
    assert_eq!(count(4), lines("sched_switch"));
    assert_eq!(count(20), lines("sched_waking"));
    assert_eq!(count(17), lines("sched_wakeup"));
    assert_eq!(count(36), lines("irq_handler_entry"));
    assert_eq!(count(24), lines("softirq_entry"));
    for cpu in [0, 1] {
        let ts: Vec<u64> = evs
            .iter()
            .filter(|e| e.0 == cpu)
            .map(|e| int(&e.1[0].1))
            .collect();
        assert!(ts.windows(2).all(|w| w[0] <= w[1]));
    }
    //  sched-pipe-8756 [001] d..2. 18737.218297: sched_switch: prev_comm=perf
    //  prev_pid=8756 prev_prio=120 prev_state=R+ ==> next_comm=sh
    //  next_pid=8755 next_prio=120
    let (cpu, sw) = evs
        .iter()
        .find(|(_, e)| int(&e[0].1) == 18_737_218_297_000)
        .unwrap();
    assert_eq!(*cpu, 1);
    assert_eq!((sw[1].0, int(&sw[1].1)), (2, 8756));
    assert_eq!(sw[2].0, 4);
    let s = fields(bytes(&sw[2].1));
    let want = [
        (1, Val::Bytes(b"perf".to_vec())),
        (2, Val::Int(8756)),
        (3, Val::Int(120)),
        (4, Val::Int(256)), // R+: preempted
        (5, Val::Bytes(b"sh".to_vec())),
        (6, Val::Int(8755)),
        (7, Val::Int(120)),
    ];
    assert_eq!(s, want);
    //  tokio-runtime-w-17487 [001] d.h.. 18737.218138: irq_handler_entry:
    //  irq=36 name=virtio1-req.0
    let (_, irq) = evs
        .iter()
        .find(|(_, e)| int(&e[0].1) == 18_737_218_138_000)
        .unwrap();
    assert_eq!(irq[2].0, 36);
    let i = fields(bytes(&irq[2].1));
    assert_eq!(
        i,
        [
            (1, Val::Int(36)),
            (2, Val::Bytes(b"virtio1-req.0".to_vec()))
        ]
    );
}
