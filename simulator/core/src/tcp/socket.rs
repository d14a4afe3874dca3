//! The state a congestion-control variant reads and writes (after ns-3's TcpSocketState).

use crate::time::SimTime;

/// Linux/ns-3 congestion states: the variant can tell whether a hook runs in recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// Normal operation: slow start or congestion avoidance.
    Open,
    /// Duplicate ACKs seen, below the threshold.
    Disorder,
    /// Fast recovery after a fast retransmit.
    Recovery,
    /// After a retransmission timeout, until the data outstanding then is acknowledged.
    Loss,
}

#[derive(Clone, Debug)]
pub struct SocketState {
    /// Congestion window in segments; fractional so congestion avoidance can add 1/cwnd.
    pub cwnd: f64,
    /// Slow-start threshold in segments.
    pub ssthresh: f64,
    /// Oldest unacknowledged segment (the cumulative ACK point).
    pub snd_una: u32,
    /// Next segment to send (moves back to snd_una on a timeout: go-back-N).
    pub snd_nxt: u32,
    /// One past the highest segment ever sent.
    pub high_tx: u32,
    pub ca_state: CaState,
    /// Receiver window, segments: never more than this outstanding.
    pub max_window: u32,
    /// RFC 6298 smoothed RTT, once sampled.
    pub srtt: Option<SimTime>,
    /// Lowest RTT seen on the connection.
    pub min_rtt: Option<SimTime>,
    /// The recovery in progress does not inflate cwnd (ns-2's FACK and Sack1, whose cwnd during
    /// recovery is their window): `window_in_use` takes it whole.
    pub cwnd_uninflated_in_recovery: bool,
}

impl SocketState {
    pub fn new(initial_cwnd: f64, initial_ssthresh: f64, max_window: u32) -> Self {
        SocketState {
            cwnd: initial_cwnd,
            ssthresh: initial_ssthresh,
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            ca_state: CaState::Open,
            max_window,
            srtt: None,
            min_rtt: None,
            cwnd_uninflated_in_recovery: false,
        }
    }

    /// Segments sent and not yet cumulatively acknowledged (RFC 5681 FlightSize).
    pub fn flight(&self) -> u32 {
        self.snd_nxt.saturating_sub(self.snd_una)
    }

    /// The window the sender is really allowed, without fast recovery's temporary inflation.
    pub fn window_in_use(&self) -> f64 {
        let inflated = self.ca_state == CaState::Recovery && !self.cwnd_uninflated_in_recovery;
        let w = if inflated {
            self.cwnd.min(self.ssthresh)
        } else {
            self.cwnd
        };
        w.min(self.max_window as f64)
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// The usable window: the smaller of cwnd and the receiver window.
    pub fn window(&self) -> u32 {
        (self.cwnd.floor() as u64).min(self.max_window as u64) as u32
    }
}
