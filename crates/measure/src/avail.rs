//! A measured value, or the reason this machine cannot provide it: the
//! one `Avail` of Lever, kept in `lever-conditions` (which the run
//! document and the bench report also carry).

pub use lever_conditions::Avail;
