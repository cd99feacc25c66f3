//! The float extractors' pictures and units: libvmaf's `picture_copy` (the
//! samples as floats on the 8-bit scale), its divisor per depth, the float
//! square of an integer as libvmaf's float multiply rounds it, and the PSNR
//! peak and cap of the float path.

/// libvmaf's `picture_copy`: samples as floats on the 8-bit scale (10-bit
/// divided by 4, 12-bit by 16, 16-bit by 256), plus `offset`.
pub fn float_picture(data: &[u16], bpc: u8, offset: i32) -> Vec<f32> {
    let offset = offset as f32;
    let scaler: f32 = match bpc {
        10 => 4.0,
        12 => 16.0,
        16 => 256.0,
        _ => return data.iter().map(|&v| f32::from(v) + offset).collect(),
    };
    data.iter()
        .map(|&v| f32::from(v) / scaler + offset)
        .collect()
}

/// `picture_copy`'s divisor for deep samples (`None`: used as they are).
pub fn float_scaler(bpc: u8) -> Option<f32> {
    match bpc {
        10 => Some(4.0),
        12 => Some(16.0),
        16 => Some(256.0),
        _ => None,
    }
}

/// `v · v` as libvmaf's float multiply rounds it, for an integer `v`
/// (exact while |v| < 4096), as a whole number.
pub fn float_square(v: i32) -> u64 {
    let f = v as f32;
    (f * f) as u64
}

/// The divisor of a sum of samples (`s`) at `bpc` bits.
pub fn sample_unit(bpc: u8) -> f64 {
    float_scaler(bpc).map_or(1.0, f64::from)
}

/// The peak value and the PSNR cap of the float extractors per bit depth
/// (`float_psnr.c`, `float_ansnr.c`: `init`).
pub fn peak_and_cap(bpc: u8) -> (f64, f64) {
    match bpc {
        10 => (255.75, 72.0),
        12 => (255.9375, 84.0),
        16 => (255.99609375, 108.0),
        _ => (255.0, 60.0),
    }
}
