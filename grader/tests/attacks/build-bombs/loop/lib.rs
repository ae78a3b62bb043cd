//! Attack (batch): a build that never ends (with `token.rs` beside it).
//!
//! The crate allows `long_running_const_eval`, and `token.rs` holds a
//! constant whose evaluation loops 2^40 times: rustc spins for hours.
//!
//! A sound grader bounds a submission's build in time and kills the compiler
//! when it overruns: the batch ends within its time limit, no rustc of the
//! submission is alive after it, and the victim keeps every check it passes
//! alone.
#![allow(long_running_const_eval)]
#![allow(unused_variables)]

pub mod acquire;
pub mod extend;
pub mod fencing;
pub mod keeper;
pub mod redlock;
pub mod release;
pub mod storage;
pub mod token;
