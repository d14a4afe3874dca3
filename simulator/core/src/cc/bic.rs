//! BIC TCP (Xu, Harfoush & Rhee, "Binary Increase Congestion Control for Fast, Long Distance
//! Networks", IEEE INFOCOM 2004, §III), with ns-3.44's `TcpBic` defaults (Linux's
//! tcp_bic.c): after a loss the window searches for the last maximum W_max by closing a fixed
//! fraction of the distance each round trip (binary search increase, §III-A; the paper
//! halves it), no faster than S_max per round trip (additive increase), slowly near W_max,
//! and past it probes for a new maximum the same way in reverse (max probing). Below a low
//! window it is Standard TCP.
//!
//! Per round trip, with B the binary-search coefficient and w the window (segments):
//! - w < W_max: the step is d = (W_max − w)/B, at most S_max, and B/smooth_part (0.8) once
//!   d ≤ 1 (ns-3's smoothed search; the paper's S_min jump straight to W_max is not used);
//! - W_max ≤ w < W_max + B: B/smooth_part; then (w − W_max)/(B − 1), at most S_max;
//! - before the first loss (W_max = 0) at least 5 % of the window (Linux, ns-3).
//!
//! Choices:
//! - The defaults are ns-3's (and Linux's): β = 0.8, B = 4 (the paper halves the distance,
//!   B = 2), S_max = 16, low window 14, smooth part 5, fast convergence on with W_max = β·w
//!   when the window fell short of the last W_max (the paper's §III-C sets it to the midpoint
//!   of W_max and the new window). The paper's β is 0.125, the fraction taken off: 0.875 kept.
//! - The step is added as step/w per ACK, a real window; ns-3 counts ACKs and adds one whole
//!   segment after w/step + 1 of them.
//! - ns-3 reduces from its integer window; tcpsim from the window in use. Below the low
//!   window the window is halved (ns-3 halves bytes in flight there).
//! - RFC 5681 slow start; SACK (RFC 6675) recovery, NewReno with `sack: false`.

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// The window a loss leaves, as a fraction of the window (ns-3 `Beta`).
pub const BETA: f64 = 0.8;
/// The binary-search coefficient: each round trip closes 1/B of the distance (ns-3 `B`).
pub const B: f64 = 4.0;
/// S_max: the largest step, segments per round trip (ns-3 `MaxIncr`).
pub const MAX_INCREMENT: f64 = 16.0;
/// Below this window (segments) BIC is Standard TCP (ns-3 `LowWnd`).
pub const LOW_WINDOW: f64 = 14.0;
/// Round trips to cover the last B segments to W_max (ns-3 `SmoothPart`).
pub const SMOOTH_PART: f64 = 5.0;

/// Segments per round trip the window grows by at window `w`, with the last maximum `w_max`
/// (0 before the first loss).
pub fn step(w: f64, w_max: f64) -> f64 {
    if w < LOW_WINDOW {
        return 1.0;
    }
    let step = if w < w_max {
        let distance = (w_max - w) / B;
        if distance > MAX_INCREMENT {
            MAX_INCREMENT // additive increase
        } else if distance <= 1.0 {
            B / SMOOTH_PART // close to W_max: slowly
        } else {
            distance // binary search
        }
    } else if w < w_max + B {
        B / SMOOTH_PART
    } else if w < w_max + MAX_INCREMENT * (B - 1.0) {
        (w - w_max) / (B - 1.0) // max probing, the binary search in reverse
    } else {
        MAX_INCREMENT
    };
    if w_max == 0.0 {
        step.max(w / 20.0) // no loss yet: at least 5 % a round trip
    } else {
        step
    }
}

pub struct Bic {
    recovery: Recovery,
    /// W_max, segments: the window where the last loss struck (lowered by fast convergence);
    /// 0 before the first.
    w_max: f64,
}

impl Bic {
    pub fn new(sack: Option<bool>) -> Self {
        Bic {
            recovery: aimd::sack_or_newreno(sack),
            w_max: 0.0,
        }
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        aimd::increase_by(s, step(s.cwnd, self.w_max));
    }

    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        let w = s.window_in_use();
        // Fast convergence: a flow that fell short of its last maximum gives some of it up.
        self.w_max = if w < self.w_max { BETA * w } else { w };
        let keep = if w < LOW_WINDOW { 0.5 } else { BETA };
        (w * keep).max(2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_below_w_max_the_window_grows_s_max_a_round_trip_and_halves_the_distance_near_it() {
        assert_eq!(step(100.0, 300.0), 16.0, "(300 − 100)/4 = 50 > S_max");
        assert_eq!(step(260.0, 300.0), 10.0, "(300 − 260)/4");
        assert_eq!(step(298.0, 300.0), 0.8, "d ≤ 1: B/smooth_part");
    }

    #[test]
    fn past_w_max_it_probes_slowly_then_faster_up_to_s_max() {
        assert_eq!(step(302.0, 300.0), 0.8);
        assert_eq!(step(330.0, 300.0), 10.0, "(330 − 300)/3");
        assert_eq!(step(400.0, 300.0), 16.0);
    }

    #[test]
    fn below_the_low_window_it_is_standard_tcp() {
        assert_eq!(step(10.0, 300.0), 1.0);
        let mut cc = Bic::new(None);
        let s = SocketState::new(10.0, 5.0, 1000);
        assert_eq!(cc.ssthresh(&s, 0), 5.0);
    }

    #[test]
    fn a_loss_keeps_eight_tenths_and_fast_convergence_lowers_w_max() {
        let mut cc = Bic::new(None);
        assert!((cc.ssthresh(&SocketState::new(100.0, 50.0, 1000), 0) - 80.0).abs() < 1e-9);
        assert_eq!(cc.w_max, 100.0);
        cc.ssthresh(&SocketState::new(90.0, 50.0, 1000), 0);
        assert!((cc.w_max - 72.0).abs() < 1e-9, "0.8 · 90: {}", cc.w_max);
    }

    #[test]
    fn the_binary_search_reaches_w_max_in_a_few_round_trips_and_then_slows() {
        let mut cc = Bic::new(None);
        cc.w_max = 200.0;
        let mut s = SocketState::new(160.0, 160.0, 100_000);
        let mut per_rtt = Vec::new();
        for _ in 0..6 {
            let before = s.cwnd;
            for _ in 0..s.cwnd.floor() as u32 {
                cc.on_ack(&mut s, 1, 0);
            }
            per_rtt.push(s.cwnd - before);
        }
        // A quarter of the distance per round trip, recomputed on every ACK: the distance
        // shrinks by e^(−1/4) a round trip, so steps of 40·(1 − e^(−1/4)) = 8.8, then each
        // 0.78 of the last.
        let shrink = (-0.25f64).exp();
        assert!((per_rtt[0] - 40.0 * (1.0 - shrink)).abs() < 0.3, "{per_rtt:?}");
        for w in per_rtt.windows(2) {
            assert!((w[1] / w[0] - shrink).abs() < 0.02, "{per_rtt:?}");
        }
        assert!(s.cwnd < 200.0, "{}", s.cwnd);
    }
}
