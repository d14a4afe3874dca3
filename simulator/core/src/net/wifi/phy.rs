//! 802.11b/g PHY timing: the rates, how long a frame of a given size occupies the air at each,
//! and the DCF's interframe spaces, slot and contention window for each standard.
//!
//! Values from IEEE Std 802.11-2016: Clause 15 (DSSS) Table 15-5 and Clause 16 (HR/DSSS)
//! Table 16-4 for 802.11b (slot 20 µs, SIFS 10 µs, long PLCP preamble and header 192 µs at
//! 1 Mb/s, CWmin 31, CWmax 1023); Clause 17 Table 17-21 (OFDM PHY characteristics: 16 µs
//! preamble, 4 µs SIGNAL, 4 µs symbols, 16 SERVICE and 6 tail bits, eq. 17-29 for the symbol
//! count) with Clause 18 Table 18-5 (ERP characteristics: SIFS 10 µs plus a 6 µs signal
//! extension after each OFDM frame, slot 9 µs in a BSS of ERP stations only or 20 µs, CWmin 15,
//! CWmax 1023) for 802.11g; DIFS = SIFS + 2 slots (§10.3.2.3.5); EIFS = SIFS + the estimated
//! ACK time of Table 10-5 + DIFS (§10.3.2.3.7). ns-3 (`wifi-phy.cc` `Configure80211b/g`,
//! `ofdm-phy.cc`, `dsss-phy.cc`, `wifi-utils.cc` `GetEstimatedAckTxTime`) uses the same values.

use crate::time::SimTime;

const US: SimTime = 1_000;

/// Which PHY the BSS uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standard {
    /// 802.11b: DSSS (1, 2 Mb/s) and HR/DSSS CCK (5.5, 11 Mb/s), long preamble.
    B,
    /// 802.11g: ERP-OFDM (6–54 Mb/s) only, 2.4 GHz (so with the signal extension).
    G,
}

/// How a rate's bits are put on the air: what the error model needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modulation {
    Dbpsk,
    Dqpsk,
    Cck55,
    Cck11,
    /// OFDM: constellation size (2, 4, 16, 64) and the convolutional code's rate as the
    /// puncturing numerator `b` of b/(b+1) (1: 1/2, 2: 2/3, 3: 3/4).
    Ofdm {
        points: u16,
        code: u8,
    },
}

/// One rate of one PHY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    pub kbps: u32,
    pub modulation: Modulation,
}

const fn ofdm(mbps: u32, points: u16, code: u8) -> Mode {
    Mode {
        kbps: mbps * 1000,
        modulation: Modulation::Ofdm { points, code },
    }
}

/// 802.11b's rates (Clause 15, 16).
const B_MODES: [Mode; 4] = [
    Mode {
        kbps: 1000,
        modulation: Modulation::Dbpsk,
    },
    Mode {
        kbps: 2000,
        modulation: Modulation::Dqpsk,
    },
    Mode {
        kbps: 5500,
        modulation: Modulation::Cck55,
    },
    Mode {
        kbps: 11000,
        modulation: Modulation::Cck11,
    },
];

/// 802.11g's ERP-OFDM rates (Table 17-4: modulation and coding per rate).
const G_MODES: [Mode; 8] = [
    ofdm(6, 2, 1),
    ofdm(9, 2, 3),
    ofdm(12, 4, 1),
    ofdm(18, 4, 3),
    ofdm(24, 16, 1),
    ofdm(36, 16, 3),
    ofdm(48, 64, 2),
    ofdm(54, 64, 3),
];

/// The BSS basic rate set an ns-3 AP announces (`ap-wifi-mac.cc`: the mandatory rates but
/// HR/DSSS): 1 and 2 Mb/s for 802.11b; 1, 2, 6, 12 and 24 Mb/s for 802.11g. The ACK answers
/// at the highest of them not above the data rate (§10.6.6.5.2), so at 2 Mb/s for 11 Mb/s
/// data and at 24 Mb/s for 54 Mb/s.
const B_BASIC_KBPS: [u32; 2] = [1000, 2000];
const G_BASIC_KBPS: [u32; 3] = [6000, 12000, 24000];

/// An ACK frame: frame control, duration, RA, FCS (§9.3.1.4).
pub const ACK_BYTES: u32 = 14;
/// What a data frame adds to the IP packet: a non-QoS MAC header (24 bytes), LLC/SNAP (8) and
/// the FCS (4), as ns-3's non-HT data frames carry.
pub const MAC_OVERHEAD_BYTES: u32 = 36;

/// A standard at one data rate: every duration the DCF needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phy {
    pub standard: Standard,
    pub data: Mode,
    pub ack: Mode,
    pub slot: SimTime,
    pub sifs: SimTime,
    pub cw_min: u32,
    pub cw_max: u32,
}

impl Standard {
    pub fn modes(self) -> &'static [Mode] {
        match self {
            Standard::B => &B_MODES,
            Standard::G => &G_MODES,
        }
    }

    /// The rate of `kbps`, if the standard has it.
    pub fn mode(self, kbps: u32) -> Option<Mode> {
        self.modes().iter().copied().find(|m| m.kbps == kbps)
    }
}

impl Phy {
    /// `short_slot`: 9 µs slots (802.11g in a BSS of ERP stations only); ignored for 802.11b.
    /// None if the standard has no rate of `kbps`.
    pub fn new(standard: Standard, kbps: u32, short_slot: bool) -> Option<Phy> {
        let data = standard.mode(kbps)?;
        let basic: &[u32] = match standard {
            Standard::B => &B_BASIC_KBPS,
            Standard::G => &G_BASIC_KBPS,
        };
        let ack_kbps = basic.iter().copied().filter(|&b| b <= kbps).max().unwrap_or(basic[0]);
        let ack = standard.mode(ack_kbps).expect("basic rates are rates of the standard");
        let (slot, cw_min) = match standard {
            Standard::B => (20 * US, 31),
            Standard::G if short_slot => (9 * US, 15),
            Standard::G => (20 * US, 15),
        };
        Some(Phy {
            standard,
            data,
            ack,
            slot,
            sifs: 10 * US,
            cw_min,
            cw_max: 1023,
        })
    }

    pub fn difs(&self) -> SimTime {
        self.sifs + 2 * self.slot
    }

    /// Preamble and PHY header: DSSS long PLCP (144 + 48 µs at 1 Mb/s), OFDM 16 + 4 µs.
    pub fn preamble_and_header(&self) -> SimTime {
        match self.standard {
            Standard::B => 192 * US,
            Standard::G => 20 * US,
        }
    }

    /// How long a PPDU carrying `bytes` of MAC frame at `mode` occupies the medium (the ERP
    /// signal extension included: the medium is busy through it).
    pub fn duration(&self, mode: Mode, bytes: u32) -> SimTime {
        self.preamble_and_header() + self.payload_duration(mode, bytes)
    }

    /// The PSDU's part of `duration`: DSSS rounds up to whole µs (ns-3 `dsss-phy.cc`), OFDM
    /// to whole symbols of 4 µs with 16 SERVICE and 6 tail bits (eq. 17-29), plus 6 µs.
    pub fn payload_duration(&self, mode: Mode, bytes: u32) -> SimTime {
        let bits = 8 * bytes as u64;
        match self.standard {
            Standard::B => (bits * 1000).div_ceil(mode.kbps as u64) * US,
            Standard::G => {
                let per_symbol = mode.kbps as u64 * 4 / 1000;
                (16 + bits + 6).div_ceil(per_symbol) * 4 * US + 6 * US
            }
        }
    }

    /// A data frame's air time for an IP packet of `ip_bytes`.
    pub fn data_duration(&self, ip_bytes: u32) -> SimTime {
        self.duration(self.data, ip_bytes + MAC_OVERHEAD_BYTES)
    }

    pub fn ack_duration(&self) -> SimTime {
        self.duration(self.ack, ACK_BYTES)
    }

    /// PIFS = SIFS + a slot (§10.3.2.3.4): how long the air must be idle before the AP's
    /// beacon, which waits for no backoff (ns-3's beacon `Txop`: AIFSN 1, CW 0).
    pub fn pifs(&self) -> SimTime {
        self.sifs + self.slot
    }

    /// A beacon's airtime: at 1 Mb/s DSSS with the long preamble, as ns-3 sends them in 11b and
    /// 11g. Its body as ns-3's `ApWifiMac::SendOneBeacon` builds it for a BSS named `tcplab`
    /// (the cross-check's): timestamp 8, interval 2, capabilities 2, SSID 2 + 6, supported rates
    /// 2 + 4 (11b) or 2 + 8 and extended rates 2 + 4 (11g: 12 rates), TIM 6, DSSS parameter set
    /// 3, ERP information 3 (11g); with the MAC header and FCS, 63 or 76 bytes.
    pub fn beacon_duration(&self) -> SimTime {
        let bytes: u64 = match self.standard {
            Standard::B => 24 + 8 + 2 + 2 + 8 + 6 + 6 + 3 + 4,
            Standard::G => 24 + 8 + 2 + 2 + 8 + 10 + 6 + 6 + 3 + 3 + 4,
        };
        (192 + 8 * bytes) * US
    }

    /// How long a transmitter waits for the ACK after its frame ends before it counts a
    /// failure: SIFS + a slot + the ACK's preamble and header (§10.3.2.9; ns-3
    /// `FrameExchangeManager`). The DCF then waits DIFS before counting down.
    pub fn ack_timeout(&self) -> SimTime {
        self.sifs + self.slot + self.preamble_and_header()
    }

    /// EIFS after a frame received in error at `mode`: SIFS + Table 10-5's estimated ACK time
    /// for that PPDU + DIFS.
    pub fn eifs(&self, mode: Mode) -> SimTime {
        let estimated_ack = match mode.modulation {
            Modulation::Dbpsk => 304,
            Modulation::Dqpsk | Modulation::Cck55 | Modulation::Cck11 => 248,
            Modulation::Ofdm { points: 2, .. } => 44,
            Modulation::Ofdm { points: 4, .. } => 32,
            Modulation::Ofdm { .. } => 28,
        };
        self.sifs + estimated_ack * US + self.difs()
    }

    /// The contention window after `failures` failed attempts of the frame at the head:
    /// (CWmin + 1)·2^k − 1, at most CWmax (§10.3.3).
    pub fn cw_after(&self, failures: u32) -> u32 {
        let doubled = (self.cw_min as u64 + 1) << failures.min(20);
        (doubled - 1).min(self.cw_max as u64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(t: SimTime) -> f64 {
        t as f64 / 1e3
    }

    #[test]
    fn an_80211b_frame_at_11_mbps_takes_the_long_preamble_and_whole_microseconds_of_payload() {
        let phy = Phy::new(Standard::B, 11_000, true).unwrap();
        // 1500-byte IP packet: 1536 bytes of MAC frame, 12,288 bits at 11 Mb/s = 1117.1 µs.
        assert_eq!(us(phy.data_duration(1500)), 192.0 + 1118.0);
        assert_eq!(phy.ack.kbps, 2000, "the highest basic rate at or below 11 Mb/s");
        assert_eq!(us(phy.ack_duration()), 192.0 + 56.0);
        assert_eq!((us(phy.slot), us(phy.sifs), us(phy.difs())), (20.0, 10.0, 50.0));
        assert_eq!((phy.cw_min, phy.cw_max), (31, 1023));
        assert_eq!(us(phy.eifs(phy.data)), 10.0 + 248.0 + 50.0);
        assert_eq!((us(phy.pifs()), us(phy.beacon_duration())), (30.0, 192.0 + 8.0 * 63.0));
    }

    #[test]
    fn an_80211g_frame_at_54_mbps_takes_whole_symbols_and_the_signal_extension() {
        let phy = Phy::new(Standard::G, 54_000, true).unwrap();
        // (16 + 12,288 + 6) bits / 216 per symbol = 57 symbols.
        assert_eq!(us(phy.data_duration(1500)), 20.0 + 57.0 * 4.0 + 6.0);
        assert_eq!(phy.ack.kbps, 24_000);
        // ACK: (16 + 112 + 6) / 96 = 2 symbols.
        assert_eq!(us(phy.ack_duration()), 20.0 + 8.0 + 6.0);
        assert_eq!((us(phy.slot), us(phy.difs())), (9.0, 28.0));
        assert_eq!(us(Phy::new(Standard::G, 54_000, false).unwrap().difs()), 50.0);
        assert_eq!(phy.cw_min, 15);
        assert!(
            Phy::new(Standard::G, 11_000, true).is_none(),
            "no DSSS rates in our 802.11g"
        );
    }

    #[test]
    fn the_contention_window_doubles_from_cwmin_up_to_cwmax() {
        let phy = Phy::new(Standard::G, 54_000, true).unwrap();
        let cws: Vec<u32> = (0..8).map(|k| phy.cw_after(k)).collect();
        assert_eq!(cws, [15, 31, 63, 127, 255, 511, 1023, 1023]);
        assert_eq!(phy.cw_after(u32::MAX), 1023);
    }
}
