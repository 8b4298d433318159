//! Rowset inputs.
