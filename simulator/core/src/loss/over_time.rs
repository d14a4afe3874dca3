//! Loss whose probability follows a schedule (issue 18): a fade, a handover's loss burst, and
//! the `outage` module (a window of constant loss) as a special case.

use crate::rng::SimRng;
use crate::scenario::ScheduleShape;
use crate::schedule::Schedule;
use crate::time::SimTime;

/// Loses each packet with the probability scheduled for the moment it reaches the module.
pub struct LossOverTime {
    rate: Schedule,
    rng: SimRng,
}

impl LossOverTime {
    pub fn new(rate: Schedule, rng: SimRng) -> Self {
        LossOverTime { rate, rng }
    }

    /// The `outage` module: probability `rate` inside [start, end] (both ends included), none
    /// outside. A step schedule 0 → rate at `start` → 0 one nanosecond after `end`.
    pub fn outage(start: SimTime, end: SimTime, rate: f64, rng: SimRng) -> Self {
        let (mut times, mut values) = (vec![], vec![]);
        if start > 0 {
            times.push(0);
            values.push(0.0);
        }
        times.push(start);
        values.push(rate);
        // An outage to the end of time (a huge end_s) has no point after it.
        if let Some(after) = end.checked_add(1) {
            times.push(after);
            values.push(0.0);
        }
        Self::new(Schedule::from_times(times, values, ScheduleShape::Step), rng)
    }

    /// Draws from the random stream only while the probability is strictly between 0 and 1,
    /// so a schedule at 0 or 1 costs no draw (and the outage module's drops stay as they were).
    pub fn drops(&mut self, now: SimTime) -> bool {
        let p = self.rate.value_at(now);
        p > 0.0 && (p >= 1.0 || self.rng.chance(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;
    use crate::scenario::ScheduleSpec;
    use crate::time::from_secs;

    fn rng() -> SimRng {
        SimRng::new(1, StreamId::LinkLoss(0))
    }

    #[test]
    fn only_packets_inside_an_outage_window_are_lost() {
        let mut m = LossOverTime::outage(10, 20, 1.0, rng());
        assert!(!m.drops(9));
        assert!(m.drops(10));
        assert!(m.drops(20));
        assert!(!m.drops(21));
        let mut from_zero = LossOverTime::outage(0, 5, 1.0, rng());
        assert!(from_zero.drops(0) && from_zero.drops(5) && !from_zero.drops(6));
    }

    #[test]
    fn the_share_of_packets_lost_follows_a_linear_schedule() {
        // 0 at 0 s rising to 0.5 at 1 s: over [0.5, 1] s the mean probability is 0.375.
        let spec = ScheduleSpec {
            points: vec![[0.0, 0.0], [1.0, 0.5]],
            shape: ScheduleShape::Linear,
        };
        let mut m = LossOverTime::new(Schedule::new(&spec, 1.0), rng());
        let n = 100_000u64;
        let lost = (0..n)
            .filter(|i| m.drops(from_secs(0.5) + i * from_secs(0.5) / n))
            .count();
        let share = lost as f64 / n as f64;
        assert!((share - 0.375).abs() < 0.01, "{share}");
        assert!(!m.drops(0), "probability 0 loses nothing");
    }
}
