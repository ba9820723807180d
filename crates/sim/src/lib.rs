//! Simulated boards (work in progress).
