//! Applications: what each flow wants to send and when. An application drives its flow's
//! endpoints through `AppCtx` and exposes one deadline, its next timer.

mod cbr;
mod ftp;
mod http;

pub use cbr::Cbr;
pub use ftp::Ftp;
pub use http::Http;

use crate::packet::Packet;
use crate::rng::SimRng;
use crate::scenario::AppSpec;
use crate::tcp::{TcpReceiver, TcpSender};
use crate::time::{from_secs, SimTime};

/// A flow's transport endpoints. Kept inline (not boxed) although UDP's variant is small:
/// flows live in one Vec and the TCP path is the hot one.
#[allow(clippy::large_enum_variant)]
pub enum Endpoints {
    Tcp {
        sender: TcpSender,
        receiver: TcpReceiver,
    },
    /// UDP has no state beyond the flow's counters.
    Udp,
}

/// Completed transfers, over the whole run (download response times).
#[derive(Clone, Copy, Debug, Default)]
pub struct Downloads {
    pub count: u64,
    pub total_s: f64,
}

impl Downloads {
    fn record(&mut self, seconds: f64) {
        self.count += 1;
        self.total_s += seconds;
    }
}

/// What an application's hooks may act on.
pub struct AppCtx<'a> {
    pub flow: u32,
    pub now: SimTime,
    pub ends: &'a mut Endpoints,
    pub out: &'a mut Vec<Packet>,
    pub downloads: &'a mut Downloads,
    /// The flow's propagation round trip (a new connection's handshake would measure it).
    pub path_rtt: SimTime,
}

impl AppCtx<'_> {
    /// Starts a TCP transfer of `bytes` (None: endless) as transfer number `epoch`.
    fn start_transfer(&mut self, bytes: Option<u64>, epoch: u32) {
        if let Endpoints::Tcp { sender, receiver } = self.ends {
            receiver.expect(
                epoch,
                bytes.map(|b| crate::tcp::transfer_shape(b, sender.mss())),
                sender.quickacks(),
            );
            sender.start(bytes, epoch, self.now, self.path_rtt, self.out);
        }
    }
}

pub enum App {
    Ftp(Ftp),
    Cbr(Cbr),
    /// Boxed: its parameters and random stream are most of an app's size, and most flows are FTP.
    Http(Box<Http>),
}

impl App {
    pub fn new(spec: &AppSpec, start: SimTime, stop: Option<SimTime>, header_bytes: u32, rng: SimRng) -> Self {
        match spec {
            AppSpec::Ftp { bytes } => App::Ftp(Ftp::new(*bytes, start, stop)),
            AppSpec::Cbr {
                rate_mbps,
                packet_bytes,
            } => App::Cbr(Cbr::new(*rate_mbps, *packet_bytes, start, stop)),
            AppSpec::Http {
                mean_file_bytes,
                shape,
                mean_think_s,
                request_bytes,
                request_timeout_s,
            } => App::Http(Box::new(Http::new(
                http::HttpParams {
                    mean_file_bytes: *mean_file_bytes,
                    shape: *shape,
                    mean_think_s: *mean_think_s,
                    request_size: request_bytes + header_bytes,
                    request_timeout: from_secs(*request_timeout_s),
                },
                start,
                stop,
                rng,
            ))),
        }
    }

    /// When the application next needs its timer.
    pub fn deadline(&self) -> Option<SimTime> {
        match self {
            App::Ftp(a) => a.deadline(),
            App::Cbr(a) => a.deadline(),
            App::Http(a) => a.deadline(),
        }
    }

    pub fn on_timer(&mut self, ctx: &mut AppCtx) {
        match self {
            App::Ftp(a) => a.on_timer(ctx),
            App::Cbr(a) => a.on_timer(ctx),
            App::Http(a) => a.on_timer(ctx),
        }
    }

    /// The receiver holds the whole current transfer.
    pub fn on_transfer_complete(&mut self, ctx: &mut AppCtx) {
        match self {
            App::Ftp(a) => a.on_transfer_complete(ctx),
            App::Http(a) => a.on_transfer_complete(ctx),
            App::Cbr(_) => {}
        }
    }

    /// A request reached the server side.
    pub fn on_request(&mut self, ctx: &mut AppCtx, epoch: u32) {
        if let App::Http(a) = self {
            a.on_request(ctx, epoch);
        }
    }
}
