//! One transmitter's distributed coordination function (IEEE 802.11-2016 §10.3.3–10.3.4): its
//! contention window, its backoff counter, and when the counter may run. The medium decides
//! when the air is idle; this only keeps the counts.

use super::phy::Phy;
use crate::rng::SimRng;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dcf {
    /// The contention window, CWmin ≤ cw ≤ CWmax.
    pub cw: u32,
    /// Failed attempts of the frame at the head of the queue (its retry count: the frame is
    /// dropped when it reaches the retry limit).
    pub failures: u32,
    /// The station short retry count that sets the window (SSRC, QSRC in 802.11-2020): the
    /// frame's retry count, unless `reset_on_drop` is off.
    src: u32,
    /// The window resets when a frame is dropped (802.11-2016 §10.3.3: "when SSRC reaches
    /// dot11ShortRetryLimit"); off, it keeps its last value for the next frame's backoff and
    /// resets at that frame's first failure (802.11-2020 §10.23.2.2 read literally, as ns-3.44's
    /// `Txop::UpdateFailedCw`).
    reset_on_drop: bool,
    /// Backoff slots left, as of `counting_from`.
    pub backoff: u32,
    /// When the counter (re)starts: the end of the last busy period plus the interframe space
    /// this transmitter must wait (DIFS, EIFS, or DIFS after its ACK timeout). The counter
    /// stands still until then, and while the air is busy (frozen, §10.3.4.3).
    pub counting_from: SimTime,
}

impl Dcf {
    pub fn new(phy: &Phy, reset_on_drop: bool) -> Self {
        Dcf {
            cw: phy.cw_min,
            failures: 0,
            src: 0,
            reset_on_drop,
            backoff: 0,
            counting_from: 0,
        }
    }

    /// A new backoff, uniform over [0, cw] slots.
    pub fn draw(&mut self, rng: &mut SimRng) {
        self.backoff = ((rng.uniform() * (self.cw as f64 + 1.0)) as u32).min(self.cw);
    }

    /// When the counter reaches zero if the air stays idle.
    pub fn ready_at(&self, slot: SimTime) -> SimTime {
        self.counting_from + self.backoff as SimTime * slot
    }

    /// The air turns busy at `at`: the whole idle slots since `counting_from` are spent.
    pub fn freeze(&mut self, at: SimTime, slot: SimTime) {
        if at > self.counting_from {
            let spent = (at - self.counting_from) / slot;
            self.backoff -= spent.min(self.backoff as SimTime) as u32;
        }
    }

    /// The head frame was acknowledged: the window resets (§10.3.3), a new backoff follows
    /// (post-backoff, even with nothing to send).
    pub fn on_success(&mut self, phy: &Phy, rng: &mut SimRng) {
        self.failures = 0;
        self.src = 0;
        self.cw = phy.cw_min;
        self.draw(rng);
    }

    /// The head frame failed (no ACK): the window doubles (or, with the retry count already
    /// at the limit, resets), and at the retry limit (the most attempts a frame gets,
    /// dot11ShortRetryLimit) the frame is given up. True when the frame is to be dropped.
    pub fn on_failure(&mut self, phy: &Phy, retry_limit: u32, rng: &mut SimRng) -> bool {
        self.failures += 1;
        if self.src < retry_limit {
            self.src += 1;
            self.cw = phy.cw_after(self.src);
        } else {
            self.src = 0;
            self.cw = phy.cw_min;
        }
        let dropped = self.failures >= retry_limit;
        if dropped {
            self.failures = 0;
            if self.reset_on_drop {
                self.src = 0;
                self.cw = phy.cw_min;
            }
        }
        self.draw(rng);
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::wifi::phy::Standard;
    use crate::rng::StreamId;

    #[test]
    fn each_failure_doubles_the_window_until_the_retry_limit_resets_it() {
        let phy = Phy::new(Standard::B, 11_000, false).unwrap();
        let mut rng = SimRng::new(1, StreamId::Wifi(0));
        let mut d = Dcf::new(&phy, true);
        let mut windows = vec![d.cw];
        let mut drops = Vec::new();
        for _ in 0..7 {
            drops.push(d.on_failure(&phy, 7, &mut rng));
            windows.push(d.cw);
            assert!(d.backoff <= d.cw);
        }
        assert_eq!(windows, [31, 63, 127, 255, 511, 1023, 1023, 31]);
        assert_eq!(
            drops,
            [false, false, false, false, false, false, true],
            "7 attempts in all"
        );
        d.on_failure(&phy, 7, &mut rng);
        d.on_success(&phy, &mut rng);
        assert_eq!((d.cw, d.failures), (31, 0));
    }

    #[test]
    fn without_a_reset_on_drop_the_next_frame_backs_off_from_cwmax_and_its_first_failure_resets() {
        let phy = Phy::new(Standard::G, 54_000, true).unwrap();
        let mut rng = SimRng::new(2, StreamId::Wifi(0));
        let mut d = Dcf::new(&phy, false);
        let drops: Vec<bool> = (0..7).map(|_| d.on_failure(&phy, 7, &mut rng)).collect();
        assert_eq!(drops.iter().filter(|&&x| x).count(), 1);
        assert_eq!((d.cw, d.failures), (1023, 0), "kept for the next frame's backoff");
        d.on_failure(&phy, 7, &mut rng);
        assert_eq!((d.cw, d.failures), (15, 1), "its first failure resets the window");
        let later: Vec<u32> = (0..6)
            .map(|_| {
                d.on_failure(&phy, 7, &mut rng);
                d.cw
            })
            .collect();
        assert_eq!(
            later,
            [31, 63, 127, 255, 511, 1023],
            "and it is dropped after 7 attempts too"
        );
        assert_eq!(d.failures, 0);
    }

    #[test]
    fn the_mean_backoff_doubles_with_the_window() {
        let phy = Phy::new(Standard::G, 54_000, true).unwrap();
        let mut rng = SimRng::new(3, StreamId::Wifi(0));
        let mean_after = |k: u32, rng: &mut SimRng| {
            let n = 40_000;
            let mut sum = 0u64;
            for _ in 0..n {
                let mut d = Dcf::new(&phy, true);
                for _ in 0..k {
                    d.on_failure(&phy, 100, rng);
                }
                sum += d.backoff as u64;
            }
            sum as f64 / n as f64
        };
        // Uniform over [0, CW]: mean CW/2 = 15.5, 31.5, 63.5 after 1, 2, 3 failures.
        for (k, want) in [(1u32, 15.5), (2, 31.5), (3, 63.5)] {
            let got = mean_after(k, &mut rng);
            assert!(
                (got - want).abs() < 0.02 * want + 0.2,
                "after {k} failures: {got}, want {want}"
            );
        }
    }

    #[test]
    fn a_busy_air_spends_only_whole_idle_slots() {
        let phy = Phy::new(Standard::G, 54_000, true).unwrap();
        let mut d = Dcf::new(&phy, true);
        d.backoff = 10;
        d.counting_from = 1_000;
        d.freeze(500, phy.slot);
        assert_eq!(d.backoff, 10, "busy again before counting started");
        d.freeze(1_000 + 3 * phy.slot + phy.slot / 2, phy.slot);
        assert_eq!(d.backoff, 7);
        d.counting_from = 0;
        d.freeze(100 * phy.slot, phy.slot);
        assert_eq!(d.backoff, 0);
    }
}
