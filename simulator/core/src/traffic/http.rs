use super::{AppCtx, Endpoints};
use crate::packet::{Packet, PacketKind};
use crate::rng::SimRng;
use crate::time::{from_secs, to_secs, SimTime};

/// Paper 000 §IV-A's web sessions: the client (at the receiver's end) sends one request packet
/// across the reverse path; the server answers with a Pareto-sized file over TCP (a fresh
/// connection each time); when the file is in, the client thinks for an exponential time and
/// asks again. A request lost on the way is re-sent after `request_timeout` (like a SYN retry).
pub struct Http {
    p: HttpParams,
    rng: SimRng,
    stop: Option<SimTime>,
    /// Number of the client's current request; responses carry it as their epoch.
    epoch: u32,
    requested_at: SimTime,
    phase: Phase,
}

pub struct HttpParams {
    pub mean_file_bytes: f64,
    pub shape: f64,
    pub mean_think_s: f64,
    pub request_size: u32,
    pub request_timeout: SimTime,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Idle { next_request: SimTime },
    AwaitingResponse { retry_at: SimTime },
    Receiving,
    Stopped,
}

impl Http {
    pub fn new(p: HttpParams, start: SimTime, stop: Option<SimTime>, rng: SimRng) -> Self {
        Http {
            p,
            rng,
            stop,
            epoch: 0,
            requested_at: start,
            phase: Phase::Idle { next_request: start },
        }
    }

    pub fn deadline(&self) -> Option<SimTime> {
        match self.phase {
            Phase::Idle { next_request } => Some(next_request),
            Phase::AwaitingResponse { retry_at } => Some(retry_at),
            Phase::Receiving | Phase::Stopped => None,
        }
    }

    fn send_request(&mut self, ctx: &mut AppCtx) {
        ctx.out.push(Packet::new(
            ctx.flow,
            PacketKind::Request,
            self.epoch,
            0,
            self.p.request_size,
            ctx.now,
        ));
        self.phase = Phase::AwaitingResponse {
            retry_at: ctx.now.saturating_add(self.p.request_timeout),
        };
    }

    pub fn on_timer(&mut self, ctx: &mut AppCtx) {
        match self.phase {
            _ if self.stop.is_some_and(|s| ctx.now >= s) => self.phase = Phase::Stopped,
            Phase::Idle { .. } => {
                self.epoch += 1;
                self.requested_at = ctx.now;
                self.send_request(ctx);
            }
            Phase::AwaitingResponse { .. } => self.send_request(ctx),
            Phase::Receiving | Phase::Stopped => {}
        }
    }

    /// The server side received request `epoch`: start the response if it is a new one.
    pub fn on_request(&mut self, ctx: &mut AppCtx, epoch: u32) {
        let fresh = match ctx.ends {
            Endpoints::Tcp { sender, .. } => epoch > sender.epoch(),
            Endpoints::Udp => false,
        };
        if fresh && epoch == self.epoch {
            let bytes = self.rng.pareto(self.p.mean_file_bytes, self.p.shape).round().max(1.0) as u64;
            ctx.start_transfer(Some(bytes), epoch);
            self.phase = Phase::Receiving;
        }
    }

    pub fn on_transfer_complete(&mut self, ctx: &mut AppCtx) {
        ctx.downloads.record(to_secs(ctx.now - self.requested_at));
        let think = from_secs(self.rng.exponential(self.p.mean_think_s));
        self.phase = Phase::Idle {
            next_request: ctx.now.saturating_add(think),
        };
    }
}
