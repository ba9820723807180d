//! Golden tests over every real device tree of the shared folder
//! (`../shared/third-party/dtb`, Debian's arm64 kernel 6.1): the OPP
//! tables, bwmon tables and carveouts are compared with
//! `tests/golden/NAME.txt` (`LEVER_BLESS_DT=1` rewrites them), and
//! cross-checked value by value against `dtc -I dtb -O dts` of the same
//! file read by a separate parser (`common::parse_dts`): the whole tree
//! (every node, every property's bytes), then every value the reports
//! show. Without dtc or the shared folder the test says why it skips; under
//! CI=true it fails.

mod common;

use common::{cells, dts_prop, DtsTree};
use lever_dt::{carveouts, dvfs, CarveoutReport, DvfsReport, Tree, Widths};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

fn summary(d: &DvfsReport, c: &CarveoutReport) -> String {
    let mut s = String::new();
    let w = d.widths;
    writeln!(
        s,
        "widths ddr={} llcc={} l3={}",
        w.ddr_bytes, w.llcc_bytes, w.l3_bytes
    )
    .unwrap();
    let rows = |s: &mut String, rows: &[lever_dt::opp::OppRow]| {
        for r in rows {
            write!(s, "  {}", r.node.rsplit('/').next().unwrap()).unwrap();
            if let Some(hz) = r.freq_hz {
                write!(s, " {hz} Hz").unwrap();
            }
            for v in &r.votes {
                write!(
                    s,
                    " | {} peak {:?} avg {:?} -> {:?} kHz",
                    v.path, v.peak_kbps, v.avg_kbps, v.implied_khz
                )
                .unwrap();
            }
            if r.turbo {
                write!(s, " turbo").unwrap();
            }
            if !r.required_opps.is_empty() {
                write!(s, " requires {}", r.required_opps.join(",")).unwrap();
            }
            writeln!(s).unwrap();
        }
    };
    for cl in &d.clusters {
        let cpus: Vec<String> = cl.cpus.iter().map(|c| c.cpu.to_string()).collect();
        writeln!(
            s,
            "cluster {} cpus {} shared={}",
            cl.table,
            cpus.join(","),
            cl.opp_shared
        )
        .unwrap();
        for p in &cl.paths {
            writeln!(
                s,
                "  path {} {:?} {} -> {} w={:?}",
                p.name, p.kind, p.source, p.destination, p.width_bytes
            )
            .unwrap();
        }
        rows(&mut s, &cl.rows);
    }
    writeln!(s, "cpus without table: {:?}", d.cpus_without_table).unwrap();
    for b in &d.bwmons {
        writeln!(
            s,
            "bwmon {} {:?} enabled={} table {}",
            b.node, b.compatible, b.enabled, b.table
        )
        .unwrap();
        for p in &b.paths {
            writeln!(
                s,
                "  path {} {:?} {} -> {} w={:?}",
                p.name, p.kind, p.source, p.destination, p.width_bytes
            )
            .unwrap();
        }
        rows(&mut s, &b.rows);
    }
    writeln!(s, "memory {:?} known={}", c.memory, c.memory_known).unwrap();
    writeln!(s, "memreserve {:?}", c.mem_reserve).unwrap();
    for r in &c.regions {
        let users: Vec<&str> = r.users.iter().map(|u| u.node.as_str()).collect();
        writeln!(
            s,
            "region {} labels={:?} ranges={} dynamic={:?} alloc={:?} no_map={} reusable={} enabled={} compatible={:?} outside={} users={:?}",
            r.node,
            r.labels,
            r.ranges.iter().map(|x| format!("{:#x}+{:#x}", x.base, x.size_bytes)).collect::<Vec<_>>().join(" "),
            r.dynamic_size_bytes,
            r.alloc_ranges,
            r.no_map,
            r.reusable,
            r.enabled,
            r.compatible,
            r.outside_memory,
            users
        )
        .unwrap();
    }
    writeln!(s, "totals {:?}", c.totals).unwrap();
    for o in &c.overlaps {
        writeln!(
            s,
            "overlap {} {} {:#x}+{:#x}",
            o.first, o.second, o.shared.base, o.shared.size_bytes
        )
        .unwrap();
    }
    s
}

/// Every node and property of our tree equals dtc's, both ways.
fn check_whole_tree(name: &str, tree: &Tree, dts: &DtsTree) {
    let mut ours = 0;
    for (_, n) in tree.nodes() {
        ours += 1;
        let theirs = dts
            .get(&n.path)
            .unwrap_or_else(|| panic!("{name}: node {} not in dtc's output", n.path));
        let mine: Vec<(String, Vec<u8>)> = n
            .properties
            .iter()
            .map(|p| (p.name.clone(), p.value.clone()))
            .collect();
        assert_eq!(
            &mine, theirs,
            "{name}: properties of {} differ from dtc's",
            n.path
        );
    }
    assert_eq!(
        ours,
        dts.len(),
        "{name}: dtc prints {} nodes, we read {ours}",
        dts.len()
    );
}

fn phandles(dts: &DtsTree) -> HashMap<u32, String> {
    let mut m = HashMap::new();
    for (path, props) in dts {
        for (n, v) in props {
            if n == "phandle" {
                m.insert(cells(v)[0], path.clone());
            }
        }
    }
    m
}

fn join(c: &[u32]) -> u64 {
    c.iter().fold(0, |a, x| (a << 32) | u64::from(*x))
}

/// Every value the reports show, against dtc's text.
fn check_reports(name: &str, d: &DvfsReport, c: &CarveoutReport, dts: &DtsTree) {
    let ph = phandles(dts);
    // Every CPU with an OPP table is in the cluster of that table.
    let cpu_paths: Vec<&String> = dts
        .keys()
        .filter(|p| p.starts_with("/cpus/cpu@") && p.matches('/').count() == 2)
        .collect();
    for p in cpu_paths {
        let Some(v) = dts_prop(dts, p, "operating-points-v2") else {
            assert!(
                d.cpus_without_table.contains(p)
                    || dts_prop(dts, p, "device_type") != Some(b"cpu\0"),
                "{name}: {p}"
            );
            continue;
        };
        let table = &ph[&cells(v)[0]];
        let cl = d
            .clusters
            .iter()
            .find(|cl| &cl.table == table)
            .unwrap_or_else(|| panic!("{name}: no cluster for {table}"));
        assert!(
            cl.cpus.iter().any(|c| &c.node == p),
            "{name}: {p} not in cluster {table}"
        );
    }
    let tables = d
        .clusters
        .iter()
        .map(|c| (&c.table, &c.rows))
        .chain(d.bwmons.iter().map(|b| (&b.table, &b.rows)));
    let mut rows_checked = 0;
    for (table, rows) in tables {
        // Every enabled OPP child of the table is a row, in order.
        let children: Vec<&String> = dts
            .keys()
            .filter(|k| {
                k.starts_with(&format!("{table}/"))
                    && k.matches('/').count() == table.matches('/').count() + 1
            })
            .collect();
        assert_eq!(children.len(), rows.len(), "{name}: rows of {table}");
        for r in rows {
            let peak = dts_prop(dts, &r.node, "opp-peak-kBps").map(cells);
            let got: Option<Vec<u32>> = if peak.is_some() {
                Some(r.votes.iter().map(|v| v.peak_kbps.unwrap()).collect())
            } else {
                None
            };
            assert_eq!(got, peak, "{name}: opp-peak-kBps of {}", r.node);
            let avg = dts_prop(dts, &r.node, "opp-avg-kBps").map(cells);
            if let Some(avg) = avg {
                let got: Vec<u32> = r.votes.iter().map(|v| v.avg_kbps.unwrap()).collect();
                assert_eq!(got, avg, "{name}: opp-avg-kBps of {}", r.node);
            }
            let hz = dts_prop(dts, &r.node, "opp-hz").map(|v| join(&cells(v)[..2]));
            assert_eq!(r.freq_hz, hz, "{name}: opp-hz of {}", r.node);
            assert_eq!(
                r.turbo,
                dts_prop(dts, &r.node, "turbo-mode").is_some(),
                "{name}: {}",
                r.node
            );
            rows_checked += 1;
        }
    }
    // Implied frequencies: vote / w exactly.
    for cl in &d.clusters {
        for r in &cl.rows {
            for (v, p) in r.votes.iter().zip(&cl.paths) {
                assert_eq!(
                    v.implied_khz,
                    p.width_bytes
                        .map(|w| u64::from(v.peak_kbps.unwrap()) / u64::from(w))
                );
            }
        }
    }
    // Carveouts: every /reserved-memory child, its reg, flags, users.
    let rm_children: Vec<&String> = dts
        .keys()
        .filter(|k| k.starts_with("/reserved-memory/") && k.matches('/').count() == 2)
        .collect();
    assert_eq!(rm_children.len(), c.regions.len(), "{name}: regions");
    let rm_cells = |p: &str| {
        dts_prop(dts, "/reserved-memory", p)
            .map(|v| cells(v)[0])
            .unwrap()
    };
    let (a, s) = (
        rm_cells("#address-cells") as usize,
        rm_cells("#size-cells") as usize,
    );
    for r in &c.regions {
        let reg: Vec<(u64, u64)> = dts_prop(dts, &r.node, "reg")
            .map(|v| {
                cells(v)
                    .chunks(a + s)
                    .map(|e| (join(&e[..a]), join(&e[a..])))
                    .collect()
            })
            .unwrap_or_default();
        let got: Vec<(u64, u64)> = r.ranges.iter().map(|x| (x.base, x.size_bytes)).collect();
        assert_eq!(got, reg, "{name}: reg of {}", r.node);
        assert_eq!(
            r.no_map,
            dts_prop(dts, &r.node, "no-map").is_some(),
            "{name}: {}",
            r.node
        );
        assert_eq!(
            r.reusable,
            dts_prop(dts, &r.node, "reusable").is_some(),
            "{name}: {}",
            r.node
        );
        let my_ph = dts_prop(dts, &r.node, "phandle").map(|v| cells(v)[0]);
        let mut users: Vec<&String> = dts
            .iter()
            .filter(|(_, props)| {
                props.iter().any(|(n, v)| {
                    n == "memory-region" && my_ph.is_some_and(|p| cells(v).contains(&p))
                })
            })
            .map(|(k, _)| k)
            .collect();
        users.sort();
        let mut got: Vec<&String> = r.users.iter().map(|u| &u.node).collect();
        got.sort();
        assert_eq!(got, users, "{name}: users of {}", r.node);
    }
    let no_map: u64 = c
        .regions
        .iter()
        .filter(|r| r.enabled && r.no_map)
        .map(|r| r.size_bytes())
        .sum();
    assert_eq!(c.totals.no_map_bytes, no_map, "{name}: no-map total");
    println!(
        "{name}: {} clusters, {} bwmons, {rows_checked} OPP rows, {} regions checked against dtc",
        d.clusters.len(),
        d.bwmons.len(),
        c.regions.len()
    );
}

#[test]
fn every_shared_device_tree_against_golden_and_dtc() {
    let dtbs = match common::shared_dtbs() {
        Ok(v) => v,
        Err(why) => return common::skip("golden", &why),
    };
    let dtc = common::have_dtc();
    if !dtc {
        common::skip(
            "golden (dtc cross-check)",
            "dtc is not installed (apt-get install device-tree-compiler)",
        );
    }
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var("LEVER_BLESS_DT").as_deref() == Ok("1");
    for path in dtbs {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let tree = lever_dt::source::read_dtb(&path).unwrap();
        let widths = Widths::for_soc(&tree.strings(tree.root(), "compatible"));
        let d = dvfs(&tree, widths).unwrap_or_else(|e| panic!("{name}: {e}"));
        let c = carveouts(&tree).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = summary(&d, &c);
        let golden = golden_dir.join(format!("{name}.txt"));
        if bless {
            std::fs::write(&golden, &text).unwrap();
        } else {
            let want = std::fs::read_to_string(&golden).unwrap_or_else(|e| {
                panic!("{}: {e} (LEVER_BLESS_DT=1 writes it)", golden.display())
            });
            assert!(
                want == text,
                "{name}: differs from {} (LEVER_BLESS_DT=1 rewrites it):\n{text}",
                golden.display()
            );
        }
        if dtc {
            let dts = common::parse_dts(&common::dtc_decompile(&path));
            check_whole_tree(&name, &tree, &dts);
            check_reports(&name, &d, &c, &dts);
        }
    }
}
