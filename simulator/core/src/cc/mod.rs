//! Congestion control: one small trait acting on the shared socket state, one file per variant.
//!
//! A variant decides three things: how the window grows on new ACKs while no loss is being
//! repaired (`on_ack`), where the slow-start threshold goes after a loss (`ssthresh`), and
//! which loss-recovery behaviour the sender runs (`recovery`). Time always comes in as `now`;
//! a variant never reads a clock, which keeps runs deterministic.
//!
//! The two that researchers compare against today fit the same trait:
//! - **CUBIC** (`cubic.rs`, RFC 9438) is time-driven: its window is W_cubic(t) with t the time
//!   since congestion avoidance began. It keeps that epoch start from the `now` passed to
//!   `on_ack`, reads `SocketState::srtt` for the one-RTT look-ahead, and needs no new hook:
//!   the window is recomputed on every ACK, as Linux does.
//! - **BBR** (`bbr.rs`, BBRv1) is rate-driven: it asks for delivery-rate samples
//!   (`wants_rate_samples`; the sender then keeps per-segment snapshots in
//!   `tcp/delivery.rs`), gets one on every ACK in or out of recovery (`on_delivery`), sets
//!   `cwnd` as a cap (2·BDP) and returns a `pacing_rate`. The sender spaces transmissions at
//!   that rate with a per-flow `Pace` timer; for every window-based variant `pacing_rate` is
//!   None and neither the snapshots nor the timer exist.

mod aimd;
mod bbr;
mod cubic;
mod fack;
mod hystart;
mod newreno_impatient;
mod newreno_sbs;
mod pseudo_rate;
mod rate_halving;
mod reno;
mod sack;
mod ssdr;
mod tahoe;
mod vegas;

// ns-3.44's other variants (issue 17).
mod bic;
mod highspeed;
mod htcp;
mod hybla;
mod illinois;
mod ledbat;
mod lp;
mod scalable;
mod veno;
mod westwood;
mod yeah;

// Datacenter TCP (issue 17).
mod dctcp;
mod prague;

pub use aimd::Aimd;
pub use bbr::{AckAggregationParams, Bbr, BbrParams, LongTermBwParams};
pub use cubic::{Cubic, CubicParams, RenoFriendly};
pub use hybla::HyblaParams;
pub use hystart::{HyStart, HystartParams};
pub use ledbat::LedbatParams;
pub use lp::LpParams;
pub use prague::PragueParams;
pub use pseudo_rate::{PseudoRate, PseudoRateParams};
pub use scalable::ScalableParams;
pub use ssdr::{Ssdr, SsdrParams};
pub use vegas::{Vegas, VegasParams};
pub use veno::VenoParams;
pub use yeah::YeahParams;

use crate::scenario::TcpConfig;
use crate::tcp::{RateSample, Recovery, SocketState};
use crate::time::SimTime;

pub trait CongestionControl: Send {
    /// The variant's name as scenarios spell it.
    fn name(&self) -> &'static str;

    /// Which loss-recovery behaviour the sender follows for this variant.
    fn recovery(&self) -> Recovery;

    /// A new cumulative ACK arrived outside recovery, acknowledging `acked` segments.
    fn on_ack(&mut self, s: &mut SocketState, acked: u32, now: SimTime);

    /// The slow-start threshold after a congestion event (fast retransmit or timeout): half
    /// the window in use, at least 2 segments. Like ns-2 and Linux (tcp_reno_ssthresh) this
    /// halves the window rather than RFC 5681's FlightSize; they differ only when a timeout
    /// strikes during fast recovery, where paper 000 §III-C's Impatient model assumes the
    /// halved window (ssthresh = W/4), not the flight of the whole old window.
    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        (s.window_in_use() / 2.0).max(2.0)
    }

    /// ECE arrived (RFC 3168 §6.1.2; the sender calls this at most once per window of data, and
    /// not while it repairs a loss): the new slow-start threshold, which the sender also makes
    /// cwnd, without retransmitting or inflating. By default a loss's (`ssthresh`); DCTCP
    /// (RFC 8257) scales by its marked fraction here instead.
    fn on_ecn_echo(&mut self, s: &SocketState, now: SimTime) -> f64 {
        self.ssthresh(s, now)
    }

    /// Every ACK of a flow that runs ECN, in or out of recovery, after the sender took in its
    /// cumulative ACK: `acked` segments newly acknowledged, `ece` whether it echoed CE. DCTCP
    /// estimates its marked fraction from these (RFC 8257 §3.3).
    fn on_ecn_ack(&mut self, _s: &SocketState, _acked: u32, _ece: bool, _now: SimTime) {}

    /// The variant runs ECN whatever `tcp.ecn` says, and its receiver echoes the CE state of
    /// every segment (RFC 8257 §3.2) instead of RFC 3168's ECE-until-CWR: DCTCP (as ns-3's
    /// `TcpDctcp::Init` forces its `DctcpEcn` mode).
    fn precise_ecn(&self) -> bool {
        false
    }

    /// The variant sends ECT(1), the L4S identifier, whatever `tcp.l4s` says (Prague).
    fn l4s(&self) -> bool {
        false
    }

    /// The variant paces at Linux's rate from cwnd and SRTT when the scenario names no
    /// `tcp.pacing` (Prague, which Linux runs paced).
    fn paces(&self) -> bool {
        false
    }

    /// The variant keeps growing in the round after an ECE reduction even where
    /// `tcp.ecn_reduction_holds_window` holds the others' (Prague: Linux runs it as its own
    /// `cong_control`, which grows on every unmarked ACK outside loss recovery).
    fn grows_in_cwr(&self) -> bool {
        false
    }

    /// DCTCP's α (RFC 8257 §3.3), the estimated fraction of data marked, averaged over the
    /// segments acknowledged since `open_window`; None for other variants.
    fn ecn_alpha(&self) -> Option<f64> {
        None
    }

    /// The measurement window opens: a variant's own averages for the results start again.
    fn open_window(&mut self) {}

    /// Every RTT measurement from an ACK's timestamp echo (delay-based variants use these).
    fn on_rtt_sample(&mut self, _s: &SocketState, _rtt: SimTime, _now: SimTime) {}

    /// After a retransmission timeout collapsed the window to one segment.
    fn on_timeout(&mut self, _s: &mut SocketState, _now: SimTime) {}

    /// New data is about to leave with nothing in flight after the application had run out of
    /// data (Linux's CA_EVENT_TX_START with tp->app_limited): a restart from idle. Called only
    /// when `wants_rate_samples` (the app-limited mark is the delivery-rate state's).
    fn on_tx_start(&mut self, _s: &mut SocketState, _now: SimTime) {}

    /// Whether the variant models the path from delivery-rate samples (`on_delivery`). Only
    /// then does the sender keep per-segment delivery state.
    fn wants_rate_samples(&self) -> bool {
        false
    }

    /// Every ACK, in or out of recovery, after the sender's loss-recovery mechanics and before
    /// it sends: the delivery-rate sample the ACK yields. Rate-based variants (BBR) set `cwnd`
    /// here; called only when `wants_rate_samples`.
    fn on_delivery(&mut self, _s: &mut SocketState, _rs: &RateSample, _now: SimTime) {}

    /// The rate the sender paces transmissions at, in segments per second; None (every
    /// window-based variant) sends as soon as the window allows. Decided once per connection:
    /// a variant that paces returns Some from the start.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }

    /// Whether the variant starts its own way rather than by RFC 5681's slow start (Vegas,
    /// SSDR, Pseudo-Rate, BBR): HyStart++ (`tcp.hystart`) then leaves it alone.
    fn own_slow_start(&self) -> bool {
        false
    }
}

/// Every variant tcpsim knows, as scenarios name them, with what each is.
pub const VARIANTS: &[(&str, &str)] = &[
    ("tahoe", "4.3BSD-Tahoe: fast retransmit, then slow start from one segment (Jacobson 1988)"),
    ("reno", "Reno fast recovery, left on any new ACK (RFC 5681)"),
    ("newreno-sbs", "NewReno Slow-but-Steady: timer reset on every partial ACK (RFC 3782 §4)"),
    ("newreno-impatient", "NewReno Impatient: timer reset on the first partial ACK only (RFC 3782 §4)"),
    ("sack", "SACK-based conservative loss recovery with pipe and scoreboard (RFC 6675)"),
    ("vegas", "Vegas delay-based congestion avoidance with alpha/beta/gamma (Brakmo & Peterson 1995)"),
    ("cubic", "CUBIC: window a cubic function of the time since the last loss, beta 0.7, Reno-friendly (RFC 9438)"),
    ("bbr", "BBRv1: paced at the windowed-max delivery rate, cwnd 2 BDP, Startup/Drain/ProbeBW/ProbeRTT (Cardwell et al. 2016)"),
    ("fack", "Forward Acknowledgment: SACK recovery on awnd = snd.nxt - snd.fack + retran_data (Mathis & Mahdavi 1996)"),
    ("rate-halving", "FACK recovery with cwnd halved gradually, one segment per two ACKs (Mathis et al. draft 1999)"),
    ("ssdr", "Smooth-start and dynamic recovery, sender-only (Wang & Williamson 1998)"),
    ("pseudo-rate", "Vegas with one RTT sample per cycle, exponential increase and direct drop to a window bound (Chen & Chen 1999)"),
    // ns-3.44's other variants (issue 17).
    ("highspeed", "HighSpeed TCP: increase a(w) and decrease b(w) grow and shrink with the window above 38 segments (RFC 3649)"),
    ("scalable", "Scalable TCP: +0.01 segment per ACK and a 1/8 decrease above a legacy window of 50 (Kelly 2003)"),
    ("bic", "BIC: binary search towards the last maximum window, max probing past it, beta 0.8 (Xu, Harfoush & Rhee 2004)"),
    ("htcp", "H-TCP: increase growing with the time since the last loss, beta = RTTmin/RTTmax in [0.5, 0.8] (Leith & Shorten 2004)"),
    ("hybla", "Hybla: growth scaled by rho = RTT/25 ms (2^rho - 1 per ACK in slow start, rho^2/w after) to match a 25 ms flow (Caini & Firrincieli 2004)"),
    ("westwood-plus", "Westwood+: ssthresh = bandwidth estimate (per-RTT samples, Tustin filter) x min RTT after a loss (Mascolo et al. 2001)"),
    ("veno", "Veno: a loss with fewer than 3 packets queued (Vegas's N) keeps 4/5 of the window, else halves (Fu & Liew 2003)"),
    ("illinois", "TCP-Illinois: increase alpha (0.3-10) and decrease beta (1/8-1/2) set by the queueing delay (Liu, Basar & Srikant 2006)"),
    ("ledbat", "LEDBAT: a scavenger holding its queueing delay near a 100 ms target, gain 1, base delay over 10 minutes (RFC 6817; RTT-based here)"),
    ("lp", "TCP-LP: Reno that halves on an early delay indication (15 % of the delay range) and yields to standard TCP (Kuzmanovic & Knightly 2003)"),
    ("yeah", "YeAH-TCP: Scalable's increase while its queue estimate is below 80 packets, Reno's above, precautionary decongestion (Baiocchi, Castellani & Vacirca 2007)"),
    // Datacenter TCP and L4S (issue 17).
    ("dctcp", "DCTCP: cwnd x (1 - alpha/2) once per window of marks, alpha the marked fraction's EWMA with g = 1/16, precise CE echo; ECN always on (RFC 8257)"),
    ("prague", "TCP Prague: DCTCP's response to marks sent as ECT(1) (L4S), paced, additive increase scaled by (SRTT/25 ms)^2 below 25 ms (RFC 9331 §4.3)"),
];

/// Builds the named variant, or None for a name not in `VARIANTS`. A variant with knobs takes
/// its own `<Name>Params` from the flow's `TcpConfig` (`cfg.cubic`, `cfg.vegas`, ...). With
/// `tcp.hystart`, one that slow-starts by RFC 5681 leaves its first slow start by HyStart++.
pub fn build(name: &str, cfg: &TcpConfig) -> Option<Box<dyn CongestionControl>> {
    let cc = variant(name, cfg)?;
    Some(match &cfg.hystart {
        Some(params) if !cc.own_slow_start() => Box::new(HyStart::new(cc, params)),
        _ => cc,
    })
}

fn variant(name: &str, cfg: &TcpConfig) -> Option<Box<dyn CongestionControl>> {
    Some(match name {
        "tahoe" => Box::new(tahoe::TAHOE),
        "reno" => Box::new(reno::RENO),
        "newreno-sbs" => Box::new(newreno_sbs::NEWRENO_SBS),
        "newreno-impatient" => Box::new(newreno_impatient::NEWRENO_IMPATIENT),
        "sack" => Box::new(sack::SACK),
        "vegas" => Box::new(Vegas::new(&cfg.vegas)),
        "fack" => Box::new(fack::FACK),
        "rate-halving" => Box::new(rate_halving::RATE_HALVING),
        "ssdr" => Box::new(Ssdr::new(&cfg.ssdr)),
        "pseudo-rate" => Box::new(PseudoRate::new(&cfg.pseudo_rate)),
        "cubic" => Box::new(Cubic::new(&cfg.cubic, cfg.sack)),
        "bbr" => Box::new(Bbr::new(cfg)),
        // ns-3.44's other variants (issue 17).
        "highspeed" => Box::new(highspeed::HighSpeed::new(cfg.sack)),
        "scalable" => Box::new(scalable::Scalable::new(&cfg.scalable, cfg.sack)),
        "bic" => Box::new(bic::Bic::new(cfg.sack)),
        "htcp" => Box::new(htcp::Htcp::new(cfg.sack)),
        "hybla" => Box::new(hybla::Hybla::new(&cfg.hybla, cfg.sack)),
        "westwood-plus" => Box::new(westwood::Westwood::new(cfg.sack)),
        "veno" => Box::new(veno::Veno::new(&cfg.veno, cfg.sack)),
        "illinois" => Box::new(illinois::Illinois::new(cfg.sack)),
        "ledbat" => Box::new(ledbat::Ledbat::new(&cfg.ledbat, cfg.sack)),
        "lp" => Box::new(lp::Lp::new(&cfg.lp, cfg.sack)),
        "yeah" => Box::new(yeah::Yeah::new(&cfg.yeah, cfg.sack)),
        "dctcp" => Box::new(dctcp::Dctcp::new(cfg.sack)),
        "prague" => Box::new(prague::Prague::new(&cfg.prague, cfg.sack)),
        _ => return None,
    })
}

pub fn is_known(name: &str) -> bool {
    VARIANTS.iter().any(|(n, _)| *n == name)
}

/// The variants that recover with SACK (RFC 6675's scoreboard) unless `tcp.sack` is false: the
/// ones RACK-TLP (`tcp.rack`, and the `linux` profile's) can serve.
pub fn sack_variants() -> impl Iterator<Item = &'static str> {
    VARIANTS
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| build(name, &TcpConfig::default()).is_some_and(|cc| cc.recovery() == crate::tcp::Recovery::Sack))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_variant_builds_and_reports_its_own_name() {
        for (name, _) in VARIANTS {
            let cc = build(name, &TcpConfig::default()).unwrap();
            assert_eq!(cc.name(), *name);
        }
        assert!(build("cubic-ish", &TcpConfig::default()).is_none());
    }

    #[test]
    fn the_sack_variants_are_the_ones_ns3_and_linux_run_with_sack_and_not_the_papers_renos() {
        let sack: Vec<&str> = sack_variants().collect();
        for name in ["sack", "cubic", "bbr", "dctcp", "highspeed", "westwood-plus"] {
            assert!(sack.contains(&name), "{name}: {sack:?}");
        }
        for name in ["reno", "newreno-sbs", "tahoe", "vegas", "fack", "ssdr"] {
            assert!(!sack.contains(&name), "{name}: {sack:?}");
        }
    }
}
