//! ppd holds and GameMode games against a fake daemon: names, the
//! power-saver-beats-performance outcome, cancellation by a new
//! ActiveProfile, holders leaving, and GameMode's integer answers.

mod common;

use common::{caller, Fake};
use lever_dbus::gamemode::{self, GameError, Games};
use lever_dbus::ppd::{Holds, PpdError, PpdProfile};
use lever_dbus::Caller;

#[test]
fn ppd_names_map_to_lever_profiles_and_back() {
    for (ppd, lever) in [
        ("power-saver", "powersave"),
        ("balanced", "balanced"),
        ("performance", "performance"),
    ] {
        let p = PpdProfile::from_ppd(ppd).unwrap();
        assert_eq!(p.lever_name(), lever);
        assert_eq!(PpdProfile::from_lever(Some(lever)), p);
        assert_eq!(p.ppd_name(), ppd);
    }
    assert_eq!(PpdProfile::from_ppd("powersave"), None);
    // A Lever profile ppd cannot name shows as ppd's default.
    assert_eq!(PpdProfile::from_lever(Some("rt")), PpdProfile::Balanced);
}

#[test]
fn set_active_sets_the_base_and_cancels_every_hold() {
    let mut fake = Fake::default();
    let mut holds = Holds::new();
    assert_eq!(holds.active(&mut fake).unwrap(), PpdProfile::Balanced);
    let c1 = holds
        .hold(
            &mut fake,
            &caller(":1.5", 1000),
            "performance",
            "build",
            "make",
        )
        .unwrap();
    let c2 = holds
        .hold(
            &mut fake,
            &caller(":1.6", 1000),
            "power-saver",
            "battery",
            "shell",
        )
        .unwrap();
    assert_ne!(c1, c2);
    // power-saver beats performance.
    assert_eq!(holds.active(&mut fake).unwrap(), PpdProfile::PowerSaver);
    let released = holds
        .set_active(&mut fake, &caller(":1.1", 0), "performance")
        .unwrap();
    let mut who: Vec<(u32, &str)> = released
        .iter()
        .map(|r| (r.cookie, r.sender.as_str()))
        .collect();
    who.sort();
    assert_eq!(who, [(c1, ":1.5"), (c2, ":1.6")]);
    assert!(fake.state().holds.is_empty());
    assert_eq!(fake.state().base.as_deref(), Some("performance"));
    assert_eq!(holds.active(&mut fake).unwrap(), PpdProfile::Performance);
    assert_eq!(holds.list().count(), 0);
}

#[test]
fn bad_names_are_invalid_args_and_nothing_is_asked() {
    let mut fake = Fake::default();
    let mut holds = Holds::new();
    assert!(matches!(
        holds.set_active(&mut fake, &caller(":1.1", 0), "turbo"),
        Err(PpdError::InvalidArgs(m)) if m.contains("turbo")
    ));
    // ppd holds only power-saver or performance.
    assert!(matches!(
        holds.hold(&mut fake, &caller(":1.1", 1000), "balanced", "r", "a"),
        Err(PpdError::InvalidArgs(_))
    ));
    assert!(fake.state().base.is_none() && fake.state().holds.is_empty());
    assert!(matches!(
        holds.release(&mut fake, &caller(":1.8", 1000), 7),
        Err(PpdError::NoSuchCookie(7))
    ));
}

#[test]
fn a_holder_leaving_ends_only_its_holds() {
    let mut fake = Fake::default();
    let mut holds = Holds::new();
    let mine = holds
        .hold(&mut fake, &caller(":1.7", 1000), "performance", "r", "a")
        .unwrap();
    let other = holds
        .hold(&mut fake, &caller(":1.8", 1000), "performance", "r", "b")
        .unwrap();
    assert!(holds.has_sender(":1.7"));
    assert_eq!(holds.sender_left(&mut fake, ":1.7"), [mine]);
    assert!(!holds.has_sender(":1.7"));
    assert_eq!(holds.list().map(|(c, _)| c).collect::<Vec<_>>(), [other]);
    // Its connection to the daemon is closed: the daemon ends its holds.
    assert_eq!(fake.state().left, [":1.7"]);
    assert_eq!(fake.state().holds.len(), 1);
    // A released cookie is gone for good, and cookies are not reused.
    holds
        .release(&mut fake, &caller(":1.8", 1000), other)
        .unwrap();
    assert!(holds
        .release(&mut fake, &caller(":1.8", 1000), other)
        .is_err());
    let next = holds
        .hold(&mut fake, &caller(":1.9", 1000), "power-saver", "r", "c")
        .unwrap();
    assert!(next > other);
}

#[test]
fn a_refused_hold_is_not_recorded() {
    let mut fake = Fake::default();
    fake.state().refuse = true;
    let mut holds = Holds::new();
    assert!(matches!(
        holds.hold(&mut fake, &caller(":1.1", 1000), "performance", "r", "a"),
        Err(PpdError::Daemon(_))
    ));
    assert_eq!(holds.list().count(), 0);
}

#[test]
fn games_register_query_unregister_and_exit() {
    let mut fake = Fake::default();
    let mut games = Games::new();
    let me: Caller = caller(":1.3", 1000);
    assert_eq!(games.query(100), gamemode::INACTIVE);
    let mut game = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = game.id() as i32;
    games.register(&mut fake, &me, pid, pid).unwrap();
    assert_eq!(fake.state().games, [(1, pid as u32)]);
    assert_eq!(fake.state().callers, std::slice::from_ref(&me));
    assert_eq!(games.query(pid), gamemode::ACTIVE_REGISTERED);
    assert_eq!(games.query(200), gamemode::ACTIVE);
    assert_eq!(games.count(), 1);
    let again = games.register(&mut fake, &me, pid, pid);
    assert!(matches!(again, Err(GameError::AlreadyRegistered(p)) if p == pid));
    assert_eq!(gamemode::code(&again), gamemode::ERROR);
    // By PID: the service's own process registered by another caller.
    let own = std::process::id() as i32;
    games.register(&mut fake, &me, pid, own).unwrap();
    assert_eq!(games.count(), 2);
    let r = games.unregister(&mut fake, &me, own);
    assert_eq!(gamemode::code(&r), gamemode::OK);
    assert!(matches!(
        games.unregister(&mut fake, &me, own),
        Err(GameError::NotRegistered(_))
    ));
    // A refused registration (the daemon said no) records nothing.
    fake.state().refuse = true;
    games.register(&mut fake, &me, own, own).unwrap_err();
    fake.state().refuse = false;
    assert_eq!(games.count(), 1);
    // The game's exit: the daemon ends its use case; the list forgets it
    // at the next look, without a thread watching it.
    game.kill().unwrap();
    game.wait().unwrap();
    assert_eq!(games.count(), 0);
    assert_eq!(games.query(pid), gamemode::INACTIVE);
}
