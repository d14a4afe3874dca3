//! The shared medium of one 802.11 BSS: an access point and its stations, each with its own
//! Drop-Tail queue, contending for the air with the DCF.
//!
//! The graph keeps two one-way links per station (AP → station, station → AP) so routing,
//! names and results work as for any link; packets offered to them come here instead. The
//! medium needs two events per frame: the start of a transmission (when the earliest backoff
//! ends) and the end of the data frame (delivery, and the outcome of the exchange: the ACK
//! that follows is known from the same draw, so it needs no event of its own).
//!
//! A transmission fails when two backoffs end in the same slot (a collision: no capture) or
//! when the frame, or its ACK, is received in error (`error`'s rate at the receiving station's
//! SNR, the same both ways). The sender retries with a doubled window until its retry limit,
//! then drops the frame. After an exchange each transmitter waits before counting down again:
//! DIFS after a success; DIFS after its ACK timeout after a failure; EIFS after receiving a
//! frame in error; DIFS after the NAV of a frame it overheard (ns-3's `ChannelAccessManager`).
//! A station overhears every other (no hidden terminals); no RTS/CTS, no rate adaptation,
//! no QoS (EDCA): one queue per transmitter, as a non-QoS ns-3 station.

use std::collections::VecDeque;

use super::dcf::Dcf;
use super::error::SuccessCache;
use super::phy::Phy;
use crate::net::LinkId;
use crate::packet::Packet;
use crate::rng::SimRng;
use crate::schedule::Schedule;
use crate::time::SimTime;

/// What every transmitter of a BSS shares: the most attempts per frame, the queue's size, and
/// whether a drop resets the contention window (`Dcf`).
#[derive(Clone, Copy, Debug)]
pub struct Mac {
    pub retry_limit: u32,
    pub queue_limit: u32,
    pub reset_cw_on_drop: bool,
}

/// A station's SNR (dB): fixed, or following a schedule (a fade).
#[derive(Clone, Debug)]
pub enum Snr {
    Fixed(f64),
    Scheduled(Schedule),
}

impl Snr {
    fn at(&self, now: SimTime) -> f64 {
        match self {
            Snr::Fixed(db) => *db,
            Snr::Scheduled(s) => s.value_at(now),
        }
    }
}

/// A MAC's counts on one of its links since the window opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WifiCounters {
    /// Data frames put on the air, retransmissions included.
    pub frames_sent: u64,
    /// Of those, retransmissions.
    pub mac_retries: u64,
    /// Frames given up at the retry limit.
    pub retry_drops: u64,
    /// Transmissions that collided with another.
    pub collisions: u64,
}

/// What a wake-up of the medium hands back to the simulation.
#[derive(Clone, Copy, Debug)]
pub enum Handover {
    /// The packet reached the far end of `link`.
    Delivered(LinkId, Packet),
    /// The packet was given up on `link` after its last attempt.
    Dropped(LinkId, Packet),
    /// A packet for `link` started its first attempt after waiting this long in its sender's
    /// queue (its queueing delay: the frames ahead of it, and its own backoff).
    Waited(LinkId, SimTime),
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    packet: Packet,
    /// The link's offset in the medium: 2k down to station k, 2k + 1 up from it.
    offset: u32,
    /// When it joined the queue.
    since: SimTime,
    /// An earlier attempt reached the receiver (its ACK was lost): a retransmission is a
    /// duplicate the receiver's MAC discards.
    delivered: bool,
}

/// A transmitter: the AP (party 0) or a station (party k + 1 for station k).
struct Party {
    queue: VecDeque<Frame>,
    dcf: Dcf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Success,
    /// The receiver has the frame; the sender missed the ACK.
    AckLost,
    /// The receiver got the frame in error.
    DataLost,
    Collision,
    /// The AP's beacon: nobody's frame, no ACK.
    Beacon,
}

/// The ACK that follows a data frame, as each party sees it: the sender and the receiver are
/// busy while it is on the air (from `start`, if one is sent), every other party until `end`
/// (the NAV the data frame set).
#[derive(Clone, Copy, Debug)]
struct AckTime {
    pair: (u32, u32),
    start: Option<SimTime>,
    end: SimTime,
}

impl AckTime {
    fn busy(&self, party: u32, now: SimTime) -> bool {
        if now >= self.end {
            return false;
        }
        if party == self.pair.0 || party == self.pair.1 {
            return self.start.is_some_and(|s| now >= s);
        }
        true
    }
}

/// Frames on the air.
struct Exchange {
    /// Parties transmitting, and when each one's data frame ends.
    senders: Vec<(u32, SimTime)>,
    /// When the last data frame ends: the medium's next event.
    data_end: SimTime,
    outcome: Outcome,
}

pub struct Medium {
    phy: Phy,
    retry_limit: u32,
    queue_limit: u32,
    first_link: LinkId,
    parties: Vec<Party>,
    snr: Vec<Snr>,
    errors: Vec<SuccessCache>,
    /// `Exchange::senders` of the last exchange, kept for the next (no allocation per frame).
    spare: Vec<(u32, SimTime)>,
    on_air: Option<Exchange>,
    /// What keeps the air busy after the last data frame: its ACK, and the NAV it set.
    after: Option<AckTime>,
    rng: SimRng,
    /// Per link offset.
    counters: Vec<WifiCounters>,
    /// When the AP's next beacon is due (its target beacon transmission time).
    next_beacon: SimTime,
}

/// Beacons every 100 TU of 1024 µs (ns-3's `ApWifiMac` `BeaconInterval`), the first at a
/// uniform offset within one interval (its `EnableBeaconJitter`).
const BEACON_INTERVAL: SimTime = 102_400_000;

impl Medium {
    /// A BSS whose stations have `snr`; its links are `first_link`.. (two per station).
    pub fn new(phy: Phy, mac: Mac, first_link: LinkId, snr: Vec<Snr>, mut rng: SimRng) -> Self {
        let Mac {
            retry_limit,
            queue_limit,
            reset_cw_on_drop,
        } = mac;
        let next_beacon = (rng.uniform() * BEACON_INTERVAL as f64) as SimTime;
        let errors = snr.iter().map(|s| SuccessCache::new(&phy, s.at(0))).collect();
        Medium {
            phy,
            retry_limit,
            queue_limit,
            first_link,
            parties: (0..=snr.len())
                .map(|_| Party {
                    queue: VecDeque::new(),
                    dcf: Dcf::new(&phy, reset_cw_on_drop),
                })
                .collect(),
            counters: vec![WifiCounters::default(); 2 * snr.len()],
            snr,
            errors,
            spare: Vec::new(),
            after: None,
            on_air: None,
            rng,
            next_beacon,
        }
    }

    /// Whether `link` is one of this medium's.
    pub fn carries(&self, link: LinkId) -> bool {
        link >= self.first_link && ((link - self.first_link) as usize) < self.counters.len()
    }

    /// The MAC's counts on `link`, if it is one of this medium's.
    pub fn counters(&self, link: LinkId) -> Option<WifiCounters> {
        self.carries(link)
            .then(|| self.counters[(link - self.first_link) as usize])
    }

    pub fn open_window(&mut self) {
        self.counters.fill(WifiCounters::default());
    }

    /// Frames for `link` in its sender's queue, the one on the air included (for traces: a
    /// count over the queue).
    pub fn waiting(&self, link: LinkId) -> usize {
        let offset = link - self.first_link;
        let queue = &self.parties[sender_of(offset) as usize].queue;
        queue.iter().filter(|f| f.offset == offset).count()
    }

    /// A packet for `link` joins its sender's queue; false if the queue was full.
    pub fn offer(&mut self, link: LinkId, packet: &Packet, now: SimTime) -> bool {
        let offset = link - self.first_link;
        let sender = sender_of(offset);
        let busy = self.on_air.is_some() || self.after.is_some_and(|a| a.busy(sender, now));
        let party = &mut self.parties[sender as usize];
        if party.queue.len() >= self.queue_limit as usize {
            return false;
        }
        // A frame that finds the air busy (a frame or an ACK on it, or the NAV) with no backoff
        // left backs off first; one that finds it idle goes once the air has been idle for DIFS
        // (or EIFS), without a backoff (§10.3.4.2). So does ns-3 (`ChannelAccessManager::
        // NeedBackoffUponAccess`): a TCP ACK queued as its data frame ends, before the MAC's ACK,
        // goes first after that ACK.
        if party.queue.is_empty() && party.dcf.backoff == 0 && busy {
            party.dcf.draw(&mut self.rng);
        }
        party.queue.push_back(Frame {
            packet: *packet,
            offset,
            since: now,
            delivered: false,
        });
        true
    }

    /// When a party with a frame would start to send if the air stays idle.
    fn start_of(&self, p: &Party) -> Option<SimTime> {
        p.queue.front().map(|f| p.dcf.ready_at(self.phy.slot).max(f.since))
    }

    /// When the AP sends its next beacon if the air stays idle: at its target time, once the
    /// air has been idle for PIFS (the AP counts from DIFS, or EIFS, after the last busy end).
    fn beacon_at(&self) -> SimTime {
        let ap = &self.parties[0].dcf;
        self.next_beacon
            .max((ap.counting_from + self.phy.pifs()).saturating_sub(self.phy.difs()))
    }

    /// The medium's next event: the end of the frames on the air, or the next transmission
    /// (a beacon at the latest: there always is one).
    pub fn deadline(&self) -> Option<SimTime> {
        Some(match &self.on_air {
            Some(x) => x.data_end,
            None => self
                .parties
                .iter()
                .filter_map(|p| self.start_of(p))
                .fold(self.beacon_at(), SimTime::min),
        })
    }

    /// Whether a frame waits or is on the air: with nothing to send, the medium only beacons.
    pub fn is_idle(&self) -> bool {
        self.on_air.is_none() && self.parties.iter().all(|p| p.queue.is_empty())
    }

    /// The medium's event at `now` (its deadline): frames start, or the frames on the air end.
    pub fn wake(&mut self, now: SimTime, out: &mut Vec<Handover>) {
        match self.on_air.take() {
            None => self.start(now, out),
            Some(x) => self.finish(x, now, out),
        }
    }

    /// Every party whose backoff ends now transmits; the outcome is drawn at once.
    fn start(&mut self, now: SimTime, out: &mut Vec<Handover>) {
        let slot = self.phy.slot;
        if self.beacon_at() == now {
            // The beacon goes first: the data frames' backoffs freeze behind it.
            for p in &mut self.parties {
                p.dcf.freeze(now, slot);
            }
            self.on_air = Some(Exchange {
                senders: std::mem::take(&mut self.spare),
                data_end: now + self.phy.beacon_duration(),
                outcome: Outcome::Beacon,
            });
            return;
        }
        let mut senders = std::mem::take(&mut self.spare);
        for (i, p) in self.parties.iter().enumerate() {
            if self.start_of(p) == Some(now) {
                let f = p.queue.front().expect("a party that starts has a frame");
                senders.push((i as u32, now + self.phy.data_duration(f.packet.size)));
            }
        }
        for p in &mut self.parties {
            p.dcf.freeze(now, slot);
        }
        for &(i, _) in &senders {
            let p = &self.parties[i as usize];
            let f = &p.queue[0];
            if p.dcf.failures == 0 && !f.delivered {
                out.push(Handover::Waited(self.first_link + f.offset, now - f.since));
            }
            let c = &mut self.counters[f.offset as usize];
            c.frames_sent += 1;
            c.mac_retries += (p.dcf.failures > 0) as u64;
            c.collisions += (senders.len() > 1) as u64;
        }
        let data_end = senders.iter().map(|s| s.1).max().expect("woken at a start");
        let outcome = if senders.len() > 1 {
            Outcome::Collision
        } else {
            let f = self.parties[senders[0].0 as usize].queue[0];
            let station = (f.offset / 2) as usize;
            let snr = self.snr[station].at(now);
            let (data, ack) = self.errors[station].at(&self.phy, snr, f.packet.size);
            if !self.rng.chance(data) {
                Outcome::DataLost
            } else if self.rng.chance(ack) {
                Outcome::Success
            } else {
                Outcome::AckLost
            }
        };
        self.on_air = Some(Exchange {
            senders,
            data_end,
            outcome,
        });
    }

    /// The data frames on the air have ended: deliver, retry or drop, and set when each party
    /// may count down again.
    fn finish(&mut self, x: Exchange, now: SimTime, out: &mut Vec<Handover>) {
        let phy = self.phy;
        let difs = phy.difs();
        let ack_end = now + phy.sifs + phy.ack_duration();
        let after_timeout = |own_end: SimTime| own_end + phy.ack_timeout() + difs;
        if x.outcome == Outcome::Beacon {
            for p in &mut self.parties {
                p.dcf.counting_from = now + difs;
            }
            self.after = None;
            while self.next_beacon <= now {
                self.next_beacon += BEACON_INTERVAL;
            }
            self.spare = x.senders;
            return;
        }
        let (sender, _) = x.senders[0];
        let receiver = match self.parties[sender as usize].queue.front() {
            Some(f) if f.offset % 2 == 0 => f.offset / 2 + 1,
            _ => 0,
        };
        // When the others (neither sending nor receiving) and the receiver count down again.
        let (others, at_receiver) = match x.outcome {
            Outcome::Success | Outcome::AckLost => (ack_end + difs, ack_end + difs),
            // The others keep the NAV of the frame they overheard; the receiver waits EIFS.
            Outcome::DataLost => (ack_end + difs, now + phy.eifs(phy.data)),
            Outcome::Collision => (now + phy.eifs(phy.data), now + phy.eifs(phy.data)),
            Outcome::Beacon => unreachable!("a beacon ends above"),
        };
        self.after = match x.outcome {
            Outcome::Success | Outcome::AckLost => Some(AckTime {
                pair: (sender, receiver),
                start: Some(now + phy.sifs),
                end: ack_end,
            }),
            Outcome::DataLost => Some(AckTime {
                pair: (sender, receiver),
                start: None,
                end: ack_end,
            }),
            Outcome::Collision | Outcome::Beacon => None,
        };
        for (i, p) in self.parties.iter_mut().enumerate() {
            p.dcf.counting_from = if x.outcome != Outcome::Collision && i as u32 == receiver {
                at_receiver
            } else {
                others
            };
        }
        for &(i, own_end) in &x.senders {
            let p = &mut self.parties[i as usize];
            let f = p
                .queue
                .front_mut()
                .expect("a sender's frame stays queued until the exchange ends");
            let link = self.first_link + f.offset;
            if matches!(x.outcome, Outcome::Success | Outcome::AckLost) && !f.delivered {
                f.delivered = true;
                out.push(Handover::Delivered(link, f.packet));
            }
            if x.outcome == Outcome::Success {
                p.queue.pop_front();
                p.dcf.on_success(&phy, &mut self.rng);
                p.dcf.counting_from = ack_end + difs;
                continue;
            }
            if p.dcf.on_failure(&phy, self.retry_limit, &mut self.rng) {
                let f = p.queue.pop_front().expect("the failed frame");
                self.counters[f.offset as usize].retry_drops += 1;
                if !f.delivered {
                    out.push(Handover::Dropped(link, f.packet));
                }
            }
            p.dcf.counting_from = match x.outcome {
                // The ACK arrived in error: EIFS after it.
                Outcome::AckLost => ack_end + phy.eifs(phy.ack),
                _ => after_timeout(own_end).max(now + difs),
            };
        }
        let mut spare = x.senders;
        spare.clear();
        self.spare = spare;
    }
}

/// The party that sends on the link at `offset`: the AP down, the station up.
fn sender_of(offset: u32) -> u32 {
    if offset % 2 == 0 {
        0
    } else {
        offset / 2 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::wifi::phy::Standard;
    use crate::packet::PacketKind;
    use crate::rng::StreamId;

    /// An 802.11g BSS at 54 Mb/s whose stations (links 10, 11 for the first) hear every frame;
    /// its first beacon an hour away.
    fn medium(stations: usize) -> Medium {
        let phy = Phy::new(Standard::G, 54_000, true).unwrap();
        let snr = vec![Snr::Fixed(60.0); stations];
        let mac = Mac {
            retry_limit: 7,
            queue_limit: 100,
            reset_cw_on_drop: true,
        };
        let mut m = Medium::new(phy, mac, 10, snr, SimRng::new(1, StreamId::Wifi(10)));
        m.next_beacon = 3_600_000_000_000;
        m
    }

    #[test]
    fn a_beacon_due_goes_pifs_after_the_air_frees_ahead_of_the_backoffs_and_comes_back_each_interval() {
        let mut m = medium(1);
        let phy = m.phy;
        m.next_beacon = 1_000_000;
        m.parties[1].dcf.backoff = 200; // the station counts down from 0 for 200 slots
        m.offer(11, &packet(1), 0);
        let mut out = Vec::new();
        assert_eq!(m.deadline(), Some(1_000_000));
        m.wake(1_000_000, &mut out);
        let slots_spent = 1_000_000 / phy.slot;
        assert_eq!(
            m.parties[1].dcf.backoff as SimTime,
            200 - slots_spent,
            "frozen behind the beacon"
        );
        let end = 1_000_000 + phy.beacon_duration();
        assert_eq!(m.deadline(), Some(end));
        m.wake(end, &mut out);
        assert!(out.is_empty() && m.counters(11).unwrap().frames_sent == 0);
        assert_eq!(m.next_beacon, 1_000_000 + BEACON_INTERVAL);
        // The station resumes DIFS after the beacon.
        assert_eq!(m.deadline(), Some(end + phy.difs() + (200 - slots_spent) * phy.slot));
    }

    fn packet(seq: u32) -> Packet {
        Packet::new(0, PacketKind::Data, 0, seq, 1500, 0)
    }

    /// Wakes the medium at its deadlines until it has nothing to do; what it handed over, when.
    fn drain(m: &mut Medium) -> Vec<(SimTime, Handover)> {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        while !m.is_idle() {
            let t = m.deadline().expect("a medium always has a next event");
            m.wake(t, &mut out);
            seen.extend(out.drain(..).map(|h| (t, h)));
        }
        seen
    }

    fn delivered(seen: &[(SimTime, Handover)]) -> Vec<(SimTime, u32)> {
        seen.iter()
            .filter_map(|(t, h)| match h {
                Handover::Delivered(_, p) => Some((*t, p.seq)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_frame_that_finds_the_air_idle_goes_at_once_and_arrives_when_its_data_frame_ends() {
        let mut m = medium(1);
        let phy = m.phy;
        assert!(m.offer(10, &packet(0), 1_000_000));
        assert_eq!(m.deadline(), Some(1_000_000), "no backoff pending, the air idle");
        let seen = drain(&mut m);
        let end = 1_000_000 + phy.data_duration(1500);
        assert_eq!(delivered(&seen), [(end, 0)]);
        assert!(matches!(seen[0], (1_000_000, Handover::Waited(10, 0))));
        let c = m.counters(10).unwrap();
        assert_eq!((c.frames_sent, c.mac_retries, c.collisions), (1, 0, 0));
        // Everyone counts down again DIFS after the ACK; the sender from a new backoff.
        let resume = end + phy.sifs + phy.ack_duration() + phy.difs();
        assert!(m.parties.iter().all(|p| p.dcf.counting_from == resume));
    }

    #[test]
    fn a_frame_behind_another_waits_for_the_ack_difs_and_its_backoff() {
        let mut m = medium(1);
        let phy = m.phy;
        m.offer(10, &packet(0), 0);
        m.offer(10, &packet(1), 0);
        let seen = delivered(&drain(&mut m));
        let first_end = phy.data_duration(1500);
        let backoff = seen[1].0 - 2 * first_end - phy.sifs - phy.ack_duration() - phy.difs();
        assert_eq!(backoff % phy.slot, 0, "whole slots");
        assert!(backoff / phy.slot <= phy.cw_min as SimTime);
    }

    #[test]
    fn two_backoffs_ending_in_the_same_slot_collide_and_both_senders_retry_with_a_doubled_window() {
        let mut m = medium(2);
        for (link, p) in [(11, 1), (13, 2)] {
            m.parties[p].dcf.backoff = 3;
            m.offer(link, &packet(p as u32), 0);
        }
        let mut out = Vec::new();
        m.wake(m.deadline().unwrap(), &mut out); // both start
        m.wake(m.deadline().unwrap(), &mut out); // both end, unacknowledged
        assert!(!out.iter().any(|h| matches!(h, Handover::Delivered(..))));
        for (link, p) in [(11, 1), (13, 2)] {
            assert_eq!(m.counters(link).unwrap().collisions, 1);
            assert_eq!((m.parties[p].dcf.failures, m.parties[p].dcf.cw), (1, 31));
        }
        let seen = drain(&mut m);
        assert_eq!(delivered(&seen).len(), 2, "both get through later");
    }

    #[test]
    fn the_backoff_stands_still_while_another_station_transmits() {
        let mut m = medium(2);
        m.parties[1].dcf.backoff = 2;
        m.parties[2].dcf.backoff = 5;
        m.offer(11, &packet(1), 0);
        m.offer(13, &packet(2), 0);
        let mut out = Vec::new();
        let first = m.deadline().unwrap();
        assert_eq!(first, 2 * m.phy.slot);
        m.wake(first, &mut out);
        assert_eq!(m.parties[2].dcf.backoff, 3, "two slots spent, three left");
        m.wake(m.deadline().unwrap(), &mut out);
        let resume = m.parties[2].dcf.counting_from;
        assert_eq!(m.deadline(), Some(resume + 3 * m.phy.slot));
    }
}
