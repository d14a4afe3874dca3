use super::AppCtx;
use crate::time::{to_secs, SimTime};

/// Bulk transfer: endless, or `bytes` long with its download response time recorded.
pub struct Ftp {
    bytes: Option<u64>,
    start: SimTime,
    stop: Option<SimTime>,
    started: bool,
    stopped: bool,
}

impl Ftp {
    pub fn new(bytes: Option<u64>, start: SimTime, stop: Option<SimTime>) -> Self {
        Ftp {
            bytes,
            start,
            stop,
            started: false,
            stopped: false,
        }
    }

    pub fn deadline(&self) -> Option<SimTime> {
        if !self.started {
            Some(self.start)
        } else if !self.stopped {
            self.stop
        } else {
            None
        }
    }

    pub fn on_timer(&mut self, ctx: &mut AppCtx) {
        if !self.started {
            self.started = true;
            ctx.start_transfer(self.bytes, 1);
        } else if self.stop.is_some_and(|s| ctx.now >= s) {
            self.stopped = true;
            if let super::Endpoints::Tcp { sender, .. } = ctx.ends {
                sender.stop_new_data();
            }
        }
    }

    pub fn on_transfer_complete(&mut self, ctx: &mut AppCtx) {
        ctx.downloads.record(to_secs(ctx.now - self.start));
    }
}
