//! NewReno Impatient (RFC 3782 §4, the variant the RFC recommends): the timer is reset only on
//! the first partial ACK, so a recovery longer than about RTT + RTO ends in a timeout and a
//! go-back-N slow start. Paper 000 §II-C; its model is eq. (5)–(8). Behaviour: `tests/behaviour.rs`.

use super::aimd::Aimd;
use crate::tcp::{PartialAckTimer, Recovery};

pub const NEWRENO_IMPATIENT: Aimd = Aimd::new(
    "newreno-impatient",
    Recovery::NewReno(PartialAckTimer::FirstPartialAckOnly),
);
