//! When the synthetic workload's requests arrive, and which keys they
//! carry (docs/simulator.md, "Arrival laws and key popularity"): the
//! scenario's `workload.arrival` and `workload.hot_set`, the laws
//! stargate-bench's traffic kinds use, scaled to each rate of the sweep so
//! that the rate column keeps one meaning.
//!
//! Every law draws from the run's `WORKLOAD` stream; Poisson (the default)
//! draws exactly as the workload did before the laws existed, so a
//! scenario without `arrival` keeps its outputs byte for byte.

use rand::Rng;
use serde::{Deserialize, Serialize};

/// The laws `workload.arrival.law` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Law {
    /// Exponential gaps at the rate.
    Poisson,
    /// One request every 1 / rate seconds.
    Constant,
    /// Poisson, alternating a burst and a quiet phase of `period_requests`
    /// requests each, the burst `burst_factor` times as fast.
    Bursty,
    /// Poisson whose rate climbs in `steps` equal spans of the horizon,
    /// from `start_fraction` of the rate to the rate.
    StairStep,
}

/// The names of [`Law`], as the scenario spells them (a test checks they
/// agree with serde's).
pub const LAWS: [&str; 4] = ["poisson", "constant", "bursty", "stair_step"];

/// The scenario's `workload.arrival` object. The parameters of the other
/// laws must be absent (the scenario check says which law takes them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalSpec {
    pub law: Law,
    /// `bursty`: the burst's rate over the quiet phase's (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_factor: Option<f64>,
    /// `bursty`: requests per phase (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_requests: Option<u32>,
    /// `stair_step`: how many rates (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// `stair_step`: the first step's share of the rate, in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_fraction: Option<f64>,
}

/// The scenario's `workload.hot_set` object: stargate-bench's
/// `zipf_hotset` popularity (not a Zipf law). With probability `share`
/// a request's key is uniform over the first round(keys x `fraction`)
/// keys (at least one), otherwise uniform over all keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HotSetSpec {
    pub fraction: f64,
    pub share: f64,
}

impl HotSetSpec {
    /// The number of hot keys among `keys`.
    pub fn hot_keys(&self, keys: u32) -> u32 {
        let hot = (f64::from(keys) * self.fraction).round();
        (hot.clamp(1.0, f64::from(keys.max(1)))) as u32
    }

    /// Each key's probability weight (they sum to 1): the mixture above as
    /// one distribution, so one uniform draw picks a key.
    pub fn weights(&self, keys: u32) -> impl Iterator<Item = f64> {
        let keys = keys.max(1);
        let hot = self.hot_keys(keys);
        let base = (1.0 - self.share) / f64::from(keys);
        let extra = self.share / f64::from(hot);
        (0..keys).map(move |k| if k < hot { base + extra } else { base })
    }
}

/// The rates of a bursty law whose long-run mean is `rate`: equal request
/// counts per phase make the mean the harmonic mean of the two rates, so
/// quiet = rate (1 + f) / (2 f) and burst = f x quiet.
pub fn bursty_rates(rate: f64, factor: f64) -> (f64, f64) {
    let quiet = rate * (1.0 + factor) / (2.0 * factor);
    (quiet, quiet * factor)
}

/// Step `k`'s rate (of `steps`) climbing from `start` x `rate` to `rate`.
pub fn stair_rate(rate: f64, steps: u32, start: f64, k: u32) -> f64 {
    if steps <= 1 {
        return rate;
    }
    rate * (start + (1.0 - start) * f64::from(k.min(steps - 1)) / f64::from(steps - 1))
}

/// One line under `sim run`'s table for a law whose rate changes during a
/// run (`None` for Poisson and constant): the phases' or steps' rates and
/// how the measured window falls on them, since the window's figures are
/// an average over them and mean little without that.
pub fn describe(spec: &ArrivalSpec, rate: f64, warmup_s: f64, measure_s: f64) -> Option<String> {
    let end = warmup_s + measure_s;
    match spec.law {
        Law::Poisson | Law::Constant => None,
        Law::Bursty => {
            let factor = spec.burst_factor.unwrap_or(1.0);
            let period = spec.period_requests.unwrap_or(1).max(1);
            let (quiet, burst) = bursty_rates(rate, factor);
            // A phase of `period` requests lasts period / its rate on
            // average; a cycle (burst + quiet) 2 period / rate.
            let cycle = 2.0 * f64::from(period) / rate;
            Some(format!(
                "arrivals at {rate} RPS: bursty, {period} requests at {burst:.1} RPS (~{:.1} s) then {period} at {quiet:.1} RPS (~{:.1} s); the measured window ({measure_s} s) holds {:.2} cycles of ~{cycle:.1} s on average: its figures average over the phases (whole cycles weigh them fairly; timeseries.csv shows each)",
                f64::from(period) / burst,
                f64::from(period) / quiet,
                measure_s / cycle,
            ))
        }
        Law::StairStep => {
            let steps = spec.steps.unwrap_or(1).max(1);
            let start = spec.start_fraction.unwrap_or(1.0);
            let span = end / f64::from(steps);
            let step_of = |t: f64| ((t / span) as u32).min(steps - 1);
            let (first, last) = (step_of(warmup_s), step_of(end - 1e-9));
            // Each rate up to a few steps; past that (up to MAX_STEPS) the
            // line would grow with the steps: the first and last, evenly.
            let at = |k| format!("{:.1}", stair_rate(rate, steps, start, k));
            let rates = if steps <= 8 {
                (0..steps).map(at).collect::<Vec<_>>().join(", ")
            } else {
                format!("{} to {}, evenly,", at(0), at(steps - 1))
            };
            Some(format!(
                "arrivals at {rate} RPS: stair_step, {steps} steps of {span:.1} s at {rates} RPS; the measured window spans steps {}-{}: its figures mix their rates (timeseries.csv shows each step)",
                first + 1,
                last + 1,
            ))
        }
    }
}

/// The arrival times of one run, in seconds from its start, drawn one at a
/// time until the horizon.
pub struct Arrivals {
    law: Law,
    rate: f64,
    horizon: f64,
    /// `bursty`: (quiet, burst) rates and the phase length.
    phases: (f64, f64, u32),
    /// `stair_step`: the number of steps and the first step's share.
    stairs: (u32, f64),
    t: f64,
    sent: u32,
}

impl Arrivals {
    /// The arrivals of `spec` (Poisson when absent) at `rate` requests per
    /// second over `horizon` seconds. A rate <= 0 gives none.
    pub fn new(spec: Option<&ArrivalSpec>, rate: f64, horizon: f64) -> Self {
        let law = spec.map_or(Law::Poisson, |s| s.law);
        let factor = spec.and_then(|s| s.burst_factor).unwrap_or(1.0);
        let (quiet, burst) = bursty_rates(rate, factor);
        let period = spec.and_then(|s| s.period_requests).unwrap_or(1).max(1);
        let steps = spec.and_then(|s| s.steps).unwrap_or(1).max(1);
        let start = spec.and_then(|s| s.start_fraction).unwrap_or(1.0);
        Arrivals {
            law,
            rate,
            horizon,
            phases: (quiet, burst, period),
            stairs: (steps, start),
            t: 0.0,
            sent: 0,
        }
    }

    /// The next arrival, or `None` past the horizon.
    pub fn next(&mut self, rng: &mut impl Rng) -> Option<f64> {
        if self.rate.is_nan() || self.rate <= 0.0 {
            return None;
        }
        match self.law {
            Law::Poisson => {
                let u = 1.0 - rng.random::<f64>(); // (0, 1]
                self.t += -u.ln() / self.rate;
            }
            // From the count, not by adding up intervals: a sum of 0.1 s
            // gaps drifts below the horizon and sends one more.
            Law::Constant => self.t = f64::from(self.sent.saturating_add(1)) / self.rate,
            Law::Bursty => {
                let (quiet, burst, period) = self.phases;
                // The first phase is the burst, as stargate-bench's
                // manifests show.
                let rate = if (self.sent / period) % 2 == 0 {
                    burst
                } else {
                    quiet
                };
                let u = 1.0 - rng.random::<f64>();
                self.t += -u.ln() / rate;
            }
            Law::StairStep => self.stair_step(rng),
        }
        self.sent = self.sent.saturating_add(1);
        (self.t < self.horizon).then_some(self.t)
    }

    /// A Poisson process with a piecewise-constant rate, drawn exactly: a
    /// unit exponential is spent across step boundaries at each step's
    /// rate (the process is memoryless, so the draw carries over).
    fn stair_step(&mut self, rng: &mut impl Rng) {
        let (steps, start) = self.stairs;
        let span = self.horizon / f64::from(steps);
        let u = 1.0 - rng.random::<f64>();
        let mut left = -u.ln();
        loop {
            // The step the clock is in; the last one runs past the horizon.
            let k = ((self.t / span) as u32).min(steps - 1);
            let rate = stair_rate(self.rate, steps, start, k);
            let end = if k + 1 >= steps {
                f64::INFINITY
            } else {
                span * f64::from(k + 1)
            };
            let room = (end - self.t) * rate;
            if left < room {
                self.t += left / rate;
                return;
            }
            left -= room;
            self.t = end;
            if self.t >= self.horizon {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::rng::{stream, Stream};

    fn all(spec: Option<&ArrivalSpec>, rate: f64, horizon: f64, seed: u64) -> Vec<f64> {
        let mut rng = stream(seed, Stream::Workload);
        let mut a = Arrivals::new(spec, rate, horizon);
        std::iter::from_fn(|| a.next(&mut rng)).collect()
    }

    fn law(law: Law) -> ArrivalSpec {
        ArrivalSpec {
            law,
            burst_factor: None,
            period_requests: None,
            steps: None,
            start_fraction: None,
        }
    }

    #[test]
    fn the_law_names_are_serdes() {
        for (name, l) in LAWS
            .iter()
            .zip([Law::Poisson, Law::Constant, Law::Bursty, Law::StairStep])
        {
            assert_eq!(serde_json::to_value(l).expect("law"), *name);
        }
    }

    #[test]
    fn poisson_draws_as_the_workload_always_did() {
        // The loop the synthetic workload had before the laws.
        let mut rng = stream(7, Stream::Workload);
        let mut old = Vec::new();
        let mut t = 0.0;
        loop {
            let u = 1.0 - rng.random::<f64>();
            t += -u.ln() / 50.0;
            if t >= 20.0 {
                break;
            }
            old.push(t);
        }
        assert_eq!(all(None, 50.0, 20.0, 7), old);
        assert_eq!(all(Some(&law(Law::Poisson)), 50.0, 20.0, 7), old);
    }

    #[test]
    fn constant_is_one_every_interval() {
        let t = all(Some(&law(Law::Constant)), 4.0, 10.0, 1);
        assert_eq!(t.len(), 39); // 0.25, 0.5, ..., 9.75
        assert!((t[0] - 0.25).abs() < 1e-12);
        assert!(t.windows(2).all(|w| (w[1] - w[0] - 0.25).abs() < 1e-9));
        assert!(all(Some(&law(Law::Constant)), 0.0, 10.0, 1).is_empty());
    }

    #[test]
    fn bursty_keeps_the_mean_rate_and_the_phase_rates() {
        // factor 4 at 100 RPS: quiet 62.5, burst 250 (harmonic mean 100).
        assert_eq!(bursty_rates(100.0, 4.0), (62.5, 250.0));
        let spec = ArrivalSpec {
            burst_factor: Some(4.0),
            period_requests: Some(500),
            ..law(Law::Bursty)
        };
        let t = all(Some(&spec), 100.0, 2_000.0, 3);
        let n = t.len() as f64;
        // 200 000 expected; Poisson spread plus the partial last phase.
        assert!((n / 2_000.0 - 100.0).abs() < 2.0, "{n}");
        // Each phase's mean gap is 1 / its rate: 500 gaps of mean 4 ms
        // (burst) then 16 ms (quiet), within 10 % over 40 phases each.
        let gaps: Vec<f64> = std::iter::once(t[0])
            .chain(t.windows(2).map(|w| w[1] - w[0]))
            .collect();
        let mean = |phase: usize| {
            let chunks: Vec<f64> = gaps
                .chunks(500)
                .skip(phase)
                .step_by(2)
                .take(40)
                .map(|c| c.iter().sum::<f64>() / c.len() as f64)
                .collect();
            chunks.iter().sum::<f64>() / chunks.len() as f64
        };
        assert!((mean(0) / 0.004 - 1.0).abs() < 0.1, "{}", mean(0));
        assert!((mean(1) / 0.016 - 1.0).abs() < 0.1, "{}", mean(1));
    }

    #[test]
    fn stair_steps_climb_to_the_rate() {
        // 4 steps of 250 s from 25 % of 80 RPS: 20, 40, 60, 80 RPS.
        let spec = ArrivalSpec {
            steps: Some(4),
            start_fraction: Some(0.25),
            ..law(Law::StairStep)
        };
        let rates: Vec<f64> = (0..4).map(|k| stair_rate(80.0, 4, 0.25, k)).collect();
        assert_eq!(rates, [20.0, 40.0, 60.0, 80.0]);
        let t = all(Some(&spec), 80.0, 1_000.0, 5);
        for (k, want) in rates.iter().enumerate() {
            let lo = 250.0 * k as f64;
            let n = t.iter().filter(|&&x| x >= lo && x < lo + 250.0).count() as f64;
            let expected = want * 250.0;
            // Within 4 standard deviations of the Poisson count.
            assert!(
                (n - expected).abs() < 4.0 * expected.sqrt(),
                "step {k}: {n}"
            );
        }
        assert!(t.windows(2).all(|w| w[0] < w[1]));
        assert!(t.iter().all(|&x| x < 1_000.0));
    }

    #[test]
    fn a_zero_first_step_sends_nothing_in_it() {
        let spec = ArrivalSpec {
            steps: Some(2),
            start_fraction: Some(0.0),
            ..law(Law::StairStep)
        };
        let t = all(Some(&spec), 10.0, 100.0, 2);
        assert!(t.iter().all(|&x| x >= 50.0));
        assert!((t.len() as f64 - 500.0).abs() < 4.0 * 500f64.sqrt());
    }

    #[test]
    fn the_note_says_how_the_window_falls_on_the_phases() {
        let bursty = ArrivalSpec {
            burst_factor: Some(3.0),
            period_requests: Some(6_000),
            ..law(Law::Bursty)
        };
        assert_eq!(
            describe(&bursty, 200.0, 60.0, 180.0).expect("note"),
            "arrivals at 200 RPS: bursty, 6000 requests at 400.0 RPS (~15.0 s) then 6000 at 133.3 RPS (~45.0 s); \
             the measured window (180 s) holds 3.00 cycles of ~60.0 s on average: its figures average over the \
             phases (whole cycles weigh them fairly; timeseries.csv shows each)"
        );
        let stairs = ArrivalSpec {
            steps: Some(4),
            start_fraction: Some(0.25),
            ..law(Law::StairStep)
        };
        assert_eq!(
            describe(&stairs, 200.0, 60.0, 180.0).expect("note"),
            "arrivals at 200 RPS: stair_step, 4 steps of 60.0 s at 50.0, 100.0, 150.0, 200.0 RPS; the measured \
             window spans steps 2-4: its figures mix their rates (timeseries.csv shows each step)"
        );
        // Many steps: the first and last rates, not a list as long as
        // the steps.
        let many = ArrivalSpec {
            steps: Some(1_000),
            start_fraction: Some(0.0),
            ..law(Law::StairStep)
        };
        assert_eq!(
            describe(&many, 100.0, 0.0, 1_000.0).expect("note"),
            "arrivals at 100 RPS: stair_step, 1000 steps of 1.0 s at 0.0 to 100.0, evenly, RPS; the \
             measured window spans steps 1-1000: its figures mix their rates (timeseries.csv shows each step)"
        );
        assert_eq!(describe(&law(Law::Constant), 200.0, 60.0, 180.0), None);
        assert_eq!(describe(&law(Law::Poisson), 200.0, 60.0, 180.0), None);
    }

    #[test]
    fn hot_set_weights_match_stargates_mixture() {
        // 100 keys, 10 % hot taking 80 %: a hot key 0.8/10 + 0.2/100.
        let h = HotSetSpec {
            fraction: 0.1,
            share: 0.8,
        };
        assert_eq!(h.hot_keys(100), 10);
        let w: Vec<f64> = h.weights(100).collect();
        assert!((w[0] - 0.082).abs() < 1e-12);
        assert!((w[99] - 0.002).abs() < 1e-12);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let hot: f64 = w[..10].iter().sum();
        assert!((hot - 0.82).abs() < 1e-9);
        // At least one hot key, at most all.
        assert_eq!(h.hot_keys(3), 1);
        let all_hot = HotSetSpec {
            fraction: 2.0,
            share: 0.5,
        };
        assert_eq!(all_hot.hot_keys(7), 7);
    }
}
