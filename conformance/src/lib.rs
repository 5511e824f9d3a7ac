//! Loads vendor OMPD libraries and judges them against the simulated target.
pub mod vendors;
