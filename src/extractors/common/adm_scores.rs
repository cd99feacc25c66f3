//! What both ADMs (integer `adm`, `float_adm`) yield for a frame, and the
//! layout of their values.

/// What one frame yields.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdmScores {
    pub adm2: f64,
    /// `None` where libvmaf leaves it uninitialised (denominator 0).
    pub aim: Option<f64>,
    pub adm3: Option<f64>,
    /// Per scale: (numerator, denominator) as floats.
    pub num: [f32; 4],
    pub den: [f32; 4],
}

impl AdmScores {
    /// `integer_adm_scaleN`: a double division of the two floats.
    pub fn scale(&self, s: usize) -> f64 {
        f64::from(self.num[s]) / f64::from(self.den[s])
    }

    /// Into `slots`: adm2, aim, adm3 (where libvmaf writes them), then the
    /// four scales (integer ADM's and float ADM's layout alike).
    pub fn write(&self, out: &mut crate::core::RawFeatures, slots: crate::extractors::Slots) {
        out.set(slots.at(0), self.adm2);
        if let Some(aim) = self.aim {
            out.set(slots.at(1), aim);
        }
        if let Some(adm3) = self.adm3 {
            out.set(slots.at(2), adm3);
        }
        for s in 0..4 {
            out.set(slots.at(3 + s), self.scale(s));
        }
    }
}
