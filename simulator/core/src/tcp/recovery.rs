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
    /// Forward-acknowledgment recovery (Mathis & Mahdavi 1996): snd.fack is the highest
    /// segment the receiver holds, awnd = snd.nxt − snd.fack + retran_data estimates what is in
    /// the network, and the sender sends while awnd < cwnd. Recovery also starts as soon as
    /// snd.fack − snd.una exceeds the duplicate-ACK threshold. The reduction decides how cwnd
    /// goes from the old window to ssthresh.
    Fack(WindowReduction),
    /// SSDR's dynamic recovery (Wang & Williamson 1998), sender-only (no SACK): one segment per
    /// two ACKs until the first retransmission is acknowledged (the damping phase), then one per
    /// ACK while the remaining holes are repaired, one per partial ACK as NewReno does; on the
    /// full ACK cwnd becomes what is really in flight, at most ssthresh.
    Dynamic,
}

impl Recovery {
    /// Whether the recovery reads SACK blocks (the receiver must send them).
    pub fn needs_sack(self) -> bool {
        matches!(self, Recovery::Sack | Recovery::Fack(_))
    }
}

/// How a FACK sender brings cwnd down after a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowReduction {
    /// cwnd = ssthresh at once, when recovery starts (FACK as in the 1996 paper).
    Halve,
    /// Rate-Halving (Mathis et al., draft 1999): cwnd shrinks by half a segment for every
    /// segment that leaves the network, so one segment goes out per two ACKs over the whole
    /// recovery, and reaches ssthresh after about one round trip.
    RateHalving,
}

/// RFC 3782 §4, "Resetting the Retransmit Timer in Response to Partial Acknowledgments".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialAckTimer {
    /// Slow-but-Steady: reset the retransmit timer on every partial ACK.
    EveryPartialAck,
    /// Impatient: reset it only on the first partial ACK, so a long recovery times out.
    FirstPartialAckOnly,
}
