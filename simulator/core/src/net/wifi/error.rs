//! Frame error rate from SNR, per rate: the models ns-3 uses, so the cross-check compares MACs
//! and not error curves.
//!
//! OFDM (802.11g): the uncoded bit error rate of the constellation in AWGN (BPSK
//! ½·erfc(√γ), QPSK ½·erfc(√(γ/2)), M-QAM (√M−1)/(√M·log₂√M)·erfc(√(γ/(2(M−1)/3))))
//! under a union bound on the first event error of the punctured convolutional code
//! (Pe ≤ 1/(2b) Σ_d c_d·D^d with D = √(4p(1−p)), the distance spectra of Frenger, Orten and
//! Ottosson 1999 / Haccoun and Bégin 1989 as tabulated by Miller), the chunk succeeding with
//! (1 − Pe)^bits: G. Pei and T. R. Henderson, "Validation of OFDM error rate model in ns-3",
//! Boeing, 2010 — ns-3's `NistErrorRateModel`.
//!
//! DSSS (802.11b): DBPSK ½·exp(−Eb/N0); DQPSK the approximation of ns-3's `DqpskFunction`
//! (Proakis, Digital Communications, §5.2.8); CCK-16 and CCK-256 by the symbol error of M-ary
//! orthogonal signalling, 1 − ∫(2Φ(x+β)−1)^(n−1) φ(x) dx from −β (β = √(2·Es/N0), n = 8), the
//! symbol error of CCK-256 from two CCK-16 halves — ns-3's `DsssErrorRateModel` as built with
//! GSL (its fallback, a curve fitted in Matlab, is not reproduced). Eb/N0 = SNR × 22 MHz / bit
//! rate (11 Mchip/s spread over 22 MHz).
//!
//! A frame succeeds when its PHY header (at its own rate: 48 bits at 1 Mb/s for DSSS, the
//! 24-bit SIGNAL at 6 Mb/s for OFDM) and its payload (rate × payload duration bits) both do
//! (ns-3's `InterferenceHelper`). Every preamble is detected: the ns-3 reference removes
//! `ThresholdPreambleDetectionModel`, which by default loses every frame below 4 dB.

use std::f64::consts::{PI, SQRT_2};

use super::phy::{Mode, Modulation, Phy, Standard, ACK_BYTES, MAC_OVERHEAD_BYTES};

/// erfc(x), fractional error below 1.2e-7 everywhere (Numerical Recipes' `erfcc`, a Chebyshev
/// fit): enough for bit error rates far below 1e-10, where relative accuracy matters.
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * (-z * z + poly).exp();
    if x >= 0.0 {
        r.min(1.0) // the fit overshoots 1 by 5e-8 at 0
    } else {
        2.0 - r
    }
}

/// The upper tail of the standard normal distribution, Q(x) = 1 − Φ(x).
fn q(x: f64) -> f64 {
    0.5 * erfc(x / SQRT_2)
}

/// Bit error rate of an uncoded constellation of `points` at SNR γ (linear).
fn constellation_ber(points: u16, snr: f64) -> f64 {
    match points {
        2 => 0.5 * erfc(snr.sqrt()),
        4 => 0.5 * erfc((snr / 2.0).sqrt()),
        m => {
            let z = (snr / (2.0 * (m as f64 - 1.0) / 3.0)).sqrt();
            let root = (m as f64).sqrt();
            (root - 1.0) / (root * root.log2()) * erfc(z)
        }
    }
}

/// Union bound on the convolutional code's error-event probability at raw bit error `p`, for
/// rate b/(b+1) (Pei & Henderson 2010, eqs. 3–5; the distance spectra of ns-3's
/// `CalculatePe`).
fn coded_error(p: f64, code: u8) -> f64 {
    let d = (4.0 * p * (1.0 - p)).sqrt();
    let sum = |first: i32, step: i32, c: &[f64]| -> f64 {
        c.iter()
            .enumerate()
            .map(|(i, c)| c * d.powi(first + step * i as i32))
            .sum()
    };
    let pe = match code {
        1 => {
            0.5 * sum(
                10,
                2,
                &[
                    36.0,
                    211.0,
                    1404.0,
                    11633.0,
                    77433.0,
                    502690.0,
                    3322763.0,
                    21292910.0,
                    134365911.0,
                ],
            )
        }
        2 => {
            0.25 * sum(
                6,
                1,
                &[
                    3.0, 70.0, 285.0, 1276.0, 6160.0, 27128.0, 117019.0, 498860.0, 2103891.0, 8784123.0,
                ],
            )
        }
        3 => {
            sum(
                5,
                1,
                &[
                    42.0,
                    201.0,
                    1492.0,
                    10469.0,
                    62935.0,
                    379644.0,
                    2253373.0,
                    13073811.0,
                    75152755.0,
                    428005675.0,
                ],
            ) / 6.0
        }
        _ => unreachable!("802.11g codes are rate 1/2, 2/3 and 3/4"),
    };
    pe.min(1.0)
}

/// Symbol error of M-ary orthogonal signalling with n = 8 (CCK-16) at `es_n0`:
/// Q(β) + ∫_{−β}^{∞} (1 − (1 − 2Q(x+β))⁷) φ(x) dx, β = √(2·Es/N0), integrated by Simpson's rule
/// (the two terms equal 1 − ns-3's GSL integral without its cancellation).
fn cck16_symbol_error(es_n0: f64) -> f64 {
    let beta = (2.0 * es_n0).sqrt();
    let (a, b) = (-beta, 10.0_f64.max(-beta + 1.0));
    let f = |x: f64| {
        let e = (2.0 * q(x + beta)).min(1.0);
        let miss = -((7.0 * (-e).ln_1p()).exp_m1());
        miss * (-x * x / 2.0).exp() / (2.0 * PI).sqrt()
    };
    const N: usize = 2000;
    let h = (b - a) / N as f64;
    let mut s = f(a) + f(b);
    for i in 1..N {
        s += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    (q(beta) + s * h / 3.0).min(1.0)
}

/// A mode's error per unit at SNR γ: the probability that one unit fails and how many bits a
/// unit carries (a bit, or a CCK symbol of 4 or 8 bits), so a chunk of n bits succeeds with
/// (1 − p)^(n / unit).
fn unit_error(mode: Mode, snr: f64) -> (f64, f64) {
    match mode.modulation {
        Modulation::Dbpsk => (0.5 * (-snr * 22.0).exp(), 1.0),
        Modulation::Dqpsk => {
            let x = snr * 11.0;
            let ber = (SQRT_2 + 1.0) / (8.0 * PI * SQRT_2).sqrt() / x.sqrt() * (-(2.0 - SQRT_2) * x).exp();
            (ber.min(0.5), 1.0)
        }
        Modulation::Cck55 => {
            let eb_n0 = snr * 22.0 / 1.375 / 4.0;
            (cck16_symbol_error(2.0 * eb_n0), 4.0)
        }
        Modulation::Cck11 => {
            let eb_n0 = snr * 22.0 / 1.375 / 8.0;
            let half = cck16_symbol_error(4.0 * eb_n0 / 2.0);
            (1.0 - (1.0 - half) * (1.0 - half), 8.0)
        }
        Modulation::Ofdm { points, code } => {
            let ber = constellation_ber(points, snr);
            (if ber == 0.0 { 0.0 } else { coded_error(ber, code) }, 1.0)
        }
    }
}

/// Success probability of `bits` bits at `mode`, given its unit error.
fn chunk_success((p, unit): (f64, f64), bits: f64) -> f64 {
    (1.0 - p).powf(bits / unit).min(1.0)
}

/// One receiver's error rates at one SNR, kept until the SNR changes (`SuccessCache`): the CCK
/// integral is too dear to evaluate per frame.
#[derive(Clone, Copy, Debug)]
pub struct LinkErrors {
    snr_db: f64,
    header: (f64, f64),
    data: (f64, f64),
    ack: (f64, f64),
}

impl LinkErrors {
    pub fn new(phy: &Phy, snr_db: f64) -> Self {
        let snr = 10f64.powf(snr_db / 10.0);
        LinkErrors {
            snr_db,
            header: unit_error(header_mode(phy), snr),
            data: unit_error(phy.data, snr),
            ack: unit_error(phy.ack, snr),
        }
    }

    fn frame_success(&self, phy: &Phy, mode: Mode, payload: (f64, f64), mac_bytes: u32) -> f64 {
        let header_bits = match phy.standard {
            Standard::B => 48.0,
            Standard::G => 24.0,
        };
        // ns-3 (`InterferenceHelper::CalculateChunkSuccessRate`): rate × duration, truncated.
        let payload_bits = (mode.kbps as u64 * phy.payload_duration(mode, mac_bytes) / 1_000_000) as f64;
        chunk_success(self.header, header_bits) * chunk_success(payload, payload_bits)
    }

    /// Probability that a data frame carrying an IP packet of `ip_bytes` is received.
    pub fn data_success(&self, phy: &Phy, ip_bytes: u32) -> f64 {
        self.frame_success(phy, phy.data, self.data, ip_bytes + MAC_OVERHEAD_BYTES)
    }

    /// Probability that the ACK is received.
    pub fn ack_success(&self, phy: &Phy) -> f64 {
        self.frame_success(phy, phy.ack, self.ack, ACK_BYTES)
    }
}

/// A receiver's success probabilities at its current SNR, for the ACK and the last two frame
/// sizes: a station's link carries data one way and TCP ACKs the other, and each success costs
/// a `powf` (a tenth of a Wi-Fi run's instructions before this cache).
#[derive(Clone, Copy, Debug)]
pub struct SuccessCache {
    errors: LinkErrors,
    ack: f64,
    /// (IP bytes, success); `u32::MAX` bytes: empty.
    sizes: [(u32, f64); 2],
    /// The entry the next new size replaces.
    next: usize,
}

impl SuccessCache {
    pub fn new(phy: &Phy, snr_db: f64) -> Self {
        let errors = LinkErrors::new(phy, snr_db);
        SuccessCache {
            ack: errors.ack_success(phy),
            errors,
            sizes: [(u32::MAX, 0.0); 2],
            next: 0,
        }
    }

    /// Success of a data frame of `ip_bytes` and of its ACK, at `snr_db`.
    pub fn at(&mut self, phy: &Phy, snr_db: f64, ip_bytes: u32) -> (f64, f64) {
        if snr_db != self.errors.snr_db {
            *self = SuccessCache::new(phy, snr_db);
        }
        let data = match self.sizes.iter().find(|(b, _)| *b == ip_bytes) {
            Some(&(_, p)) => p,
            None => {
                let p = self.errors.data_success(phy, ip_bytes);
                self.sizes[self.next] = (ip_bytes, p);
                self.next = 1 - self.next;
                p
            }
        };
        (data, self.ack)
    }
}

/// The rate of the PHY header: DSSS's long PLCP header at 1 Mb/s, OFDM's SIGNAL at 6 Mb/s.
fn header_mode(phy: &Phy) -> Mode {
    let kbps = match phy.standard {
        Standard::B => 1000,
        Standard::G => 6000,
    };
    phy.standard.mode(kbps).expect("the lowest rate of each standard")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_gives_what_the_model_gives_and_follows_the_snr() {
        let phy = Phy::new(Standard::G, 54_000, true).unwrap();
        let mut cache = SuccessCache::new(&phy, 22.0);
        for (snr, bytes) in [(22.0, 1500), (22.0, 52), (22.0, 1500), (22.0, 600), (23.0, 1500)] {
            let e = LinkErrors::new(&phy, snr);
            assert_eq!(
                cache.at(&phy, snr, bytes),
                (e.data_success(&phy, bytes), e.ack_success(&phy))
            );
        }
    }

    #[test]
    fn erfc_matches_known_values() {
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122),
            (1.0, 0.157_299_207),
            (3.0, 2.209_049_7e-5),
        ] {
            assert!((erfc(x) - want).abs() <= 1.2e-7 * want, "erfc({x}) = {}", erfc(x));
        }
        assert!((erfc(5.0) / 1.537_459_8e-12 - 1.0).abs() < 1e-6);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
    }

    #[test]
    fn cck16_symbol_error_falls_from_a_guess_among_sixteen_with_snr() {
        // Biorthogonal signalling of 16 symbols: 15/16 wrong with no signal; values at 2 and 20
        // from the same integral by Simpson's rule in double precision (Python, N = 2000).
        let (lo, mid, hi) = (
            cck16_symbol_error(1e-6),
            cck16_symbol_error(2.0),
            cck16_symbol_error(20.0),
        );
        assert!((lo - 0.9375).abs() < 1e-3, "{lo}");
        assert!((mid / 0.400_046_813 - 1.0).abs() < 1e-5, "{mid}");
        assert!((hi / 5.220_828_4e-5 - 1.0).abs() < 1e-4, "{hi}");
    }

    /// The SNR (dB) at which a 1500-byte packet's frame succeeds with probability 1/2.
    fn half_point(phy: &Phy) -> f64 {
        let (mut lo, mut hi) = (-10.0, 40.0);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if LinkErrors::new(phy, mid).data_success(phy, 1500) < 0.5 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    #[test]
    fn faster_rates_need_more_snr_and_each_curve_falls_from_one_to_zero() {
        let g = |kbps| Phy::new(Standard::G, kbps, true).unwrap();
        let b = |kbps| Phy::new(Standard::B, kbps, true).unwrap();
        let g_points: Vec<f64> = [12_000, 24_000, 54_000]
            .into_iter()
            .map(|k| half_point(&g(k)))
            .collect();
        assert!(g_points.windows(2).all(|w| w[0] < w[1]), "{g_points:?}");
        // NIST model, 1500 bytes: half the frames at 54 Mb/s fail at 22 dB, at 12 Mb/s at 6.4.
        assert!(
            (21.5..22.5).contains(&g_points[2]) && (6.0..7.0).contains(&g_points[0]),
            "{g_points:?}"
        );
        let b11 = half_point(&b(11_000));
        assert!(b11 > half_point(&b(2000)), "{b11}");
        for phy in [g(54_000), b(11_000)] {
            assert!(LinkErrors::new(&phy, 40.0).data_success(&phy, 1500) > 0.999_999);
            assert!(LinkErrors::new(&phy, 0.0).data_success(&phy, 1500) < 1e-9);
            assert!(LinkErrors::new(&phy, 40.0).ack_success(&phy) > 0.999_999);
        }
    }
}
