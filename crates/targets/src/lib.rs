//! Target files (work in progress).
