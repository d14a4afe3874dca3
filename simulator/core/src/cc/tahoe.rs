//! 4.3BSD-Tahoe (Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988): after a fast
//! retransmit it does not fast-recover; the sender collapses cwnd to one segment and slow-starts
//! with go-back-N from the lost segment. Behaviour tests: `tests/behaviour.rs`.

use super::aimd::Aimd;
use crate::tcp::Recovery;

pub const TAHOE: Aimd = Aimd::new("tahoe", Recovery::Tahoe);
