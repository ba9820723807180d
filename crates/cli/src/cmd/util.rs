//! Helpers shared by commands: flag values with units. (Running the user's
//! command is `lever_measure::sampling`; the progress line is output, in
//! `render::Progress`, re-exported here for the commands that name it.)

use lever_text::{parse_duration, TimeUnit, UnitError};
use std::time::Duration;

pub use crate::render::Progress;

/// A time flag whose bare number is in seconds: `2`, `0.5`, `500ms`, `1m`.
pub fn seconds(text: &str) -> Result<Duration, UnitError> {
    parse_duration(text, TimeUnit::Seconds)
}

/// A time flag that must be more than 0 (a sampling duration): seconds
/// like [`seconds`].
pub fn positive_seconds(text: &str) -> Result<Duration, String> {
    match seconds(text) {
        Ok(d) if d.is_zero() => Err("must be more than 0".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// A sampling interval: seconds like [`seconds`], more than 0 and at most
/// an hour.
pub fn interval(text: &str) -> Result<Duration, String> {
    let d = positive_seconds(text)?;
    if d > Duration::from_secs(3600) {
        return Err(format!("at most 3600 s, not {} s", d.as_secs_f64()));
    }
    Ok(d)
}

/// `--kpi NAME=FROM..TO`'s form, checked by clap (`trace analyze`,
/// `report collect`).
pub fn kpi_spec(text: &str) -> Result<String, String> {
    match lever_trace_analysis::markers::KpiSpec::parse(text) {
        Some(_) => Ok(text.to_string()),
        None => Err(
            "expected NAME=FROM..TO, e.g. record=Connect..FirstVidFrame or load=start..stop".into(),
        ),
    }
}

/// A simulated board's name (`lever sim list`): clap refuses another
/// name listing the boards, and completion offers them.
pub fn sim_board() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(lever_sim::boards().into_iter().map(|b| b.name))
}

/// A CPU list flag (`--rt-cpus 1-3,5`): its form, checked by clap; the
/// command checks the CPUs against the machine.
pub fn cpu_list(text: &str) -> Result<String, String> {
    match lever_kernel::parse_cpu_list(text.trim()) {
        Some(cpus) if !cpus.is_empty() => Ok(text.to_string()),
        _ => Err("expected a CPU list such as 1-3 or 0,2,4-5".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_numbers_stay_seconds() {
        assert_eq!(seconds("0.2"), Ok(Duration::from_millis(200)));
        assert_eq!(seconds("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(seconds("1m"), Ok(Duration::from_secs(60)));
        assert!(seconds("-1").is_err());
        assert!(positive_seconds("0").is_err());
        assert_eq!(positive_seconds("2"), Ok(Duration::from_secs(2)));
        assert!(interval("1h1s").is_err());
        assert!(interval("0ms").is_err());
    }
}
