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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_numbers_stay_seconds() {
        assert_eq!(seconds("0.2"), Ok(Duration::from_millis(200)));
        assert_eq!(seconds("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(seconds("1m"), Ok(Duration::from_secs(60)));
        assert!(seconds("-1").is_err());
    }
}
