//! NewReno Slow-but-Steady (RFC 3782 §3 fast recovery, §4 timer variant): partial ACKs keep the
//! sender in fast recovery, each retransmitting the next hole, and every partial ACK resets
//! the retransmit timer, so m losses are repaired in about m round trips without a timeout.
//! Paper 000 §II-C; its throughput model is eq. (1)–(4). Behaviour: `tests/behaviour.rs`.

use super::aimd::Aimd;
use crate::tcp::{PartialAckTimer, Recovery};

pub const NEWRENO_SBS: Aimd = Aimd::new("newreno-sbs", Recovery::NewReno(PartialAckTimer::EveryPartialAck));
