//! Helpers shared by commands: flag values with units. (Running the user's
//! command is `lever_measure::sampling`; the progress line is output, in
//! `render::Progress`, re-exported here for the commands that name it.)

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
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

/// A value whose shell completion offers the built-in names (`lever
/// completions`), parsed by `inner` as before: a name the built-ins do not
/// have (a file, an id, a name of the daemon's own target) is still taken
/// and checked where it is used. The arguments using it hide the names
/// from `--help` and the man pages (`hide_possible_values`).
#[derive(Clone)]
pub struct Offered<P> {
    inner: P,
    names: fn() -> Vec<PossibleValue>,
}

impl<P: TypedValueParser> TypedValueParser for Offered<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.inner.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.names)().into_iter()))
    }
}

/// Any text, offering `names` to completion.
fn offer(names: fn() -> Vec<PossibleValue>) -> Offered<StringValueParser> {
    Offered {
        inner: StringValueParser::new(),
        names,
    }
}

/// Names with their help, each once (the first help wins), sorted.
fn named<'a>(items: impl IntoIterator<Item = (String, &'a str)>) -> Vec<PossibleValue> {
    let mut seen = std::collections::BTreeMap::new();
    for (name, help) in items {
        seen.entry(name).or_insert_with(|| help.to_string());
    }
    seen.into_iter()
        .map(|(name, help)| {
            let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
            PossibleValue::new(name).help(help)
        })
        .collect()
}

/// Every built-in target, parsed (they are embedded; none fails to parse,
/// `crates/targets/tests/builtins.rs`).
fn builtin_targets() -> Vec<lever_targets::TargetFile> {
    lever_targets::builtin_names()
        .iter()
        .filter_map(|n| lever_targets::load_builtin(n).ok())
        .collect()
}

/// A profile: completion offers the built-in ones; a file path is taken
/// too.
pub fn profile_name() -> Offered<StringValueParser> {
    offer(|| {
        let profiles: Vec<(String, String)> = lever_profiles::builtin_names()
            .into_iter()
            .map(|n| {
                let help = lever_profiles::load_builtin(n)
                    .map(|p| p.description)
                    .unwrap_or_default();
                (n.to_string(), help)
            })
            .collect();
        named(profiles.iter().map(|(n, h)| (n.clone(), h.as_str())))
    })
}

/// A use case: completion offers the built-in targets' ones; an id or
/// a use case of the daemon's own target is taken too.
pub fn usecase_name() -> Offered<StringValueParser> {
    offer(|| {
        let targets = builtin_targets();
        named(
            targets
                .iter()
                .flat_map(|t| &t.usecases)
                .map(|u| (u.name.clone(), u.description.as_str())),
        )
    })
}

/// An app: completion offers the built-in targets' `apps:`.
pub fn app_name() -> Offered<StringValueParser> {
    offer(|| {
        let targets = builtin_targets();
        named(
            targets
                .iter()
                .flat_map(|t| &t.apps)
                .map(|a| (a.pattern.name.clone(), "")),
        )
    })
}

/// The built-in targets' resource names (expanded over their declared
/// clusters) with their descriptions.
fn resource_names(suffix: &str) -> Vec<PossibleValue> {
    let targets = builtin_targets();
    named(targets.iter().flat_map(|t| {
        t.resource_names()
            .into_iter()
            .map(|(n, tpl)| (format!("{n}{suffix}"), tpl.description.as_str()))
    }))
}

/// A resource: completion offers the built-in targets' resource names;
/// an opcode or a resource of the daemon's own target is taken too.
pub fn resource_name() -> Offered<StringValueParser> {
    offer(|| resource_names(""))
}

/// `RES=VALUE`, checked by `check`: completion offers `NAME=` for the
/// built-in targets' resources.
pub fn resource_pair(
    check: fn(&str) -> Result<String, String>,
) -> Offered<impl TypedValueParser<Value = String>> {
    Offered {
        inner: StringValueParser::new().try_map(move |s: String| check(&s)),
        names: || resource_names("="),
    }
}

/// A target: completion offers the built-in ones; a YAML file is taken
/// too.
pub fn target_name() -> Offered<StringValueParser> {
    offer(|| {
        let targets = builtin_targets();
        named(
            targets
                .iter()
                .map(|t| (t.name.clone(), t.description.as_str())),
        )
    })
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
