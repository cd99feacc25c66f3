//! Pooling exactly as libvmaf (`libvmaf.c:vmaf_feature_score_pooled`):
//! sums run from the lowest index up; the harmonic mean is `n / Σ 1/(s+1) − 1`.

#![forbid(unsafe_code)]

/// libvmaf's pooling methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PoolMethod {
    Min,
    Max,
    Mean,
    HarmonicMean,
}

impl PoolMethod {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "min" => Some(Self::Min),
            "max" => Some(Self::Max),
            "mean" => Some(Self::Mean),
            "harmonic_mean" => Some(Self::HarmonicMean),
            _ => None,
        }
    }
}

/// Running pooled statistics of one metric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pooled {
    pub count: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    pub inv_sum: f64,
}

impl Default for Pooled {
    fn default() -> Self {
        Self {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            inv_sum: 0.0,
        }
    }
}

impl Pooled {
    pub fn push(&mut self, v: f64) {
        self.count += 1;
        self.sum += v;
        if v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        self.inv_sum += 1.0 / (v + 1.0);
    }

    pub fn mean(&self) -> f64 {
        self.sum / self.count as f64
    }

    pub fn harmonic_mean(&self) -> f64 {
        self.count as f64 / self.inv_sum - 1.0
    }

    pub fn get(&self, m: PoolMethod) -> f64 {
        match m {
            PoolMethod::Min => self.min,
            PoolMethod::Max => self.max,
            PoolMethod::Mean => self.mean(),
            PoolMethod::HarmonicMean => self.harmonic_mean(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmonic_mean_definition() {
        let mut p = Pooled::default();
        for v in [1.0, 3.0] {
            p.push(v);
        }
        // 2 / (1/2 + 1/4) − 1 = 5/3
        assert!((p.harmonic_mean() - 5.0 / 3.0).abs() < 1e-15);
        assert_eq!((p.min, p.max, p.mean()), (1.0, 3.0, 2.0));
    }
}
