//! Quantities that change over time (issue 18): a link's rate, delay or loss rate, a Wi-Fi
//! station's SNR. One shape for all of them, so a handover, a route change, an outage and a
//! fade are written and evaluated alike.

use crate::scenario::{Check, ScheduleShape, ScheduleSpec};
use crate::time::{from_secs, SimTime};

/// Most points one schedule may have: a recorded profile at 1 ms for a quarter of an hour.
pub const MAX_SCHEDULE_POINTS: usize = 1_000_000;

/// A schedule ready to evaluate: times in nanoseconds, values in the unit the owner asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    times: Vec<SimTime>,
    values: Vec<f64>,
    shape: ScheduleShape,
}

/// The piece of a schedule that holds at some moment: its value at `start` and, when it ends,
/// where it ends and the value it reaches there (a step holds its value to the end).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub start: SimTime,
    pub value: f64,
    pub end: Option<(SimTime, f64)>,
}

impl Schedule {
    /// `scale` converts the spec's unit to the owner's (1e6 for Mb/s to b/s, 1e-3 for ms to s).
    pub fn new(spec: &ScheduleSpec, scale: f64) -> Self {
        Schedule {
            times: spec.points.iter().map(|p| from_secs(p[0])).collect(),
            values: spec.points.iter().map(|p| p[1] * scale).collect(),
            shape: spec.shape,
        }
    }

    /// A schedule from times already in nanoseconds (strictly increasing, at least one), for
    /// owners that derive one from other fields (the `outage` loss module).
    pub fn from_times(times: Vec<SimTime>, values: Vec<f64>, shape: ScheduleShape) -> Self {
        assert!(!times.is_empty() && times.len() == values.len() && times.windows(2).all(|w| w[0] < w[1]));
        Schedule { times, values, shape }
    }

    /// Index of the last point at or before `t`; None before the first.
    fn last_at_or_before(&self, t: SimTime) -> Option<usize> {
        self.times.partition_point(|&at| at <= t).checked_sub(1)
    }

    /// The piece that holds at `t`. Before the first point the first value holds, after the
    /// last the last value, forever.
    pub fn piece_at(&self, t: SimTime) -> Piece {
        let (start, i) = match self.last_at_or_before(t) {
            Some(i) => (self.times[i], i),
            None => {
                return Piece {
                    start: 0,
                    value: self.values[0],
                    end: (self.times[0] > 0).then(|| (self.times[0], self.values[0])),
                }
            }
        };
        let end = self.times.get(i + 1).map(|&at| {
            let reached = match self.shape {
                ScheduleShape::Step => self.values[i],
                ScheduleShape::Linear => self.values[i + 1],
            };
            (at, reached)
        });
        Piece {
            start,
            value: self.values[i],
            end,
        }
    }

    /// The value at `t`: held from each point under `step`, interpolated between points
    /// under `linear`.
    pub fn value_at(&self, t: SimTime) -> f64 {
        let piece = self.piece_at(t);
        match piece.end {
            Some((end, reached)) if reached != piece.value => {
                let f = (t - piece.start) as f64 / (end - piece.start) as f64;
                piece.value + (reached - piece.value) * f
            }
            _ => piece.value,
        }
    }

    /// The time of the last point, after which the last value holds.
    pub fn last_point(&self) -> SimTime {
        *self.times.last().expect("a schedule has at least one point")
    }
}

impl ScheduleSpec {
    /// Points present and in order, times within the run's range, values within [lo, hi]
    /// (in the spec's own unit); each error names the point.
    pub fn check(&self, c: &mut Check, path: &str, lo: f64, hi: f64) {
        if self.points.is_empty() {
            c.fail(format!("{path}.points"), "must have at least one point");
            return;
        }
        if self.points.len() > MAX_SCHEDULE_POINTS {
            c.fail(
                format!("{path}.points"),
                format!("at most {MAX_SCHEDULE_POINTS} points, got {}", self.points.len()),
            );
            return;
        }
        let mut previous: Option<f64> = None;
        for (i, [at_s, value]) in self.points.iter().copied().enumerate() {
            let at = format!("{path}.points[{i}][0]");
            let v = format!("{path}.points[{i}][1]");
            c.non_negative(&at, at_s);
            c.at_most(&at, at_s, crate::scenario::MAX_DURATION_S);
            if previous.is_some_and(|p| at_s <= p) {
                c.fail(&at, "times must increase from one point to the next");
            }
            previous = Some(at_s);
            if c.finite(&v, value) && !(lo..=hi).contains(&value) {
                c.fail(
                    v,
                    format!(
                        "must be between {} and {}, got {}",
                        crate::scenario::show(lo),
                        crate::scenario::show(hi),
                        crate::scenario::show(value)
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(points: &[[f64; 2]], shape: ScheduleShape) -> Schedule {
        Schedule::new(
            &ScheduleSpec {
                points: points.to_vec(),
                shape,
            },
            1.0,
        )
    }

    #[test]
    fn a_step_schedule_holds_each_value_until_the_next_point() {
        let s = schedule(&[[1.0, 10.0], [2.0, 4.0]], ScheduleShape::Step);
        assert_eq!(s.value_at(0), 10.0, "the first value holds before the first point");
        assert_eq!(s.value_at(from_secs(1.5)), 10.0);
        assert_eq!(s.value_at(from_secs(2.0)), 4.0);
        assert_eq!(s.value_at(from_secs(100.0)), 4.0, "the last value holds forever");
    }

    #[test]
    fn a_linear_schedule_interpolates_between_points() {
        let s = schedule(&[[0.0, 10.0], [2.0, 0.0], [3.0, 0.0]], ScheduleShape::Linear);
        assert_eq!(s.value_at(from_secs(0.5)), 7.5);
        assert_eq!(s.value_at(from_secs(2.5)), 0.0);
        assert_eq!(
            s.piece_at(from_secs(1.0)),
            Piece {
                start: 0,
                value: 10.0,
                end: Some((from_secs(2.0), 0.0))
            }
        );
    }

    #[test]
    fn a_scale_converts_units() {
        let s = Schedule::new(
            &ScheduleSpec {
                points: vec![[0.0, 2.5]],
                shape: ScheduleShape::Step,
            },
            1e6,
        );
        assert_eq!(s.value_at(7), 2.5e6);
    }

    #[test]
    fn bad_points_are_named() {
        let check = |points: Vec<[f64; 2]>| {
            let mut c = Check::new();
            ScheduleSpec {
                points,
                shape: ScheduleShape::Linear,
            }
            .check(&mut c, "$.x", 0.0, 1.0);
            c.finish().unwrap_err().to_string()
        };
        assert!(check(vec![]).contains("$.x.points"));
        assert!(check(vec![[1.0, 0.5], [1.0, 0.5]]).contains("$.x.points[1][0]"));
        assert!(check(vec![[0.0, 0.5], [1.0, 1.5]]).contains("$.x.points[1][1]"));
        assert!(check(vec![[-1.0, 0.5]]).contains("$.x.points[0][0]"));
    }
}
