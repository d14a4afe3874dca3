//! H-TCP (Leith & Shorten, "H-TCP: TCP for high-speed and long-distance networks", PFLDnet
//! 2004): the increase grows with the time Δ since the last congestion event, and the
//! decrease adapts to the path's queueing.
//! - Increase, per ACK in congestion avoidance: α/w, with α(Δ) = 1 for Δ ≤ Δ_L = 1 s and
//!   1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)² beyond (Δ in seconds), scaled by 2(1 − β) so that a flow
//!   with a larger β is no more aggressive on average (α ← 2(1 − β)·α(Δ)).
//! - Decrease: w ← β·w with β = RTT_min/RTT_max, held in [0.5, 0.8]; β = 0.5 when the
//!   throughput of the last congestion epoch differs from the one before by more than 20 %
//!   (adaptive reset), and at the first congestion event (no epoch before it).
//!
//! Choices:
//! - RTT_min is the connection's (`SocketState::min_rtt`), RTT_max the largest sample since the
//!   last congestion event; throughput is segments acknowledged outside recovery over the
//!   epoch's length. ns-3's `TcpHtcp` takes both RTTs per epoch and checks only an increase
//!   of throughput.
//! - β is held in [0.5, 0.8] as the paper and Linux's tcp_htcp.c do; ns-3 does not clamp it.
//! - α is at least 1 (as ns-3), so below Δ_L the flow is Standard TCP whatever β. ns-3 adds
//!   α *bytes* per ACK beyond the 1/w segment (`(mss² + cwnd·α)/cwnd`), far less than the
//!   paper's α/w segments at its default 536-byte segments; tcpsim follows the paper. The
//!   paper's optional RTT scaling of α is off (as in ns-3).
//! - Δ counts from the first ACK before any congestion event (Linux: from the connection's
//!   start). RFC 5681 slow start; SACK (RFC 6675) recovery, NewReno with `sack: false`.

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::{to_secs, SimTime};

/// Δ_L, seconds: the low-speed period after a congestion event, Standard TCP's increase.
pub const DELTA_L: f64 = 1.0;
/// β before any adaptation, and after an adaptive reset.
pub const BETA_DEFAULT: f64 = 0.5;
/// The largest β: a loss keeps at most this fraction of the window.
pub const BETA_MAX: f64 = 0.8;
/// A change in throughput between epochs beyond this fraction resets β to 0.5.
pub const THROUGHPUT_RATIO: f64 = 0.2;

/// α(Δ) before the 2(1 − β) scaling, Δ in seconds since the last congestion event.
pub fn alpha_of_delta(delta: f64) -> f64 {
    if delta <= DELTA_L {
        1.0
    } else {
        let d = delta - DELTA_L;
        1.0 + 10.0 * d + (d / 2.0).powi(2)
    }
}

pub struct Htcp {
    recovery: Recovery,
    /// β, the fraction of the window the next loss keeps.
    beta: f64,
    /// When the current epoch began: the last congestion event, or the first ACK before any.
    epoch_start: Option<SimTime>,
    /// Segments acknowledged outside recovery in this epoch.
    acked: u64,
    /// Throughput of the previous epoch, segments per second.
    last_throughput: Option<f64>,
    /// The largest RTT sample since the last congestion event.
    max_rtt: Option<SimTime>,
}

impl Htcp {
    pub fn new(sack: Option<bool>) -> Self {
        Htcp {
            recovery: aimd::sack_or_newreno(sack),
            beta: BETA_DEFAULT,
            epoch_start: None,
            acked: 0,
            last_throughput: None,
            max_rtt: None,
        }
    }

    /// α for Δ seconds since the last congestion event: 2(1 − β)·α(Δ), at least 1.
    fn alpha(&self, delta: f64) -> f64 {
        (2.0 * (1.0 - self.beta) * alpha_of_delta(delta)).max(1.0)
    }

    /// β for the next epoch from this one's throughput and RTTs.
    fn adapt_beta(&self, throughput: Option<f64>, min_rtt: Option<SimTime>) -> f64 {
        let (Some(now), Some(last)) = (throughput, self.last_throughput) else {
            return BETA_DEFAULT;
        };
        if last <= 0.0 || ((now - last) / last).abs() > THROUGHPUT_RATIO {
            return BETA_DEFAULT; // adaptive reset
        }
        match (min_rtt, self.max_rtt) {
            (Some(min), Some(max)) if max > 0 => (min as f64 / max as f64).clamp(BETA_DEFAULT, BETA_MAX),
            _ => BETA_DEFAULT,
        }
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_rtt_sample(&mut self, _s: &SocketState, rtt: SimTime, _now: SimTime) {
        self.max_rtt = Some(self.max_rtt.map_or(rtt, |m| m.max(rtt)));
    }

    fn on_ack(&mut self, s: &mut SocketState, acked: u32, now: SimTime) {
        let start = *self.epoch_start.get_or_insert(now);
        self.acked += acked as u64;
        aimd::increase_by(s, self.alpha(to_secs(now.saturating_sub(start))));
    }

    fn ssthresh(&mut self, s: &SocketState, now: SimTime) -> f64 {
        let throughput = self.epoch_start.and_then(|start| {
            let seconds = to_secs(now.saturating_sub(start));
            (seconds > 0.0).then(|| self.acked as f64 / seconds)
        });
        self.beta = self.adapt_beta(throughput, s.min_rtt);
        self.last_throughput = throughput;
        self.epoch_start = Some(now);
        self.acked = 0;
        self.max_rtt = None;
        (self.beta * s.window_in_use()).max(2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    #[test]
    fn alpha_is_one_for_a_second_after_a_loss_then_grows_with_the_time_since() {
        assert_eq!(alpha_of_delta(0.5), 1.0);
        assert_eq!(alpha_of_delta(1.0), 1.0);
        assert!((alpha_of_delta(3.0) - 22.0).abs() < 1e-12, "1 + 10·2 + 1²");
        let mut cc = Htcp::new(None);
        cc.beta = 0.8;
        assert_eq!(cc.alpha(0.5), 1.0, "2(1 − 0.8)·1 = 0.4, held at 1");
        assert!((cc.alpha(3.0) - 8.8).abs() < 1e-9, "2(1 − 0.8)·22");
    }

    #[test]
    fn the_first_loss_halves_the_window() {
        let mut cc = Htcp::new(None);
        let mut s = SocketState::new(100.0, 50.0, 10_000);
        s.min_rtt = Some(100 * MS);
        cc.on_rtt_sample(&s, 100 * MS, 0);
        assert_eq!(cc.ssthresh(&s, 1_000 * MS), 50.0, "no epoch before to compare with");
    }

    /// β after two epochs of `acked` and then `acked2` segments in a second each, with RTTs
    /// from 100 ms to `max_rtt_ms` in the second.
    fn beta_after(acked: u32, acked2: u32, max_rtt_ms: u64) -> f64 {
        let mut cc = Htcp::new(None);
        let mut s = SocketState::new(100.0, 50.0, 10_000);
        s.min_rtt = Some(100 * MS);
        cc.on_ack(&mut s, acked, 0);
        cc.ssthresh(&s, 1_000 * MS);
        cc.on_rtt_sample(&s, 100 * MS, 1_100 * MS);
        cc.on_rtt_sample(&s, max_rtt_ms * MS, 1_200 * MS);
        cc.on_ack(&mut s, acked2, 1_300 * MS);
        cc.ssthresh(&s, 2_000 * MS);
        cc.beta
    }

    #[test]
    fn with_steady_throughput_beta_is_the_ratio_of_min_to_max_rtt_held_between_half_and_four_fifths() {
        assert!((beta_after(1000, 1100, 140) - 100.0 / 140.0).abs() < 1e-9);
        assert_eq!(beta_after(1000, 1100, 110), 0.8, "100/110 held at 0.8");
        assert_eq!(beta_after(1000, 1100, 300), 0.5, "100/300 held at 0.5");
    }

    #[test]
    fn a_throughput_change_of_more_than_a_fifth_resets_beta_to_half() {
        assert_eq!(beta_after(1000, 1300, 140), 0.5);
        assert_eq!(beta_after(1000, 700, 140), 0.5);
    }
}
