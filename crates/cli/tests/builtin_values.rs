//! Issue 27 item 5: every value a built-in use case sets does what its
//! description says on the board it is for. A use case is a boost: each
//! floor it sets (a `max` resource: a minimum frequency, the system-wide
//! uclamp limit) must be above the value the simulated board boots with —
//! equal changes nothing (a GPU floor at the GPU's lowest step), and below
//! lowers a limit for every task (`sched_util_clamp_min` 1024 -> 512) —
//! unless it is the resource's highest value (a floor held at the top, so
//! that no lower vote takes it down while the use case lives), and each
//! cap (a `min` resource) below it. Checked for the base of every
//! use case and for each of its variants, on a simulated board of the
//! target's own name.

use lever_engine::Aggregation;
use lever_kernel::KernelFs;

#[test]
fn every_value_of_every_builtin_use_case_moves_its_node_the_way_it_says() {
    let mut checked = 0;
    for board in lever_sim::boards() {
        let dir = tempfile::tempdir().unwrap();
        lever_sim::create(board.name, dir.path()).unwrap();
        let fs = KernelFs::new(dir.path());
        let Ok(target) = lever_targets::resolve(Some(board.name), &fs) else {
            continue;
        };
        let mut wrong = Vec::new();
        for uc in &target.usecases {
            let cases = std::iter::once((uc.name.clone(), Vec::new())).chain(
                uc.variants
                    .iter()
                    .map(|v| (format!("{}/{}", uc.name, v.name), v.when.clone())),
            );
            for (label, attrs) in cases {
                for (opcode, value) in uc.resolve(&attrs).adjustments() {
                    let spec = target.by_opcode(opcode).expect("a bound resource");
                    let boot = fs
                        .read(&spec.node)
                        .ok()
                        .and_then(|t| spec.parse_level(t.trim()))
                        .unwrap_or_else(|| panic!("{}: boot value of {}", board.name, spec.node));
                    let moves = match spec.aggregation {
                        Aggregation::Max => value > boot || value == spec.high,
                        Aggregation::Min => value < boot,
                        Aggregation::Newest | Aggregation::Oldest => value != boot,
                    };
                    checked += 1;
                    if !moves {
                        wrong.push(format!(
                            "{}: use case {label} sets {} to {value}, the board boots with {boot} ({} wins)",
                            board.name,
                            spec.name,
                            spec.aggregation.as_str()
                        ));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
    assert!(checked > 10, "only {checked} values checked");
}
