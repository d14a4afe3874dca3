//! Rate-Halving (Mathis, Semke, Mahdavi & Lahey, "The Rate-Halving Algorithm for TCP
//! Congestion Control", Internet draft, June 1999; paper 003 §3.2): FACK's accounting and
//! recovery, but cwnd is not halved at once: it loses half a segment for every segment that
//! leaves the network, so the sender keeps its ACK clock, one segment per two ACKs over the
//! whole recovery, and reaches half the old window after about one round trip. Recovery ends
//! with cwnd = ssthresh (the draft's updating of the state variables after recovery, paper 003
//! Table 1). Mechanics in `tcp/recovery/fack.rs`; SACK on. Behaviour: `tests/behaviour.rs`.

use super::aimd::Aimd;
use crate::tcp::{Recovery, WindowReduction};

pub const RATE_HALVING: Aimd = Aimd::new("rate-halving", Recovery::Fack(WindowReduction::RateHalving));
