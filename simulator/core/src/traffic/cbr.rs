use super::AppCtx;
use crate::packet::{Packet, PacketKind};
use crate::time::SimTime;

/// Constant bit rate over UDP: one datagram of `size` bytes (on the wire) every interval.
pub struct Cbr {
    interval: SimTime,
    size: u32,
    next: SimTime,
    stop: Option<SimTime>,
    seq: u32,
    done: bool,
}

impl Cbr {
    pub fn new(rate_mbps: f64, size: u32, start: SimTime, stop: Option<SimTime>) -> Self {
        let interval = ((size as f64 * 8.0) / (rate_mbps * 1e6) * 1e9).round().max(1.0) as SimTime;
        Cbr {
            interval,
            size,
            next: start,
            stop,
            seq: 0,
            done: false,
        }
    }

    pub fn deadline(&self) -> Option<SimTime> {
        (!self.done).then_some(self.next)
    }

    pub fn on_timer(&mut self, ctx: &mut AppCtx) {
        if self.stop.is_some_and(|s| ctx.now >= s) {
            self.done = true;
            return;
        }
        ctx.out.push(Packet::new(
            ctx.flow,
            PacketKind::Datagram,
            0,
            self.seq,
            self.size,
            ctx.now,
        ));
        self.seq = self.seq.wrapping_add(1);
        self.next = self.next.saturating_add(self.interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::{Downloads, Endpoints};

    #[test]
    fn one_megabit_of_1000_byte_datagrams_is_one_every_8_ms_until_stop() {
        let mut cbr = Cbr::new(1.0, 1000, 0, Some(20_000_000));
        let mut ends = Endpoints::Udp;
        let mut out = Vec::new();
        let mut downloads = Downloads::default();
        while let Some(t) = cbr.deadline() {
            cbr.on_timer(&mut AppCtx {
                flow: 0,
                now: t,
                ends: &mut ends,
                out: &mut out,
                downloads: &mut downloads,
                path_rtt: 0,
            });
        }
        let times: Vec<SimTime> = out.iter().map(|p| p.timestamp).collect();
        assert_eq!(times, vec![0, 8_000_000, 16_000_000]);
    }
}
