//! TCP-Illinois (Liu, Başar & Srikant, "TCP-Illinois: A Loss and Delay-Based Congestion
//! Control Algorithm for High-Speed Networks", VALUETOOLS 2006, §3): loss decides *when* the
//! window shrinks, queueing delay *how much* it grows and shrinks. Each ACK in congestion
//! avoidance adds α/w and a loss takes β·w away, with α = f1(d_a) and β = f2(d_a) of the
//! average queueing delay d_a of the last round trip, against the largest d_m seen:
//! - α = α_max while d_a ≤ d1 = d_m/100, else κ1/(κ2 + d_a), falling to α_min at d_m (§3.1);
//!   α returns to α_max only after d_a stays at or below d1 for θ = 5 round trips;
//! - β = β_min while d_a ≤ d2 = d_m/10, rising linearly to β_max at d3 = 0.8·d_m (§3.2).
//!
//! Defaults are ns-3.44's `TcpIllinois` (and Linux's tcp_illinois.c): α_min 0.3, α_max 10,
//! β_min 1/8, β_max 1/2, and below a window of 15 segments α = 1 and β = ½ (Standard TCP).
//!
//! Choices:
//! - Queueing delay is the RTT above the lowest RTT seen; d_a is the mean of the last round's
//!   samples and d_m the largest over the connection, as ns-3 and Linux keep them.
//! - α and β are recomputed once a round (when the segment sent at its start is
//!   acknowledged); before any delay has been seen above d1, α is α_max at once (ns-3, Linux).
//! - After a timeout α = 1 and β = ½ until the next round's measurements (ns-3's `CA_LOSS`).
//! - The increase is α/w per ACK; ns-3 counts ACKs to whole segments. RFC 5681 slow start;
//!   SACK (RFC 6675) recovery, NewReno with `sack: false`.

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

pub const ALPHA_MIN: f64 = 0.3;
pub const ALPHA_MAX: f64 = 10.0;
/// α and β below the window threshold, and after a timeout.
pub const ALPHA_BASE: f64 = 1.0;
pub const BETA_MIN: f64 = 0.125;
pub const BETA_MAX: f64 = 0.5;
pub const BETA_BASE: f64 = 0.5;
/// Segments: below this window Illinois is Standard TCP (ns-3 `WinThresh`).
pub const WINDOW_THRESHOLD: f64 = 15.0;
/// Round trips d_a must stay at or below d1 before α returns to α_max (ns-3 `Theta`).
pub const THETA: u32 = 5;

/// §3.1, f1: α at average queueing delay `da` with the largest `dm` (any unit). (The θ-round
/// wait before α_max comes back is `Illinois::update`'s.)
pub fn alpha(da: f64, dm: f64) -> f64 {
    let d1 = dm / 100.0;
    if da <= d1 {
        return ALPHA_MAX;
    }
    // κ1/(κ2 + d_a) through (d1, α_max) and (d_m, α_min).
    let (dm, da) = (dm - d1, da - d1);
    dm * ALPHA_MAX / (dm + da * (ALPHA_MAX - ALPHA_MIN) / ALPHA_MIN)
}

/// §3.2, f2: β at average queueing delay `da` with the largest `dm`.
pub fn beta(da: f64, dm: f64) -> f64 {
    let (d2, d3) = (dm / 10.0, 0.8 * dm);
    if da <= d2 {
        BETA_MIN
    } else if da < d3 {
        BETA_MIN + (BETA_MAX - BETA_MIN) * (da - d2) / (d3 - d2)
    } else {
        BETA_MAX
    }
}

pub struct Illinois {
    recovery: Recovery,
    alpha: f64,
    beta: f64,
    /// The lowest and the largest RTT seen, nanoseconds.
    base_rtt: Option<SimTime>,
    max_rtt: SimTime,
    /// The round's RTT samples: their sum (ns) and count.
    sum_rtt: u128,
    count_rtt: u64,
    /// The round ends when this segment is acknowledged.
    round_end: u32,
    /// The delay has been above d1 since α was last at α_max.
    rtt_above: bool,
    /// Rounds in a row with d_a ≤ d1.
    rtt_low: u32,
}

impl Illinois {
    pub fn new(sack: Option<bool>) -> Self {
        Illinois {
            recovery: aimd::sack_or_newreno(sack),
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            base_rtt: None,
            max_rtt: 0,
            sum_rtt: 0,
            count_rtt: 0,
            round_end: 0,
            rtt_above: false,
            rtt_low: 0,
        }
    }

    /// Once a round: α and β from its delays.
    fn update(&mut self, cwnd: f64) {
        if cwnd < WINDOW_THRESHOLD {
            (self.alpha, self.beta) = (ALPHA_BASE, BETA_BASE);
            return;
        }
        let Some(base) = self.base_rtt.filter(|_| self.count_rtt > 0) else {
            return;
        };
        let dm = self.max_rtt.saturating_sub(base) as f64;
        let da = (self.sum_rtt / self.count_rtt as u128) as f64 - base as f64;
        if da <= dm / 100.0 {
            self.rtt_low += 1;
            if !self.rtt_above || self.rtt_low >= THETA {
                (self.alpha, self.rtt_above, self.rtt_low) = (ALPHA_MAX, false, 0);
            }
        } else {
            self.rtt_above = true;
            self.alpha = alpha(da, dm);
        }
        self.beta = beta(da, dm);
    }
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_rtt_sample(&mut self, _s: &SocketState, rtt: SimTime, _now: SimTime) {
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.max_rtt = self.max_rtt.max(rtt);
        self.sum_rtt += rtt as u128;
        self.count_rtt += 1;
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        if s.snd_una >= self.round_end {
            self.update(s.cwnd);
            self.round_end = s.snd_nxt;
            (self.sum_rtt, self.count_rtt) = (0, 0);
        }
        aimd::increase_by(s, self.alpha);
    }

    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        ((1.0 - self.beta) * s.window_in_use()).max(2.0)
    }

    fn on_timeout(&mut self, s: &mut SocketState, _now: SimTime) {
        (self.alpha, self.beta, self.rtt_low, self.rtt_above) = (ALPHA_BASE, BETA_BASE, 0, false);
        self.round_end = s.snd_nxt;
        (self.sum_rtt, self.count_rtt) = (0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_falls_from_ten_at_a_hundredth_of_the_largest_delay_to_three_tenths_at_it() {
        assert_eq!(alpha(0.5, 100.0), ALPHA_MAX);
        assert!((alpha(1.0, 100.0) - ALPHA_MAX).abs() < 1e-12);
        assert!((alpha(100.0, 100.0) - ALPHA_MIN).abs() < 1e-12);
        let mid = alpha(10.0, 100.0);
        assert!(mid < 3.0 && mid > ALPHA_MIN, "{mid}");
    }

    #[test]
    fn beta_is_an_eighth_below_a_tenth_of_the_largest_delay_and_a_half_from_eight_tenths() {
        assert_eq!(beta(5.0, 100.0), BETA_MIN);
        assert_eq!(beta(80.0, 100.0), BETA_MAX);
        assert!((beta(45.0, 100.0) - (0.125 + 0.375 * 0.5)).abs() < 1e-12);
    }

    const MS: SimTime = 1_000_000;

    /// Illinois at window `cwnd` after a round with RTTs of 100 ms and `max_ms`, and one with
    /// samples at `rtt_ms`.
    fn after_round(cwnd: f64, max_ms: u64, rtt_ms: u64) -> (Illinois, SocketState) {
        let mut cc = Illinois::new(None);
        let mut s = SocketState::new(cwnd, 1.0, 10_000);
        cc.on_rtt_sample(&s, 100 * MS, 0);
        cc.on_rtt_sample(&s, max_ms * MS, 0);
        s.snd_nxt = 10;
        cc.on_ack(&mut s, 1, 0); // the first round ends
        cc.on_rtt_sample(&s, rtt_ms * MS, 0);
        s.snd_una = 10;
        s.snd_nxt = 20;
        cc.on_ack(&mut s, 1, 0);
        (cc, s)
    }

    #[test]
    fn with_no_queueing_a_loss_takes_an_eighth_and_the_window_grows_ten_a_round_trip() {
        let (mut cc, s) = after_round(100.0, 100, 100);
        assert_eq!((cc.alpha, cc.beta), (ALPHA_MAX, BETA_MIN));
        assert!((cc.ssthresh(&s, 0) - 0.875 * s.cwnd).abs() < 1e-9);
        let (mut s, before) = (s.clone(), s.cwnd);
        cc.on_ack(&mut s, 1, 0);
        assert!(
            (s.cwnd - before - 10.0 / before).abs() < 1e-12,
            "α/w: {before} -> {}",
            s.cwnd
        );
    }

    #[test]
    fn with_a_long_queue_a_loss_halves_and_the_window_grows_slowly() {
        let (mut cc, s) = after_round(100.0, 200, 190);
        assert!(cc.alpha < 0.5, "{}", cc.alpha);
        assert_eq!(cc.beta, BETA_MAX);
        assert!((cc.ssthresh(&s, 0) - 0.5 * s.cwnd).abs() < 1e-9);
    }

    #[test]
    fn below_fifteen_segments_it_is_standard_tcp() {
        let (cc, _) = after_round(10.0, 200, 100);
        assert_eq!((cc.alpha, cc.beta), (ALPHA_BASE, BETA_BASE));
    }

    #[test]
    fn alpha_returns_to_its_maximum_only_after_theta_low_delay_rounds() {
        let (mut cc, mut s) = after_round(100.0, 200, 190);
        for round in 1..=THETA {
            cc.on_rtt_sample(&s, 100 * MS, 0);
            s.snd_una = s.snd_nxt;
            s.snd_nxt += 10;
            cc.on_ack(&mut s, 1, 0);
            assert_eq!(cc.alpha == ALPHA_MAX, round == THETA, "round {round}: {}", cc.alpha);
        }
    }
}
