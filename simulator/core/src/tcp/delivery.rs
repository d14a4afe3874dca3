//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02, as Linux's
//! tcp_rate.c): every transmission snapshots how much had been delivered and when; the ACK
//! that delivers the segment turns its snapshot into a sample of the rate at which data
//! reached the receiver. The sender keeps this only for variants that ask (BBR), so
//! window-based variants pay nothing for it.

use std::collections::VecDeque;

use crate::packet::SeqRange;
use crate::time::{to_secs, SimTime};

/// What one transmission of a segment recorded (the draft's per-packet state P).
#[derive(Clone, Copy, Debug, Default)]
struct Sent {
    /// P.send_time.
    sent_time: SimTime,
    /// P.delivered: segments delivered when it was sent.
    delivered: u64,
    /// P.delivered_time: when the last of those was delivered.
    delivered_time: SimTime,
    /// P.first_sent_time: when the send phase of its flight began.
    first_sent_time: SimTime,
    /// P.is_app_limited.
    app_limited: bool,
    retransmitted: bool,
    /// Already delivered by a SACK: the cumulative ACK does not count it again.
    sacked: bool,
}

/// One ACK's sample (the draft's rs), in segments and nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Segments this ACK newly delivered, cumulatively or by SACK.
    pub newly_delivered: u32,
    /// C.delivered after this ACK: segments delivered on the connection so far.
    pub delivered_total: u64,
    /// rs.prior_delivered: C.delivered when the newest segment this ACK delivered was sent.
    pub prior_delivered: u64,
    /// rs.delivered: segments delivered over the sample's interval.
    pub delivered: u64,
    /// rs.interval: the longer of the send and ACK phases.
    pub interval: SimTime,
    /// rs.delivery_rate, segments per second; None when nothing was delivered or the interval
    /// is shorter than the minimum RTT (ACK compression would over-estimate the rate).
    pub delivery_rate: Option<f64>,
    /// rs.is_app_limited: the sample's flight was limited by the application, not the network.
    pub is_app_limited: bool,
    /// Round-trip time of the newest segment this ACK delivered, unless it was retransmitted.
    pub rtt: Option<SimTime>,
    /// Segments in flight after the ACK: sent, neither cumulatively acknowledged nor SACKed
    /// (filled in by the sender).
    pub in_flight: u32,
    /// Segments this ACK newly marked lost (Linux's rs->losses; filled in by the sender, from
    /// the SACK scoreboard; 0 without SACK).
    pub losses: u32,
}

#[derive(Debug, Default)]
pub struct DeliveryRate {
    /// Segment number of `sent[0]`: the cumulative ACK point.
    base: u32,
    sent: VecDeque<Sent>,
    /// C.delivered, C.delivered_time, C.first_sent_time.
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    /// C.app_limited: the delivered count that ends an app-limited period, 0 outside one.
    app_limited: u64,
    /// SACKed segments above the cumulative ACK point.
    sacked: u32,
}

impl DeliveryRate {
    pub fn reset(&mut self) {
        self.sent.clear();
        *self = DeliveryRate {
            sent: std::mem::take(&mut self.sent),
            ..DeliveryRate::default()
        };
    }

    /// SACKed segments above the cumulative ACK point (delivered, though not acknowledged).
    pub fn sacked(&self) -> u32 {
        self.sacked
    }

    /// A transmission of `seq` (the draft's OnPacketSent); `idle` when nothing was outstanding.
    pub fn on_send(&mut self, seq: u32, now: SimTime, idle: bool, retransmission: bool) {
        if idle {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let Some(i) = seq.checked_sub(self.base) else { return };
        let i = i as usize;
        if i >= self.sent.len() {
            self.sent.resize(i + 1, Sent::default());
        }
        let slot = &mut self.sent[i];
        *slot = Sent {
            sent_time: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited != 0,
            retransmitted: retransmission,
            sacked: slot.sacked,
        };
    }

    /// Whether an app-limited period is open (C.app_limited is set).
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// The application had nothing more to send with `in_flight` segments out: samples until
    /// those are delivered describe the application, not the path.
    pub fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + in_flight as u64).max(1);
    }

    /// An ACK (the draft's UpdateRateSample for every segment it delivers, then
    /// GenerateRateSample): `newly_sacked` are the segments it SACKed for the first time (the
    /// scoreboard's, so SACK blocks are not walked twice), `cum` its cumulative point.
    /// `min_rtt` guards against intervals shorter than a round trip.
    pub fn on_ack(
        &mut self,
        cum: u32,
        newly_sacked: &[SeqRange],
        now: SimTime,
        min_rtt: Option<SimTime>,
    ) -> RateSample {
        let mut newly = 0u32;
        let mut newest: Option<Sent> = None;
        let mut take = |p: Sent| {
            newly += 1;
            if newest.is_none_or(|n| (p.sent_time, p.delivered) >= (n.sent_time, n.delivered)) {
                newest = Some(p);
            }
        };
        for &(start, end) in newly_sacked {
            for seq in start.max(self.base)..end {
                if let Some(p) = self.sent.get_mut((seq - self.base) as usize) {
                    debug_assert!(!p.sacked, "the scoreboard reports each segment SACKed once");
                    p.sacked = true;
                    self.sacked += 1;
                    take(*p);
                }
            }
        }
        while self.base < cum {
            match self.sent.pop_front() {
                Some(p) if p.sacked => self.sacked -= 1,
                Some(p) => take(p),
                None => {}
            }
            self.base += 1;
        }
        if newly > 0 {
            self.delivered += newly as u64;
            self.delivered_time = now;
        }
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let mut rs = RateSample {
            newly_delivered: newly,
            delivered_total: self.delivered,
            ..RateSample::default()
        };
        let Some(p) = newest else { return rs };
        self.first_sent_time = p.sent_time;
        rs.prior_delivered = p.delivered;
        rs.delivered = self.delivered - p.delivered;
        rs.is_app_limited = p.app_limited;
        rs.rtt = (!p.retransmitted).then(|| now.saturating_sub(p.sent_time));
        let send_elapsed = p.sent_time.saturating_sub(p.first_sent_time);
        let ack_elapsed = self.delivered_time.saturating_sub(p.delivered_time);
        rs.interval = send_elapsed.max(ack_elapsed);
        if rs.interval > 0 && min_rtt.is_none_or(|m| rs.interval >= m) {
            rs.delivery_rate = Some(rs.delivered as f64 / to_secs(rs.interval));
        }
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    #[test]
    fn a_steady_flight_samples_the_rate_it_was_acknowledged_at() {
        let mut d = DeliveryRate::default();
        // Ten segments sent 1 ms apart from an idle start, each acknowledged 50 ms later.
        for seq in 0..10 {
            d.on_send(seq, seq as SimTime * MS, seq == 0, false);
        }
        let mut last = RateSample::default();
        for seq in 0..10u32 {
            last = d.on_ack(seq + 1, &[], (50 + seq as SimTime) * MS, Some(50 * MS));
        }
        assert_eq!(
            (last.newly_delivered, last.delivered_total, last.rtt),
            (1, 10, Some(50 * MS))
        );
        // Segment 9 was sent with nothing delivered yet: 10 segments over the 59 ms since the
        // flight began (the send phase, 9 ms, is shorter).
        assert_eq!((last.delivered, last.interval), (10, 59 * MS));
        let rate = last.delivery_rate.unwrap();
        assert!((rate - 10.0 / 0.059).abs() < 1e-6, "{rate}");
    }

    #[test]
    fn sacked_segments_count_once_and_a_retransmission_gives_no_rtt() {
        let mut d = DeliveryRate::default();
        for seq in 0..4 {
            d.on_send(seq, 0, seq == 0, false);
        }
        let rs = d.on_ack(0, &[(1, 3)], 10 * MS, None);
        assert_eq!((rs.newly_delivered, d.sacked()), (2, 2));
        d.on_send(0, 10 * MS, false, true);
        let rs = d.on_ack(3, &[], 20 * MS, None);
        assert_eq!((rs.newly_delivered, rs.delivered_total, d.sacked()), (1, 3, 0));
        assert_eq!(rs.rtt, None, "the newest delivered segment was a retransmission");
    }

    #[test]
    fn a_sample_shorter_than_the_minimum_rtt_is_no_rate() {
        let mut d = DeliveryRate::default();
        d.on_send(0, 0, true, false);
        assert_eq!(d.on_ack(1, &[], 10 * MS, Some(20 * MS)).delivery_rate, None);
    }

    #[test]
    fn an_app_limited_period_ends_when_its_data_is_delivered() {
        let mut d = DeliveryRate::default();
        d.on_send(0, 0, true, false);
        d.mark_app_limited(1);
        d.on_send(1, MS, false, false);
        assert!(!d.on_ack(1, &[], 10 * MS, None).is_app_limited);
        assert!(d.on_ack(2, &[], 11 * MS, None).is_app_limited, "sent while app-limited");
        d.on_send(2, 12 * MS, true, false);
        assert!(!d.on_ack(3, &[], 20 * MS, None).is_app_limited);
    }
}
