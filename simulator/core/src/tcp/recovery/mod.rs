//! Loss recovery, separable from the window policy (as ns-3 separates TcpCongestionOps from
//! TcpRecoveryOps): a variant names one (`Recovery`), and the sender drives it through one
//! interface (`LossRecovery`) with one module per behaviour. The sender keeps what every
//! recovery shares — detecting the loss, ssthresh, RFC 6582's `recover`, the retransmit
//! timer, leaving recovery — and asks the recovery what to retransmit, how cwnd moves and what
//! may be sent meanwhile. A new recovery (PRR was the last) is a new module here.

mod dynamic;
mod fack;
mod newreno;
mod prr;
mod reno;
mod sack;
mod sack1;
mod tahoe;

use super::TcpSender;
use crate::packet::Packet;
use crate::time::SimTime;

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
    /// ns-2.35's `Sack1`: SACK recovery on a pipe counter (`sack_recovery: ns2_sack1`).
    Sack1,
    /// RFC 6675's recovery with cwnd set by Proportional Rate Reduction (RFC 6937, PRR-SSRB):
    /// Linux's and ns-3's (`sack_recovery: prr`).
    Prr,
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
        matches!(
            self,
            Recovery::Sack | Recovery::Sack1 | Recovery::Prr | Recovery::Fack(_)
        )
    }

    /// Whether go-back-N after a timeout skips segments the receiver SACKed (not ns-2's Sack1,
    /// which forgets its scoreboard at the timeout).
    pub fn resend_skips_sacked(self) -> bool {
        !matches!(self, Recovery::Sack1)
    }

    /// Whether, outside recovery, an ACK at snd_una is a duplicate only when it SACKs something
    /// not SACKed before (ns-2's Sack1: CheckUpdate() gates dupacks_ and send_one()).
    pub fn duplicate_needs_new_sack(self) -> bool {
        matches!(self, Recovery::Sack1)
    }

    /// The behaviour, with its own state.
    pub fn build(self) -> Box<dyn LossRecovery> {
        match self {
            Recovery::Tahoe => Box::new(tahoe::Tahoe),
            Recovery::Reno => Box::new(reno::Reno),
            Recovery::NewReno(timer) => Box::new(newreno::NewReno { timer }),
            Recovery::Sack => Box::new(sack::Sack),
            Recovery::Sack1 => Box::new(sack1::Sack1::default()),
            Recovery::Prr => Box::new(prr::Prr::default()),
            Recovery::Fack(reduction) => Box::new(fack::Fack::new(reduction)),
            Recovery::Dynamic => Box::new(dynamic::Dynamic::default()),
        }
    }
}

/// What a new ACK that does not reach `recover` does to a recovery in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialAck {
    /// The recovery ends here (Reno: any new ACK).
    Exit,
    /// The recovery goes on; `restart_timer`: restart the retransmit timer (RFC 6298 §5.3).
    Stay { restart_timer: bool },
}

/// One loss-recovery behaviour. The sender calls it with itself, so a recovery reads and
/// changes the connection (`tx.s`, the scoreboard) and sends through `tx.transmit`.
pub trait LossRecovery {
    /// The loss is detected (the DupThresh-th duplicate ACK, or FACK's own trigger). ssthresh
    /// and `recover` are set; the recovery retransmits, sets cwnd and the state it enters.
    fn enter(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>);

    /// A duplicate ACK during recovery.
    fn on_duplicate_ack(&mut self, _tx: &mut TcpSender) {}

    /// A new ACK during recovery that leaves part of the window unacknowledged; `acked`
    /// segments it newly covers.
    fn on_partial_ack(
        &mut self,
        _tx: &mut TcpSender,
        _acked: u32,
        _now: SimTime,
        _out: &mut Vec<Packet>,
    ) -> PartialAck {
        PartialAck::Stay { restart_timer: true }
    }

    /// cwnd when the recovery ends: ssthresh, or with `recovery_keeps_half_window` the
    /// reduced window before rounding (ns-2's `cwnd_ = halfwin` beside `ssthresh_ = (int) halfwin`).
    fn exit_window(&self, tx: &TcpSender) -> f64 {
        if tx.cfg.recovery_keeps_half_window {
            tx.halved_window
        } else {
            tx.s.ssthresh
        }
    }

    /// Sends during recovery. False: the ordinary window rule decides (Reno's inflated window).
    fn send(&mut self, _tx: &mut TcpSender, _now: SimTime, _out: &mut Vec<Packet>) -> bool {
        false
    }

    /// After every ACK, in any state. True: start recovery now (FACK's trigger).
    fn after_ack(&mut self, _tx: &mut TcpSender) -> bool {
        false
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
