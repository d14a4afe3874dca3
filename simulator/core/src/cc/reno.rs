//! Reno (RFC 5681 §3.2; Jacobson 1990): fast retransmit and fast recovery, the window inflated
//! by duplicate ACKs and deflated to ssthresh by the first new ACK, partial or not. Several
//! losses in one window mean several halvings, or a timeout. Behaviour: `tests/behaviour.rs`.

use super::aimd::Aimd;
use crate::tcp::Recovery;

pub const RENO: Aimd = Aimd::new("reno", Recovery::Reno);
