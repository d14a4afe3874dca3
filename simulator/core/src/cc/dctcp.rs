//! DCTCP, Data Center TCP (RFC 8257; Alizadeh et al., SIGCOMM 2010): the switch marks CE
//! whenever its instantaneous queue is at or above a threshold K (§3.1), the receiver echoes
//! each mark precisely (§3.2, `tcp/receiver.rs`), and the sender keeps α, an estimate of the
//! fraction of its data that was marked, and cuts its window by α/2 rather than by half (§3.3).
//!
//! - α: once per window of data, F = bytes acknowledged with ECE / bytes acknowledged, and
//!   α ← (1 − g)·α + g·F with g = 1/16 (§3.3, §4.2), counted in segments here (tcpsim's unit).
//!   α starts at 1, as ns-3's `TcpDctcp` (`DctcpAlphaOnInit` 1.0, `DctcpShiftG` 0.0625) and
//!   Linux's `dctcp_alpha_on_init` (DCTCP_MAX_ALPHA) have it: the first marks halve, as Reno.
//!   The window ends when the cumulative ACK reaches what had been sent when it began (Linux's
//!   `!before(snd_una, next_seq)`); the first one begins at the first ACK, as ns-3's
//!   `m_nextSeqFlag`.
//! - ECE: cwnd ← cwnd·(1 − α/2), at most once per window of data (§3.3), through the sender's
//!   RFC 3168 reduction (`on_ecn_echo`), floor 2 segments (Linux's `dctcp_ssthresh`).
//! - Loss: as standard TCP (§3.4): the window halves and the flow's recovery repairs it
//!   (RFC 6675 SACK, or NewReno with `sack: false`). ns-3's `TcpDctcp::GetSsThresh` scales a
//!   loss by α too; Linux (since 4.x, `dctcp_react_to_loss`) halves, as tcpsim does.
//! - Growth: RFC 5681's slow start and +1/cwnd per ACK (ns-3 inherits `TcpLinuxReno`'s).
//! - ECN is on for a DCTCP flow whatever `tcp.ecn` says, and its receiver echoes precisely
//!   (`precise_ecn`), as ns-3's `TcpDctcp::Init` forces `DctcpEcn` mode.

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// RFC 8257 §4.2: the EWMA gain, 1/16 (ns-3's `DctcpShiftG`, Linux's `dctcp_shift_g` 4).
pub const G: f64 = 1.0 / 16.0;
/// α before the first window of feedback (ns-3's `DctcpAlphaOnInit`, Linux's default).
pub const ALPHA_ON_INIT: f64 = 1.0;

pub struct Dctcp {
    recovery: Recovery,
    /// The estimated fraction of data marked, in [0, 1].
    alpha: f64,
    /// Segments acknowledged in the current observation window, and those of them with ECE.
    acked: u64,
    marked: u64,
    /// The window ends when snd_una reaches this segment; None before the first ACK.
    window_end: Option<u32>,
    /// Windows that updated α.
    updates: u64,
    /// A window also lasts at least this long (Prague's α cadence once RTT-independent); 0 for
    /// DCTCP, whose windows are round trips.
    min_window: SimTime,
    /// When α was last updated.
    updated_at: SimTime,
    /// For the results: α after each ACK times the segments it acknowledged, summed, and
    /// those segments, since the measurement window opened.
    alpha_acked_sum: f64,
    alpha_acked: u64,
}

impl Dctcp {
    pub fn new(sack: Option<bool>) -> Self {
        Dctcp {
            recovery: aimd::sack_or_newreno(sack),
            alpha: ALPHA_ON_INIT,
            acked: 0,
            marked: 0,
            window_end: None,
            updates: 0,
            min_window: 0,
            updated_at: 0,
            alpha_acked_sum: 0.0,
            alpha_acked: 0,
        }
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        aimd::increase(s);
    }

    /// RFC 8257 §3.3: cwnd·(1 − α/2), at least 2 segments.
    fn on_ecn_echo(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        (s.window_in_use() * (1.0 - self.alpha / 2.0)).max(2.0)
    }

    /// RFC 8257 §3.3's per-ACK bookkeeping and once-per-window α update.
    fn on_ecn_ack(&mut self, s: &SocketState, acked: u32, ece: bool, now: SimTime) {
        self.update_alpha(s, acked, ece, now);
        self.alpha_acked_sum += self.alpha * acked as f64;
        self.alpha_acked += acked as u64;
    }

    fn precise_ecn(&self) -> bool {
        true
    }

    fn ecn_alpha(&self) -> Option<f64> {
        Some(if self.alpha_acked > 0 {
            self.alpha_acked_sum / self.alpha_acked as f64
        } else {
            self.alpha
        })
    }

    fn open_window(&mut self) {
        (self.alpha_acked_sum, self.alpha_acked) = (0.0, 0);
    }
}

impl Dctcp {
    /// Each α update also waits until `min_window` has passed since the last (Prague's
    /// `prague_should_update_ewma` once RTT-independent); 0: once per window of data.
    pub fn set_min_window(&mut self, min_window: SimTime) {
        self.min_window = min_window;
    }

    /// Windows that updated α.
    #[cfg(test)]
    pub fn updates(&self) -> u64 {
        self.updates
    }

    fn update_alpha(&mut self, s: &SocketState, acked: u32, ece: bool, now: SimTime) {
        self.acked += acked as u64;
        if ece {
            self.marked += acked as u64;
        }
        let Some(end) = self.window_end else {
            self.window_end = Some(s.snd_nxt.max(s.snd_una));
            return;
        };
        if s.snd_una < end || now.saturating_sub(self.updated_at) < self.min_window {
            return;
        }
        self.updated_at = now;
        if self.acked > 0 {
            let f = self.marked as f64 / self.acked as f64;
            self.alpha = (1.0 - G) * self.alpha + G * f;
            self.updates += 1;
        }
        self.acked = 0;
        self.marked = 0;
        self.window_end = Some(s.snd_nxt.max(s.snd_una));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One window of `n` ACKs of one segment each, `marked` of them with ECE, then the ACK
    /// that closes it.
    fn window(cc: &mut Dctcp, s: &mut SocketState, n: u32, marked: u32) {
        let end = s.snd_una + n;
        s.snd_nxt = end + n;
        for i in 0..n {
            s.snd_una += 1;
            cc.on_ecn_ack(s, 1, i < marked, 0);
        }
        assert_eq!(s.snd_una, end);
    }

    fn started() -> (Dctcp, SocketState) {
        let mut cc = Dctcp::new(None);
        let mut s = SocketState::new(10.0, 5.0, 10_000);
        s.snd_nxt = 10;
        cc.on_ecn_ack(&s, 0, false, 0); // the first ACK opens the first window
        (cc, s)
    }

    #[test]
    fn alpha_starts_at_one_so_the_first_marks_halve_the_window() {
        let (mut cc, s) = started();
        assert_eq!(cc.alpha, 1.0);
        assert_eq!(cc.on_ecn_echo(&s, 0), 5.0);
    }

    #[test]
    fn alpha_moves_a_sixteenth_of_the_way_to_the_marked_fraction_once_per_window() {
        let (mut cc, mut s) = started();
        window(&mut cc, &mut s, 10, 5);
        assert!((cc.alpha - (15.0 / 16.0 + 0.5 / 16.0)).abs() < 1e-12, "{}", cc.alpha);
        assert_eq!(cc.updates, 1, "one update per window, not per ACK");
    }

    #[test]
    fn alpha_converges_to_a_steady_marked_fraction() {
        let (mut cc, mut s) = started();
        for _ in 0..300 {
            window(&mut cc, &mut s, 20, 5);
        }
        assert!((cc.alpha - 0.25).abs() < 1e-6, "{}", cc.alpha);
        // With α = 1/4 a mark takes an eighth of the window, not half.
        s.cwnd = 80.0;
        assert!((cc.on_ecn_echo(&s, 0) - 70.0).abs() < 1e-4);
    }

    #[test]
    fn without_marks_alpha_decays_towards_zero_and_a_reduction_keeps_at_least_two_segments() {
        let (mut cc, mut s) = started();
        for _ in 0..400 {
            window(&mut cc, &mut s, 10, 0);
        }
        assert!(cc.alpha < 1e-10);
        s.cwnd = 2.0;
        cc.alpha = 1.0;
        assert_eq!(cc.on_ecn_echo(&s, 0), 2.0);
    }

    #[test]
    fn a_loss_halves_the_window_as_standard_tcp() {
        let (mut cc, mut s) = started();
        for _ in 0..100 {
            window(&mut cc, &mut s, 10, 0);
        }
        s.cwnd = 40.0;
        assert_eq!(cc.ssthresh(&s, 0), 20.0, "RFC 8257 §3.4, not α");
    }
}
