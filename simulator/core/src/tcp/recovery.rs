//! Loss-recovery behaviours, separable from the window policy (as ns-3 separates
//! TcpCongestionOps from TcpRecoveryOps). The sender implements each; a variant names one.

/// What the sender does between detecting a loss by duplicate ACKs and recovering from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment and go-back-N (4.3BSD-Tahoe).
    Tahoe,
    /// Fast retransmit and fast recovery; any new ACK ends recovery (RFC 5681 §3.2).
    Reno,
    /// Fast recovery that stays in recovery across partial ACKs, retransmitting the next hole
    /// on each (RFC 3782 §3); the timer rule distinguishes the two variants of RFC 3782 §4.
    NewReno(PartialAckTimer),
    /// Conservative SACK-based recovery: pipe, scoreboard, NextSeg (RFC 6675).
    Sack,
}

/// RFC 3782 §4, "Resetting the Retransmit Timer in Response to Partial Acknowledgments".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialAckTimer {
    /// Slow-but-Steady: reset the retransmit timer on every partial ACK.
    EveryPartialAck,
    /// Impatient: reset it only on the first partial ACK, so a long recovery times out.
    FirstPartialAckOnly,
}
