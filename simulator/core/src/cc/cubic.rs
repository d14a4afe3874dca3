//! CUBIC (RFC 9438): after a reduction the window follows W_cubic(t) = C·(t − K)³ + W_max
//! (§4.1, eq. 1) in the time t since congestion avoidance began, concave below W_max and
//! convex above it, and never grows slower than Reno would (the Reno-friendly region, §4.3).
//! The window is recomputed on every ACK from `now`; nothing else in tcpsim moves for it.
//!
//! Choices where the RFC leaves room:
//! - Slow start is RFC 5681's, one segment per ACK as the other variants; **no HyStart** nor
//!   HyStart++ (§4.10 makes them optional). ns-3's `TcpCubic` runs HyStart by default: turn it
//!   off there (`ns3::TcpCubic::HyStart false`) for a like-for-like comparison.
//! - Loss recovery is RFC 6675 SACK recovery (as Linux and ns-3 run CUBIC), or RFC 6582
//!   NewReno (Slow-but-Steady) when the scenario turns `sack` off.
//! - The reduction multiplies the window in use (cwnd without fast recovery's inflation), as
//!   Linux does, rather than FlightSize (§4.6 allows either).
//! - Per ACK, not per segment acknowledged, for the cubic increment, as §4.4–4.5 say; W_est
//!   grows by segments acknowledged (§4.3). Fast convergence (§4.7) is on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::{to_secs, SimTime};

/// CUBIC's two knobs, a flow's `tcp.cubic` (`{"c": 0.4, "beta": 0.7}`); the defaults are the
/// RFC's, which Linux's tcp_cubic.c and ns-3's `TcpCubic` also use.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CubicParams {
    /// C, in segments per second cubed: how fast the window grows away from W_max (§4.1.1
    /// defines it; §5.1 sets it to 0.4).
    pub c: f64,
    /// β_cubic, the multiplicative decrease factor, in (0, 1): the window keeps this share at
    /// a congestion event (§4.6: 0.7).
    pub beta: f64,
    /// How the Reno-friendly estimate W_est grows (§4.3).
    pub reno_friendly: RenoFriendly,
}

/// The additive increase of CUBIC's Reno-friendly estimate W_est (RFC 9438 §4.3).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RenoFriendly {
    /// α_cubic per round trip until W_est reaches cwnd_prior, then 1, so the flow grows as
    /// fast as Reno beyond the last congestion event (§4.3's SHOULD, new in RFC 9438).
    Rfc9438,
    /// α_cubic throughout, as RFC 8312 had it and as Linux's tcp_cubic.c (`bictcp_update`:
    /// `tcp_cwnd` one segment per `cwnd·beta_scale/8` ACKs) and ns-3.44's `TcpCubic::Update`
    /// (the same count, `m_tcpCwnd`) still do.
    Linux,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            reno_friendly: RenoFriendly::Rfc9438,
        }
    }
}

impl CubicParams {
    /// §4.3: α_cubic = 3(1 − β)/(1 + β), Reno-friendly additive increase per RTT while W_est
    /// is below the window of the last congestion event; 0.529 for β = 0.7.
    pub fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }

    /// §4.1 eq. 1: the window `t` seconds into a congestion-avoidance stage, in segments.
    pub fn w_cubic(&self, t: f64, k: f64, w_max: f64) -> f64 {
        self.c * (t - k).powi(3) + w_max
    }

    /// §4.1 eq. 2: seconds the window takes to grow from `cwnd_epoch` back to `w_max`.
    pub fn k(&self, w_max: f64, cwnd_epoch: f64) -> f64 {
        ((w_max - cwnd_epoch).max(0.0) / self.c).cbrt()
    }
}

pub struct Cubic {
    recovery: Recovery,
    params: CubicParams,
    /// α_cubic from `params.beta` (§4.3), computed once.
    alpha: f64,
    /// W_max, segments: the window just before the last reduction (lowered by fast
    /// convergence), or the window when the stage began when there is none (§4.8, §4.10).
    w_max: f64,
    /// cwnd_prior, segments: the window when the last congestion event struck (§4.6).
    cwnd_prior: f64,
    /// K, seconds (§4.1 eq. 2), set when the stage begins.
    k: f64,
    /// When the current congestion-avoidance stage began: the first ACK in congestion
    /// avoidance after a reduction. None between a reduction and that ACK.
    epoch_start: Option<SimTime>,
    /// W_est, segments: the window Reno would have reached in this stage (§4.3).
    w_est: f64,
    /// No loss since the stage began (first slow start) or it began after a timeout: the
    /// stage starts with K = 0 and W_max = cwnd_epoch (§4.8, §4.10).
    restart_from_epoch: bool,
}

impl Cubic {
    /// `sack` is the flow's `tcp.sack`: off, recovery is NewReno's.
    pub fn new(params: &CubicParams, sack: Option<bool>) -> Self {
        let recovery = super::aimd::sack_or_newreno(sack);
        Cubic {
            recovery,
            params: params.clone(),
            alpha: params.alpha(),
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            epoch_start: None,
            w_est: 0.0,
            restart_from_epoch: true,
        }
    }

    /// §4.2: the stage begins with the window it starts from, cwnd_epoch.
    fn begin_stage(&mut self, cwnd: f64, now: SimTime) -> SimTime {
        if self.restart_from_epoch {
            self.w_max = cwnd;
            self.restart_from_epoch = false;
        }
        self.k = self.params.k(self.w_max, cwnd);
        self.w_est = cwnd; // §4.3: W_est = cwnd_epoch
        self.epoch_start = Some(now);
        now
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_ack(&mut self, s: &mut SocketState, acked: u32, now: SimTime) {
        if s.in_slow_start() {
            aimd::increase(s);
            return;
        }
        let start = match self.epoch_start {
            Some(t) => t,
            None => self.begin_stage(s.cwnd, now),
        };
        let t = to_secs(now.saturating_sub(start));
        // §4.3: α_cubic until W_est reaches the window of the last congestion event, then 1
        // (`RenoFriendly::Linux`: α_cubic throughout).
        let past_prior = self.w_est >= self.cwnd_prior && self.params.reno_friendly == RenoFriendly::Rfc9438;
        let alpha = if past_prior { 1.0 } else { self.alpha };
        self.w_est += alpha * acked as f64 / s.cwnd;
        if self.params.w_cubic(t, self.k, self.w_max) < self.w_est {
            // §4.3, Reno-friendly region: follow Reno's estimate.
            s.cwnd = s.cwnd.max(self.w_est);
        } else {
            // §4.2: aim at where the curve is one RTT ahead, between cwnd and 1.5·cwnd; §4.4
            // (concave, below W_max) and §4.5 (convex, above it) then add
            // (target − cwnd)/cwnd per ACK.
            let rtt = s.srtt.or(s.min_rtt).map_or(0.0, to_secs);
            let target = self
                .params
                .w_cubic(t + rtt, self.k, self.w_max)
                .clamp(s.cwnd, 1.5 * s.cwnd);
            s.cwnd += (target - s.cwnd) / s.cwnd;
        }
        s.cwnd = s.cwnd.min(s.max_window as f64);
    }

    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        let cwnd = s.window_in_use();
        let beta = self.params.beta;
        // §4.7, fast convergence: a flow whose window fell short of the last W_max releases
        // bandwidth by remembering a lower saturation point.
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + beta) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd; // §4.6
        self.epoch_start = None;
        self.restart_from_epoch = false;
        (cwnd * beta).max(2.0) // §4.6: ssthresh = cwnd·β_cubic, at least 2 segments
    }

    fn on_timeout(&mut self, _s: &mut SocketState, _now: SimTime) {
        // §4.8: cwnd went to one segment (RFC 5681) and ssthresh to β_cubic of the window
        // (`ssthresh` above); the next congestion-avoidance stage starts with K = 0, W_max and
        // W_est at the window it begins with.
        self.epoch_start = None;
        self.restart_from_epoch = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    fn beta(beta: f64) -> CubicParams {
        CubicParams {
            beta,
            ..CubicParams::default()
        }
    }

    fn ca_state(cwnd: f64) -> SocketState {
        let mut s = SocketState::new(cwnd, cwnd, 100_000);
        s.srtt = Some(100 * MS);
        s
    }

    #[test]
    fn k_and_w_cubic_match_the_hand_computation() {
        // W_max = 100, cwnd_epoch = 70: K = ∛(100·0.3/0.4) = ∛75 = 4.2172 s.
        let p = CubicParams::default();
        let k = p.k(100.0, 70.0);
        assert!((k - 4.217_163).abs() < 1e-5, "{k}");
        assert!((p.w_cubic(0.0, k, 100.0) - 70.0).abs() < 1e-9, "starts at β·W_max");
        assert_eq!(p.w_cubic(k, k, 100.0), 100.0);
        assert!((p.w_cubic(k + 1.0, k, 100.0) - 100.4).abs() < 1e-9);
        assert!((p.w_cubic(k - 2.0, k, 100.0) - 96.8).abs() < 1e-9, "0.4·(−2)³ + 100");
        assert!((p.alpha() - 0.529_411_76).abs() < 1e-8);
        assert_eq!(p.k(50.0, 60.0), 0.0, "a stage starting above W_max has K = 0");
    }

    #[test]
    fn a_loss_sets_ssthresh_to_seven_tenths_and_w_max_to_the_window() {
        let mut cc = Cubic::new(&CubicParams::default(), None);
        let s = ca_state(100.0);
        assert!((cc.ssthresh(&s, 0) - 70.0).abs() < 1e-9);
        assert_eq!((cc.w_max, cc.cwnd_prior), (100.0, 100.0));
        assert!(
            (cc.ssthresh(&ca_state(2.0), 0) - 2.0).abs() < 1e-9,
            "at least two segments"
        );
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_window_fell_short_of_it() {
        let mut cc = Cubic::new(&CubicParams::default(), None);
        cc.ssthresh(&ca_state(100.0), 0);
        cc.ssthresh(&ca_state(80.0), 0);
        assert!(
            (cc.w_max - 68.0).abs() < 1e-9,
            "80·(1 + 0.7)/2 = 68, not 80: {}",
            cc.w_max
        );
        assert_eq!(cc.cwnd_prior, 80.0);
    }

    /// Drives congestion avoidance with one ACK per segment, RTT 100 ms, from `cwnd`.
    fn grow(cc: &mut Cubic, s: &mut SocketState, from: SimTime, seconds: f64) -> SimTime {
        let mut now = from;
        let end = from + (seconds * 1e9) as SimTime;
        while now < end {
            let acks = s.cwnd.floor() as u64;
            for i in 0..acks {
                cc.on_ack(s, 1, now + i * 100 * MS / acks);
            }
            now += 100 * MS;
        }
        now
    }

    #[test]
    fn after_a_loss_the_window_is_concave_up_to_w_max_at_k_then_convex() {
        let mut cc = Cubic::new(&CubicParams::default(), None);
        let mut s = ca_state(1000.0);
        s.cwnd = cc.ssthresh(&s, 0);
        s.ssthresh = s.cwnd;
        let k = CubicParams::default().k(1000.0, 700.0); // ∛750 = 9.09 s; Reno-friendly growth is far slower here
        let now = grow(&mut cc, &mut s, 0, k / 2.0);
        let half = s.cwnd;
        let now = grow(&mut cc, &mut s, now, k / 2.0);
        let at_k = s.cwnd;
        let now = grow(&mut cc, &mut s, now, k / 2.0);
        let after = s.cwnd;
        grow(&mut cc, &mut s, now, k / 2.0);
        let later = s.cwnd;
        assert!(half - 700.0 > at_k - half, "concave: {half:.1} then {at_k:.1}");
        assert!(
            (at_k - 1000.0).abs() < 15.0,
            "W_max is reached about K after the loss: {at_k:.1}"
        );
        assert!(later - after > after - at_k, "convex: {after:.1} then {later:.1}");
    }

    #[test]
    fn with_a_small_window_the_reno_friendly_estimate_drives_growth() {
        let mut cc = Cubic::new(&CubicParams::default(), None);
        let mut s = ca_state(20.0);
        s.cwnd = cc.ssthresh(&s, 0); // 14; K = ∛15 = 2.47 s
        s.ssthresh = s.cwnd;
        let now = grow(&mut cc, &mut s, 0, 1.0); // ten round trips
                                                 // W_est: 14 + 10·0.53 ≈ 19.3, where W_cubic(1 s) = 20 − 0.4·1.47³ ≈ 18.7.
        assert!((18.8..19.8).contains(&s.cwnd), "{}", s.cwnd);
        // Once W_est passes cwnd_prior = 20 it grows Reno's one segment per round trip.
        let before = s.cwnd;
        grow(&mut cc, &mut s, now, 0.5);
        assert!(
            s.cwnd - before > 4.0 * CubicParams::default().alpha() + 0.5,
            "{before} -> {}",
            s.cwnd
        );
    }

    #[test]
    fn as_linux_and_ns3_the_reno_friendly_estimate_keeps_alpha_cubic_past_the_last_congestion_window() {
        // From the loss at 20 (cwnd 14), one second, then half a second in which W_est passes
        // cwnd_prior = 20: the estimate's growth per round trip in that half second.
        let half_second = |reno_friendly| {
            let params = CubicParams {
                reno_friendly,
                ..CubicParams::default()
            };
            let mut cc = Cubic::new(&params, None);
            let mut s = ca_state(20.0);
            s.cwnd = cc.ssthresh(&s, 0);
            s.ssthresh = s.cwnd;
            let now = grow(&mut cc, &mut s, 0, 1.0);
            let est = cc.w_est;
            grow(&mut cc, &mut s, now, 0.5);
            (cc.w_est - est) / 5.0
        };
        let (linux, rfc) = (half_second(RenoFriendly::Linux), half_second(RenoFriendly::Rfc9438));
        let alpha = CubicParams::default().alpha();
        assert!((linux - alpha).abs() < 0.03, "Linux: {linux} per round");
        assert!(rfc > alpha + 0.2, "RFC 9438: {rfc} per round (1 past cwnd_prior)");
    }

    #[test]
    fn after_a_timeout_the_next_stage_starts_with_k_zero_at_its_own_window() {
        let mut cc = Cubic::new(&CubicParams::default(), None);
        let mut s = ca_state(100.0);
        s.ssthresh = cc.ssthresh(&s, 0);
        s.cwnd = 1.0;
        cc.on_timeout(&mut s, 0);
        s.cwnd = 70.0; // slow start reached ssthresh
        cc.on_ack(&mut s, 1, 0);
        assert_eq!((cc.k, cc.w_max), (0.0, 70.0));
    }

    #[test]
    fn slow_start_is_one_segment_per_ack() {
        let mut cc = Cubic::new(&CubicParams::default(), None);
        let mut s = SocketState::new(2.0, f64::INFINITY, 1000);
        cc.on_ack(&mut s, 1, 0);
        assert_eq!(s.cwnd, 3.0);
    }

    #[test]
    fn sack_off_recovers_as_newreno() {
        assert_eq!(Cubic::new(&CubicParams::default(), None).recovery(), Recovery::Sack);
        assert_eq!(
            Cubic::new(&CubicParams::default(), Some(false)).recovery(),
            Recovery::NewReno(crate::tcp::PartialAckTimer::EveryPartialAck)
        );
    }

    #[test]
    fn a_beta_of_one_half_halves_the_window_at_a_loss() {
        let mut cc = Cubic::new(&beta(0.5), None);
        assert!((cc.ssthresh(&ca_state(100.0), 0) - 50.0).abs() < 1e-9);
        cc.ssthresh(&ca_state(80.0), 0);
        assert!((cc.w_max - 60.0).abs() < 1e-9, "fast convergence: 80·(1 + 0.5)/2");
    }

    #[test]
    fn alpha_cubic_follows_the_configured_beta() {
        // §4.3: 3(1 − β)/(1 + β), 1 (Reno's) at β = 0.5.
        assert_eq!(beta(0.5).alpha(), 1.0);
        let cc = Cubic::new(&beta(0.8), None);
        assert!((cc.alpha - 0.6 / 1.8).abs() < 1e-12, "{}", cc.alpha);
    }

    #[test]
    fn a_larger_c_grows_the_window_back_to_w_max_sooner() {
        let after_two_seconds = |c: f64| {
            let mut cc = Cubic::new(
                &CubicParams {
                    c,
                    ..CubicParams::default()
                },
                None,
            );
            let mut s = ca_state(1000.0);
            s.cwnd = cc.ssthresh(&s, 0);
            s.ssthresh = s.cwnd;
            grow(&mut cc, &mut s, 0, 2.0);
            s.cwnd
        };
        let (default, steep) = (after_two_seconds(0.4), after_two_seconds(4.0));
        // K is ∛(300/0.4) = 9.1 s against ∛(300/4) = 4.2 s.
        assert!(steep > default + 50.0, "C 0.4: {default:.1}, C 4: {steep:.1}");
    }
}
