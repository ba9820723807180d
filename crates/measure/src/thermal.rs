//! Thermal zones and cooling devices: `/sys/class/thermal` (`lever
//! thermal`, and the thermal part of every run's conditions).
//!
//! The kernel's thermal class (Documentation/driver-api/thermal/sysfs-api.rst)
//! lists one directory per zone and per cooling device:
//!
//! ```text
//! /sys/class/thermal/thermal_zone0/type                 cpu0-thermal
//! /sys/class/thermal/thermal_zone0/temp                 41200        (m°C)
//! /sys/class/thermal/thermal_zone0/mode                 enabled
//! /sys/class/thermal/thermal_zone0/policy               step_wise
//! /sys/class/thermal/thermal_zone0/trip_point_0_type    passive
//! /sys/class/thermal/thermal_zone0/trip_point_0_temp    90000
//! /sys/class/thermal/thermal_zone0/trip_point_0_hyst    2000
//! /sys/class/thermal/thermal_zone0/cdev0 -> ../cooling_device0
//! /sys/class/thermal/thermal_zone0/cdev0_trip_point     0
//! /sys/class/thermal/thermal_zone0/cdev0_weight         0
//! /sys/class/thermal/cooling_device0/type               cpufreq-cpu0
//! /sys/class/thermal/cooling_device0/cur_state          0
//! /sys/class/thermal/cooling_device0/max_state          17
//! ```
//!
//! A zone's `type` is its name: on a device-tree kernel the node name under
//! `/thermal-zones` (`cpu0-thermal`). A `cdevN` link binds a cooling device
//! to the zone, at the trip point `cdevN_trip_point` names. A sensor that
//! cannot be read right now (a disabled zone answers EAGAIN or EINVAL)
//! gives a zone with no temperature and the kernel's reason, not a zero.
//!
//! [`Thermal::read`] takes everything; [`ThermalSample::read`] only the
//! temperatures and cooling states, for `--watch`; [`Watch::new`] turns
//! samples into the peak of every zone.

use crate::avail::Avail;
use crate::error::MeasureError;
use lever_conditions::{CoolingState, ThermalState, ZoneTemp};
use lever_kernel::{paths, KernelError, KernelFs};
use serde::Serialize;

/// One trip point of a zone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TripPoint {
    /// Its number (`trip_point_N_*`).
    pub index: u32,
    /// `passive`, `active`, `hot` or `critical`.
    pub kind: Option<String>,
    /// Temperature that trips it, m°C.
    pub temp_mc: Option<i64>,
    /// Hysteresis, m°C (absent on kernels without `trip_point_N_hyst`).
    pub hyst_mc: Option<i64>,
}

/// A cooling device bound to a zone (`cdevN`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Binding {
    /// The link's name in the zone (`cdev0`).
    pub link: String,
    /// The cooling device it points to (`cooling_device3`).
    pub device: String,
    /// The trip point that engages it (`cdevN_trip_point`).
    pub trip_point: Option<u32>,
    /// `cdevN_weight`, where present.
    pub weight: Option<u32>,
}

/// One thermal zone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Zone {
    /// `thermal_zone0`.
    pub zone: String,
    /// `type`: the zone's name.
    pub kind: String,
    /// `temp`, m°C, or why the sensor gave none.
    pub temp_mc: Avail<i64>,
    /// `mode`: `enabled` or `disabled`.
    pub mode: Option<String>,
    /// `policy`: the governor (`step_wise`, `power_allocator`).
    pub policy: Option<String>,
    /// Trip points, by number.
    pub trips: Vec<TripPoint>,
    /// Cooling devices bound to it.
    pub bindings: Vec<Binding>,
}

/// One cooling device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoolingDevice {
    /// `cooling_device0`.
    pub device: String,
    /// `type` (`cpufreq-cpu4`, `Processor`, `devfreq-3d00000.gpu`).
    pub kind: String,
    /// `cur_state`: 0 is no cooling.
    pub cur_state: Option<u64>,
    /// `max_state`: the strongest cooling.
    pub max_state: Option<u64>,
    /// Zones bound to it (`thermal_zone4`), from the zones' `cdevN` links.
    pub zones: Vec<String>,
}

/// Every zone and cooling device of the thermal class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thermal {
    /// Zones, in number order; empty when there are none (see
    /// [`Thermal::zones_missing`]).
    pub zones: Vec<Zone>,
    /// Cooling devices, in number order.
    pub cooling: Vec<CoolingDevice>,
}

/// Why a kernel has no thermal zones, for people.
pub fn no_zones_reason(fs: &KernelFs) -> String {
    if fs.exists(paths::THERMAL) {
        format!(
            "{} has no thermal_zone* entries: no thermal sensor driver registered a zone \
             (usual in a VM, which has no sensors)",
            paths::THERMAL
        )
    } else {
        format!(
            "{} does not exist: this kernel was built without the thermal class (CONFIG_THERMAL)",
            paths::THERMAL
        )
    }
}

/// Entries of the thermal class directory named `prefix<N>`, in number
/// order; empty when the class is missing.
fn entries(fs: &KernelFs, prefix: &str) -> Result<Vec<String>, MeasureError> {
    match fs.list_dir(paths::THERMAL) {
        Ok(names) => Ok(names
            .into_iter()
            .filter(|n| {
                n.strip_prefix(prefix)
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            })
            .collect()),
        Err(e) if e.is_missing() => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// A node's text, `None` when absent.
fn text(fs: &KernelFs, path: &str) -> Result<Option<String>, MeasureError> {
    Ok(fs.read_optional(path)?.map(|t| t.trim().to_string()))
}

/// A node holding one integer, `None` when absent.
fn int(fs: &KernelFs, path: &str) -> Result<Option<i64>, MeasureError> {
    match fs.read_i64(path) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A zone's `temp`: a sensor that does not answer right now (EAGAIN,
/// EINVAL, ENODATA: a disabled zone or a sensor still starting) is a zone
/// without a temperature, with the kernel's reason.
fn temperature(fs: &KernelFs, zone: &str) -> Result<Avail<i64>, MeasureError> {
    let path = format!("{}/{zone}/temp", paths::THERMAL);
    match fs.read_i64(&path) {
        Ok(v) => Ok(Avail::Value(v)),
        Err(KernelError::Io { source, .. }) => Ok(Avail::Unavailable(format!(
            "the sensor did not answer: {source}"
        ))),
        Err(KernelError::Missing { .. }) => Ok(Avail::Unavailable(format!("no {path}"))),
        Err(e) => Err(e.into()),
    }
}

impl Thermal {
    /// Read every zone and cooling device below `fs`' root.
    pub fn read(fs: &KernelFs) -> Result<Thermal, MeasureError> {
        let mut zones = Vec::new();
        for zone in entries(fs, "thermal_zone")? {
            zones.push(read_zone(fs, &zone)?);
        }
        let mut cooling = Vec::new();
        for device in entries(fs, "cooling_device")? {
            let dir = format!("{}/{device}", paths::THERMAL);
            let bound = zones
                .iter()
                .filter(|z| z.bindings.iter().any(|b| b.device == device))
                .map(|z| z.zone.clone())
                .collect();
            cooling.push(CoolingDevice {
                kind: text(fs, &format!("{dir}/type"))?.unwrap_or_default(),
                cur_state: int(fs, &format!("{dir}/cur_state"))?.map(|v| v.max(0) as u64),
                max_state: int(fs, &format!("{dir}/max_state"))?.map(|v| v.max(0) as u64),
                zones: bound,
                device,
            });
        }
        Ok(Thermal { zones, cooling })
    }

    /// Why there are no zones, when there are none.
    pub fn zones_missing(&self, fs: &KernelFs) -> Option<String> {
        self.zones.is_empty().then(|| no_zones_reason(fs))
    }

    /// The temperatures and cooling states only, as a run's conditions
    /// keep them.
    pub fn state(&self) -> ThermalState {
        ThermalState {
            zones: self
                .zones
                .iter()
                .map(|z| ZoneTemp {
                    zone: z.zone.clone(),
                    kind: z.kind.clone(),
                    temp_mc: z.temp_mc.value().copied(),
                })
                .collect(),
            cooling: self
                .cooling
                .iter()
                .map(|c| CoolingState {
                    device: c.device.clone(),
                    kind: c.kind.clone(),
                    cur_state: c.cur_state,
                    max_state: c.max_state,
                })
                .collect(),
        }
    }
}

fn read_zone(fs: &KernelFs, zone: &str) -> Result<Zone, MeasureError> {
    let dir = format!("{}/{zone}", paths::THERMAL);
    let names = fs.list_dir(&dir)?;
    let mut trips = Vec::new();
    let mut bindings = Vec::new();
    for name in &names {
        // trip_point_0_type, trip_point_0_temp, trip_point_0_hyst
        if let Some(index) = name
            .strip_prefix("trip_point_")
            .and_then(|r| r.strip_suffix("_type"))
            .and_then(|n| n.parse::<u32>().ok())
        {
            let at = |f: &str| format!("{dir}/trip_point_{index}_{f}");
            trips.push(TripPoint {
                index,
                kind: text(fs, &at("type"))?,
                temp_mc: int(fs, &at("temp"))?,
                hyst_mc: int(fs, &at("hyst"))?,
            });
        }
        // cdev0 -> ../cooling_device0, with cdev0_trip_point and cdev0_weight
        if name
            .strip_prefix("cdev")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        {
            let link = format!("{dir}/{name}");
            let host = fs.resolve(&link)?;
            let device = match std::fs::read_link(&host) {
                Ok(target) => target
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                Err(source) => {
                    return Err(KernelError::Io {
                        path: link,
                        op: "readlink",
                        source,
                    }
                    .into())
                }
            };
            bindings.push(Binding {
                trip_point: int(fs, &format!("{link}_trip_point"))?
                    .and_then(|v| u32::try_from(v).ok()),
                weight: int(fs, &format!("{link}_weight"))?.and_then(|v| u32::try_from(v).ok()),
                link: name.clone(),
                device,
            });
        }
    }
    trips.sort_by_key(|t| t.index);
    Ok(Zone {
        zone: zone.to_string(),
        kind: text(fs, &format!("{dir}/type"))?.unwrap_or_default(),
        temp_mc: temperature(fs, zone)?,
        mode: text(fs, &format!("{dir}/mode"))?,
        policy: text(fs, &format!("{dir}/policy"))?,
        trips,
        bindings,
    })
}

/// Temperatures and cooling states at one moment (`--watch`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThermalSample {
    /// Seconds since the watch started.
    pub elapsed_s: f64,
    /// One per zone of the [`Thermal`] it was read for, in its order, m°C.
    pub temps_mc: Vec<Option<i64>>,
    /// One per cooling device, in its order.
    pub states: Vec<Option<u64>>,
}

impl ThermalSample {
    /// Read the temperatures and states of `thermal`'s zones and devices.
    pub fn read(
        fs: &KernelFs,
        thermal: &Thermal,
        elapsed_s: f64,
    ) -> Result<ThermalSample, MeasureError> {
        let mut temps_mc = Vec::with_capacity(thermal.zones.len());
        for z in &thermal.zones {
            temps_mc.push(temperature(fs, &z.zone)?.value().copied());
        }
        let mut states = Vec::with_capacity(thermal.cooling.len());
        for c in &thermal.cooling {
            let path = format!("{}/{}/cur_state", paths::THERMAL, c.device);
            states.push(int(fs, &path)?.map(|v| v.max(0) as u64));
        }
        Ok(ThermalSample {
            elapsed_s,
            temps_mc,
            states,
        })
    }
}

/// One zone over a watch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ZonePeak {
    /// `thermal_zone0`.
    pub zone: String,
    /// Its `type`.
    pub kind: String,
    /// First reading, m°C.
    pub first_mc: Option<i64>,
    /// Hottest reading, m°C.
    pub peak_mc: Option<i64>,
    /// Seconds into the watch of the hottest reading.
    pub peak_at_s: Option<f64>,
    /// Last reading, m°C.
    pub last_mc: Option<i64>,
    /// The lowest trip point it reached (`passive` at 90.0 °C), if any.
    pub tripped: Option<u32>,
}

/// One cooling device over a watch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoolingPeak {
    /// `cooling_device0`.
    pub device: String,
    /// Its `type`.
    pub kind: String,
    /// Highest `cur_state` seen.
    pub max_seen: Option<u64>,
    /// `max_state`.
    pub max_state: Option<u64>,
}

/// `lever thermal --watch`: samples and the peak of every zone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Watch {
    /// Every sample, in order.
    pub samples: Vec<ThermalSample>,
    /// Per zone: first, peak, last.
    pub zones: Vec<ZonePeak>,
    /// Per cooling device: the highest state seen.
    pub cooling: Vec<CoolingPeak>,
}

impl Watch {
    /// Peaks of `samples`, all read for `thermal`.
    pub fn new(thermal: &Thermal, samples: Vec<ThermalSample>) -> Watch {
        let zones = thermal
            .zones
            .iter()
            .enumerate()
            .map(|(i, z)| {
                let series: Vec<(f64, i64)> = samples
                    .iter()
                    .filter_map(|s| Some((s.elapsed_s, (*s.temps_mc.get(i)?)?)))
                    .collect();
                let peak = series
                    .iter()
                    .copied()
                    .reduce(|a, b| if b.1 > a.1 { b } else { a });
                let tripped = peak.and_then(|(_, t)| {
                    z.trips
                        .iter()
                        .filter(|tp| tp.temp_mc.is_some_and(|x| t >= x))
                        .min_by_key(|tp| tp.temp_mc)
                        .map(|tp| tp.index)
                });
                ZonePeak {
                    zone: z.zone.clone(),
                    kind: z.kind.clone(),
                    first_mc: series.first().map(|p| p.1),
                    peak_mc: peak.map(|p| p.1),
                    peak_at_s: peak.map(|p| p.0),
                    last_mc: series.last().map(|p| p.1),
                    tripped,
                }
            })
            .collect();
        let cooling = thermal
            .cooling
            .iter()
            .enumerate()
            .map(|(i, c)| CoolingPeak {
                device: c.device.clone(),
                kind: c.kind.clone(),
                max_seen: samples.iter().filter_map(|s| *s.states.get(i)?).max(),
                max_state: c.max_state,
            })
            .collect();
        Watch {
            samples,
            zones,
            cooling,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lever_testkit::FakeTree;

    /// A zone and a cooling device as an RB3gen2 (QCS6490, kernel 6.6)
    /// shows them, bound at the zone's first passive trip.
    fn rb3gen2() -> FakeTree {
        let t = FakeTree::with(&[
            ("/sys/class/thermal/thermal_zone0/type", "cpu0-thermal\n"),
            ("/sys/class/thermal/thermal_zone0/temp", "41200\n"),
            ("/sys/class/thermal/thermal_zone0/mode", "enabled\n"),
            ("/sys/class/thermal/thermal_zone0/policy", "step_wise\n"),
            (
                "/sys/class/thermal/thermal_zone0/trip_point_0_type",
                "passive\n",
            ),
            (
                "/sys/class/thermal/thermal_zone0/trip_point_0_temp",
                "90000\n",
            ),
            (
                "/sys/class/thermal/thermal_zone0/trip_point_0_hyst",
                "2000\n",
            ),
            (
                "/sys/class/thermal/thermal_zone0/trip_point_2_type",
                "critical\n",
            ),
            (
                "/sys/class/thermal/thermal_zone0/trip_point_2_temp",
                "110000\n",
            ),
            ("/sys/class/thermal/thermal_zone0/trip_point_2_hyst", "0\n"),
            (
                "/sys/class/thermal/thermal_zone0/trip_point_1_type",
                "passive\n",
            ),
            (
                "/sys/class/thermal/thermal_zone0/trip_point_1_temp",
                "95000\n",
            ),
            (
                "/sys/class/thermal/thermal_zone0/trip_point_1_hyst",
                "2000\n",
            ),
            ("/sys/class/thermal/thermal_zone0/cdev0_trip_point", "0\n"),
            ("/sys/class/thermal/thermal_zone0/cdev0_weight", "0\n"),
            ("/sys/class/thermal/cooling_device0/type", "cpufreq-cpu0\n"),
            ("/sys/class/thermal/cooling_device0/cur_state", "0\n"),
            ("/sys/class/thermal/cooling_device0/max_state", "14\n"),
            ("/sys/class/thermal/cooling_device1/type", "cpufreq-cpu4\n"),
            ("/sys/class/thermal/cooling_device1/cur_state", "2\n"),
            ("/sys/class/thermal/cooling_device1/max_state", "17\n"),
        ]);
        let link = t
            .fs()
            .resolve("/sys/class/thermal/thermal_zone0/cdev0")
            .unwrap();
        std::os::unix::fs::symlink("../cooling_device0", link).unwrap();
        t
    }

    #[test]
    fn reads_zones_trips_devices_and_bindings() {
        let t = rb3gen2();
        let th = Thermal::read(t.fs()).unwrap();
        assert_eq!(th.zones.len(), 1);
        let z = &th.zones[0];
        assert_eq!(
            (z.zone.as_str(), z.kind.as_str()),
            ("thermal_zone0", "cpu0-thermal")
        );
        assert_eq!(z.temp_mc, Avail::Value(41200));
        assert_eq!(z.mode.as_deref(), Some("enabled"));
        assert_eq!(z.policy.as_deref(), Some("step_wise"));
        let trips: Vec<_> = z
            .trips
            .iter()
            .map(|t| (t.index, t.temp_mc, t.hyst_mc))
            .collect();
        assert_eq!(
            trips,
            [
                (0, Some(90000), Some(2000)),
                (1, Some(95000), Some(2000)),
                (2, Some(110000), Some(0))
            ]
        );
        assert_eq!(
            z.bindings,
            [Binding {
                link: "cdev0".into(),
                device: "cooling_device0".into(),
                trip_point: Some(0),
                weight: Some(0),
            }]
        );
        assert_eq!(th.cooling[0].zones, ["thermal_zone0"]);
        assert!(th.cooling[1].zones.is_empty());
        assert_eq!(th.cooling[1].cur_state, Some(2));
        let s = th.state();
        assert_eq!(s.hottest().unwrap().temp_mc, Some(41200));
        assert_eq!(s.cooling[1].kind, "cpufreq-cpu4");
    }

    #[test]
    fn a_watch_keeps_each_zones_peak_and_the_trip_it_reached() {
        let t = rb3gen2();
        let th = Thermal::read(t.fs()).unwrap();
        let mut samples = vec![ThermalSample::read(t.fs(), &th, 0.0).unwrap()];
        for (s, temp, state) in [(1.0, "93500", "3"), (2.0, "88000", "1")] {
            t.node("/sys/class/thermal/thermal_zone0/temp", temp);
            t.node("/sys/class/thermal/cooling_device0/cur_state", state);
            samples.push(ThermalSample::read(t.fs(), &th, s).unwrap());
        }
        let w = Watch::new(&th, samples);
        let z = &w.zones[0];
        assert_eq!(
            (z.first_mc, z.peak_mc, z.peak_at_s, z.last_mc),
            (Some(41200), Some(93500), Some(1.0), Some(88000))
        );
        assert_eq!(
            z.tripped,
            Some(0),
            "93.5 °C is past the 90 °C passive trip only"
        );
        assert_eq!(w.cooling[0].max_seen, Some(3));
        assert_eq!(w.cooling[1].max_seen, Some(2));
    }

    #[test]
    fn simulated_boards_carry_their_socs_zones() {
        let dir = tempfile::tempdir().unwrap();
        lever_sim::create("qcs6490", dir.path()).unwrap();
        let fs = KernelFs::new(dir.path());
        let th = Thermal::read(&fs).unwrap();
        // sc7280's /thermal-zones: 12 CPU sensors, 15 subsystem sensors, 3 PMICs.
        assert_eq!(th.zones.len(), 30);
        assert_eq!(th.zones[0].kind, "cpu0-thermal");
        assert_eq!(th.zones[29].kind, "pmr735a-thermal");
        let kinds: Vec<&str> = th.cooling.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "cpufreq-cpu0",
                "cpufreq-cpu4",
                "cpufreq-cpu7",
                "devfreq-3d00000.qcom,kgsl-3d0"
            ]
        );
        // cpu4-thermal binds the gold and the prime policy at both passive trips.
        let z4 = &th.zones[4];
        let b: Vec<(&str, Option<u32>)> = z4
            .bindings
            .iter()
            .map(|b| (b.device.as_str(), b.trip_point))
            .collect();
        assert_eq!(
            b,
            [
                ("cooling_device1", Some(0)),
                ("cooling_device2", Some(0)),
                ("cooling_device1", Some(1)),
                ("cooling_device2", Some(1))
            ]
        );
        assert_eq!(z4.trips[2].kind.as_deref(), Some("critical"));
        assert_eq!(th.cooling[3].zones, ["thermal_zone16", "thermal_zone17"]);
        assert!(th.cooling.iter().all(|c| c.cur_state == Some(0)));

        // The FP1 part has no prime core: no cpufreq-cpu7 to bind.
        let dir = tempfile::tempdir().unwrap();
        lever_sim::create("qcs5430-fp1", dir.path()).unwrap();
        let th = Thermal::read(&KernelFs::new(dir.path())).unwrap();
        assert_eq!(th.cooling.len(), 3);
        assert_eq!(th.zones[4].bindings.len(), 2);

        let dir = tempfile::tempdir().unwrap();
        lever_sim::create("am437x", dir.path()).unwrap();
        let fs = KernelFs::new(dir.path());
        let th = Thermal::read(&fs).unwrap();
        assert!(th.zones_missing(&fs).is_some());
    }

    #[test]
    fn no_zones_says_why() {
        let t = FakeTree::with(&[("/proc/loadavg", "0.00 0.00 0.00 1/80 1\n")]);
        let th = Thermal::read(t.fs()).unwrap();
        assert!(th.zones.is_empty() && th.cooling.is_empty());
        assert!(th
            .zones_missing(t.fs())
            .unwrap()
            .contains("built without the thermal class"));
        t.node("/sys/class/thermal/.keep", "");
        assert!(no_zones_reason(t.fs()).contains("no thermal_zone* entries"));
    }
}
