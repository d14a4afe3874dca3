//! CoDel, "Controlled Delay" (Nichols, Jacobson, McGregor & Iyengar, RFC 8289, 2018): drops at
//! dequeue once every packet's sojourn time has stayed above `target` for an `interval`, then
//! ever faster (interval/√count apart) until the sojourn time falls below target again.
//!
//! The state machine follows RFC 8289 §5's pseudocode (§5.5 `dequeue`, §5.6 `dodequeue` and
//! `control_law`) line for line, with the Linux re-entry rule the RFC adopts. `CoDelVars` is the per-queue
//! state, so FQ-CoDel (`fq_codel.rs`) runs one per flow over its own packets.

use std::collections::VecDeque;

use super::{DropReason, Drops, Queued, Scheduler};
use crate::time::SimTime;

/// RFC 8289 §5.3's MAXPACKET: a backlog of at most one MTU never counts as above target, so a
/// link too slow to send one packet within target keeps a packet to send (§4.1, and
/// `dodequeue`'s comment). 1500 bytes, as Linux (`psched_mtu`) and ns-3 (`MinBytes`).
pub const MTU_BYTES: u64 = 1500;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoDelParams {
    /// TARGET, ns: the acceptable standing queueing delay (5 ms: RFC 8289 §4.3).
    pub target: SimTime,
    /// INTERVAL, ns: how long the sojourn time must stay above target before a drop, and the
    /// first drop spacing (100 ms, a worst-case round trip: §4.2).
    pub interval: SimTime,
    /// MAXPACKET, bytes (see `MTU_BYTES`).
    pub mtu_bytes: u64,
    /// Mark ECN-capable packets CE where the control law would drop them (Linux's `ecn`;
    /// RFC 8289 §5: "drop or mark").
    pub ecn: bool,
}

impl CoDelParams {
    pub fn new(target: SimTime, interval: SimTime) -> Self {
        CoDelParams {
            target,
            interval,
            mtu_bytes: MTU_BYTES,
            ecn: false,
        }
    }

    pub fn with_ecn(self, ecn: bool) -> Self {
        CoDelParams { ecn, ..self }
    }
}

impl Default for CoDelParams {
    /// RFC 8289's defaults: 5 ms and 100 ms.
    fn default() -> Self {
        CoDelParams::new(5_000_000, 100_000_000)
    }
}

/// RFC 8289 §5.2's per-queue state (`codel_queue_t`'s instance variables).
#[derive(Clone, Copy, Debug, Default)]
pub struct CoDelVars {
    /// When the sojourn time will have been above target for an interval; 0 while it is below
    /// (`first_above_time_`).
    first_above_time: SimTime,
    /// When the next drop is due while dropping (`drop_next_`).
    drop_next: SimTime,
    /// Drops since entering the dropping state, or the count carried over (`count_`).
    count: u32,
    /// `count` when the dropping state was last entered (`lastcount_`).
    lastcount: u32,
    /// In the dropping state (`dropping_`).
    dropping: bool,
}

/// `dodequeue`'s result: the packet, and whether the sojourn time has been above target for
/// an interval.
struct Head {
    item: Option<Queued>,
    ok_to_drop: bool,
}

/// §5.6's `control_law`: the next drop an interval/√count after `t`, so the drop rate grows as
/// √count — the rate that takes a Reno-like flow's window down linearly (RFC 8289 §3.3).
fn control_law(t: SimTime, count: u32, interval: SimTime) -> SimTime {
    t + (interval as f64 / (count as f64).sqrt()) as SimTime
}

impl CoDelVars {
    /// §5.6's `dodequeue`: takes the head packet (`pop` gives it with the backlog in bytes left behind
    /// it) and tracks how long the sojourn time has been above target.
    fn dodequeue<F>(&mut self, p: &CoDelParams, now: SimTime, pop: &mut F) -> Head
    where
        F: FnMut() -> Option<(Queued, u64)>,
    {
        let Some((item, backlog)) = pop() else {
            // An empty queue cannot be above target.
            self.first_above_time = 0;
            return Head {
                item: None,
                ok_to_drop: false,
            };
        };
        let sojourn = now - item.since;
        let mut ok_to_drop = false;
        if sojourn < p.target || backlog <= p.mtu_bytes {
            // Went below: stay below for at least an interval.
            self.first_above_time = 0;
        } else if self.first_above_time == 0 {
            // Just went above: if still above an interval from now, it is ok to drop.
            self.first_above_time = now + p.interval;
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        Head {
            item: Some(item),
            ok_to_drop,
        }
    }

    /// RFC 8289 §5.5's `dequeue`: the packet to send at `now`, after the drops the control law
    /// calls for (each to `drops` as an AQM drop).
    pub fn dequeue<F>(&mut self, p: &CoDelParams, now: SimTime, mut pop: F, drops: &mut Drops) -> Option<Queued>
    where
        F: FnMut() -> Option<(Queued, u64)>,
    {
        let mut r = self.dodequeue(p, now, &mut pop);
        if self.dropping {
            if !r.ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            // Drop and take the next while drops are due: a large backlog may call for a drop
            // rate so high that the next one is due already.
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if let Some(item) = &mut r.item {
                    if drops.mark(&mut item.packet, p.ecn) {
                        // Marked, not dropped: it is the one sent; the next is due by the
                        // control law (Linux's codel_dequeue).
                        self.drop_next = control_law(self.drop_next, self.count, p.interval);
                        break;
                    }
                    drops.push(item.packet, DropReason::Aqm);
                }
                r = self.dodequeue(p, now, &mut pop);
                if r.ok_to_drop {
                    self.drop_next = control_law(self.drop_next, self.count, p.interval);
                } else {
                    self.dropping = false;
                }
            }
        } else if r.ok_to_drop {
            // Above target for an interval: drop (or mark) and enter the dropping state.
            if let Some(item) = &mut r.item {
                if !drops.mark(&mut item.packet, p.ecn) {
                    drops.push(item.packet, DropReason::Aqm);
                    r = self.dodequeue(p, now, &mut pop);
                }
            }
            self.dropping = true;
            // Re-entering soon after the last episode: its drop rate is a good start, so count
            // resumes from the drops it took (`now - drop_next` approximates the time since
            // its last drop: drop_next is at most an interval past it). The Linux rule, which
            // RFC 8289 §5.5 adopts.
            let delta = self.count.wrapping_sub(self.lastcount);
            let since_due = now as i128 - self.drop_next as i128;
            self.count = if delta > 1 && since_due < 16 * p.interval as i128 {
                delta
            } else {
                1
            };
            self.drop_next = control_law(now, self.count, p.interval);
            self.lastcount = self.count;
        }
        r.item
    }
}

/// A single FIFO under CoDel, dropping arrivals beyond `limit` packets.
pub struct CoDel {
    limit: u32,
    params: CoDelParams,
    vars: CoDelVars,
    queue: VecDeque<Queued>,
    /// Bytes waiting.
    bytes: u64,
}

impl CoDel {
    pub fn new(limit: u32, params: CoDelParams) -> Self {
        CoDel {
            limit,
            params,
            vars: CoDelVars::default(),
            queue: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl Scheduler for CoDel {
    /// RFC 8289 §5.4's `enqueue`: a timestamp (`item.since`) and the tail of the FIFO, unless
    /// `limit` packets already wait.
    fn enqueue(&mut self, item: Queued, drops: &mut Drops) {
        if self.queue.len() >= self.limit as usize {
            drops.push(item.packet, DropReason::Overflow);
            return;
        }
        self.bytes += item.packet.size as u64;
        self.queue.push_back(item);
    }

    fn dequeue(&mut self, now: SimTime, drops: &mut Drops) -> Option<Queued> {
        let (queue, bytes) = (&mut self.queue, &mut self.bytes);
        let pop = || {
            let item = queue.pop_front()?;
            *bytes -= item.packet.size as u64;
            Some((item, *bytes))
        };
        self.vars.dequeue(&self.params, now, pop, drops)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};

    pub const MS: SimTime = 1_000_000;

    pub fn item(flow: u32, size: u32, since: SimTime) -> Queued {
        Queued {
            packet: Packet::new(flow, PacketKind::Data, 0, 0, size, since),
            since,
        }
    }

    /// Runs CoDel's dequeue every `step` from `from` to `to` over a deep backlog whose head is
    /// always `sojourn(t)` old; the times of its drops.
    fn serve((from, to, step): (SimTime, SimTime, SimTime), sojourn: impl Fn(SimTime) -> SimTime) -> Vec<SimTime> {
        let (params, mut vars) = (CoDelParams::default(), CoDelVars::default());
        let mut drops = Drops::default();
        let mut times = Vec::new();
        let mut t = from;
        while t < to {
            let head = || Some((item(0, 1000, t - sojourn(t)), 100_000));
            let before = drops.aqm;
            assert!(vars.dequeue(&params, t, head, &mut drops).is_some());
            times.extend(std::iter::repeat_n(t, (drops.aqm - before) as usize));
            t += step;
        }
        times
    }

    #[test]
    fn with_ecn_codel_marks_ect_packets_where_it_would_drop_them_and_sends_them() {
        // A standing 20 ms queue for a second: the same decisions, as marks on ECT packets.
        let run = |ecn: bool, bits: u8| {
            let (params, mut vars) = (CoDelParams::default().with_ecn(ecn), CoDelVars::default());
            let mut drops = Drops::default();
            let (mut t, mut marked) = (100 * MS, 0);
            while t < 1_100 * MS {
                let mut head = item(0, 1000, t - 20 * MS);
                head.packet.ecn = bits;
                let sent = vars.dequeue(&params, t, || Some((head, 100_000)), &mut drops).unwrap();
                marked += sent.packet.has(crate::packet::ecn::CE) as u64;
                t += MS / 10;
            }
            (drops.aqm, drops.marks, marked)
        };
        let ect = crate::packet::ecn::ECT0;
        let (dropped, _, _) = run(false, ect);
        assert!(dropped > 5, "{dropped}");
        assert_eq!(
            run(true, ect),
            (0, dropped, dropped),
            "every drop became a mark on a packet sent"
        );
        assert_eq!(
            run(true, 0),
            (dropped, 0, 0),
            "a packet that is not ECN-capable is dropped"
        );
    }

    #[test]
    fn no_packet_is_dropped_while_the_sojourn_time_stays_below_target() {
        let drops = serve((10 * MS, 5_000 * MS, MS / 10), |_| 4 * MS + 999_999);
        assert!(drops.is_empty(), "{drops:?}");
    }

    #[test]
    fn drops_start_once_the_sojourn_time_has_stayed_above_target_for_one_interval() {
        // Below target until 1 s, then 10 ms: the first drop is due at 1.1 s, not before.
        let drops = serve((10 * MS, 1_300 * MS, MS / 10), |t| {
            if t < 1_000 * MS {
                2 * MS
            } else {
                10 * MS
            }
        });
        assert_eq!(drops.first(), Some(&(1_100 * MS)), "{drops:?}");
    }

    #[test]
    fn a_dip_below_target_restarts_the_interval() {
        // Above target from 1 s, below for one dequeue at 1.05 s: drops wait until 1.15 s.
        let drops = serve((10 * MS, 1_300 * MS, MS / 10), |t| {
            if t < 1_000 * MS || t == 1_050 * MS {
                2 * MS
            } else {
                10 * MS
            }
        });
        assert_eq!(drops.first(), Some(&(1_150 * MS + MS / 10)), "{drops:?}");
    }

    #[test]
    fn the_drop_spacing_shrinks_as_interval_over_the_square_root_of_count() {
        let step = MS / 100;
        let drops = serve((100 * MS, 1_000 * MS, step), |_| 20 * MS);
        assert!(drops.len() >= 10, "{drops:?}");
        for (n, pair) in drops.windows(2).enumerate() {
            // Between drop n+1 and n+2 (count n+1 after the first): 100 ms / √(n+1), to the step.
            let want = 100.0 * MS as f64 / ((n + 1) as f64).sqrt();
            let gap = (pair[1] - pair[0]) as f64;
            assert!(
                (gap - want).abs() <= step as f64,
                "drop {}: {gap} ns, want {want}",
                n + 2
            );
        }
    }

    #[test]
    fn re_entering_the_dropping_state_soon_after_resumes_the_last_episodes_drop_rate() {
        let step = MS / 100;
        // Above target from 0.1 s to 0.4 s: drops at 0.2, 0.3, 0.37071 s (count 3, lastcount 1).
        // Below at 0.45 s, then above again: the episode that starts at 0.55 s starts at count
        // 3 - 1 = 2, so its second drop comes 100/√2 ms after its first, not 100 ms.
        let drops = serve((10 * MS, 700 * MS, step), |t| {
            if t < 100 * MS || (400 * MS..450 * MS).contains(&t) {
                2 * MS
            } else {
                20 * MS
            }
        });
        let second: Vec<_> = drops.iter().copied().filter(|&t| t >= 450 * MS).collect();
        assert_eq!(drops.len() - second.len(), 3, "{drops:?}");
        assert_eq!(second[0], 550 * MS, "{drops:?}");
        let gap = (second[1] - second[0]) as f64;
        let want = 100.0 * MS as f64 / 2f64.sqrt();
        assert!((gap - want).abs() <= step as f64, "{gap} against {want}");
    }

    #[test]
    fn a_backlog_of_one_mtu_is_never_dropped_however_old() {
        let mut q = CoDel::new(1000, CoDelParams::default());
        let mut drops = Drops::default();
        for k in 0..1000u64 {
            let t = 100 * MS + k * MS;
            q.enqueue(item(0, 1500, t - 50 * MS), &mut drops);
            assert!(q.dequeue(t, &mut drops).is_some());
        }
        assert_eq!(drops.aqm, 0);
    }

    #[test]
    fn arrivals_beyond_the_limit_are_dropped_as_overflow() {
        let mut q = CoDel::new(2, CoDelParams::default());
        let mut drops = Drops::default();
        for _ in 0..3 {
            q.enqueue(item(0, 1000, 0), &mut drops);
        }
        assert_eq!((q.len(), drops.overflow, drops.aqm), (2, 1, 0));
    }
}
