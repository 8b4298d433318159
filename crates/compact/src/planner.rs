//! The planner.
