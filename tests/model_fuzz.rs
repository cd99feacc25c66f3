//! Mutated model files: thousands of corrupted variants of the built-in
//! models go through the parser (and, when they parse, the extraction plan
//! and a prediction). Nothing may panic; every rejection must say what is
//! wrong. Deterministic (fixed seeds), a few seconds.

use gstvmafhip::vmaf::model::BUILT_IN;
use gstvmafhip::vmaf::{ModelSet, Plan, VmafError};
use std::panic::{AssertUnwindSafe, catch_unwind};

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One random edit: byte flips, cut, deletion or duplication of a span,
/// or a structural change (a number or key replaced, a line of the SVM
/// text dropped, truncated JSON).
fn mutate(text: &str, r: &mut Lcg) -> String {
    let mut b = text.as_bytes().to_vec();
    let n = b.len();
    match r.below(9) {
        0 => {
            for _ in 0..1 + r.below(8) {
                let i = r.below(n);
                b[i] = b" {}[]:,\"0123456789.-eE+tfnaux\\\n"[r.below(30)];
            }
        }
        1 => b.truncate(r.below(n)),
        2 => {
            let i = r.below(n);
            let len = r.below(200).min(n - i);
            b.drain(i..i + len);
        }
        3 => {
            let i = r.below(n);
            let len = r.below(200).min(n - i);
            let span = b[i..i + len].to_vec();
            let j = r.below(n);
            b.splice(j..j, span);
        }
        4 => {
            let s = String::from_utf8_lossy(&b).to_string();
            let keys = [
                "\"feature_names\"",
                "\"slopes\"",
                "\"intercepts\"",
                "\"model\"",
                "\"model_type\"",
                "\"feature_opts_dicts\"",
                "\"score_transform\"",
                "\"norm_type\"",
                "\"chroma_correction_parameter\"",
            ];
            let k = keys[r.below(keys.len())];
            return s.replacen(k, "\"renamed\"", 1);
        }
        5 => {
            let s = String::from_utf8_lossy(&b).to_string();
            let vals = ["null", "\"x\"", "[]", "{}", "-1e308", "1e999", "true", "0"];
            // Replace the k-th number with another JSON value.
            let digits: Vec<usize> = s
                .char_indices()
                .filter(|(i, c)| {
                    c.is_ascii_digit() && (*i == 0 || !s.as_bytes()[i - 1].is_ascii_alphanumeric())
                })
                .map(|(i, _)| i)
                .collect();
            if digits.is_empty() {
                return s;
            }
            let at = digits[r.below(digits.len())];
            let end = s[at..]
                .find(|c: char| !(c.is_ascii_digit() || ".eE+-".contains(c)))
                .map_or(s.len(), |e| at + e);
            return format!("{}{}{}", &s[..at], vals[r.below(vals.len())], &s[end..]);
        }
        6 => {
            // Drop or damage a line of the libsvm text ("\n"-separated inside the JSON string).
            let s = String::from_utf8_lossy(&b).to_string();
            let parts: Vec<&str> = s.split("\\n").collect();
            if parts.len() < 3 {
                return s;
            }
            let k = 1 + r.below(parts.len() - 2);
            let mut out: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
            match r.below(3) {
                0 => {
                    out.remove(k);
                }
                1 => out[k] = out[k].replace(':', " "),
                _ => out[k].push_str(" 99:1e400"),
            }
            return out.join("\\n");
        }
        7 => {
            // A feature option with a wrong type or out-of-range value.
            let s = String::from_utf8_lossy(&b).to_string();
            let opts = [
                "\"adm_enhn_gain_limit\": 1.0",
                "\"cambi_max_val\": 17.0",
                "\"speed_weight_var_mode\": 5",
                "\"motion_max_val\": 18.0",
            ];
            let repl = [
                "\"nope\": 1",
                "\"adm_enhn_gain_limit\": 1e9",
                "\"cambi_max_val\": \"x\"",
                "\"speed_weight_var_mode\": 99",
            ];
            return s.replacen(opts[r.below(opts.len())], repl[r.below(repl.len())], 1);
        }
        _ => {
            let i = r.below(n);
            b.insert(i, b"\x00\xff\"{["[r.below(5)]);
        }
    }
    String::from_utf8_lossy(&b).to_string()
}

#[test]
fn thousands_of_mutated_models_never_panic_and_rejections_say_why() {
    let bases: Vec<&str> = ["vmaf_v0.6.1", "vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_hfr_5d0h"]
        .iter()
        .map(|n| BUILT_IN.iter().find(|(m, _)| m == n).unwrap().1)
        .collect();
    let start = std::time::Instant::now();
    let (mut rejected, mut accepted, mut total) = (0, 0, 0);
    let mut r = Lcg(0x5eed);
    for round in 0..30000 {
        let base = bases[round % bases.len()];
        let mut text = mutate(base, &mut r);
        if r.below(4) == 0 {
            text = mutate(&text, &mut r);
        }
        total += 1;
        let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<(), VmafError> {
            let m = ModelSet::parse("fuzz.json", &text)?;
            let plan = Plan::new(&m)?;
            let x = vec![0.5; m.main.features.len()];
            let _ = m.main.predict(&x, Default::default(), false);
            let _ = plan;
            Ok(())
        }));
        match outcome {
            Err(_) => panic!("round {round}: the parser panicked on:\n{text}"),
            Ok(Err(e)) => {
                let msg = e.to_string();
                assert!(msg.len() > 15, "round {round}: vague rejection {msg:?}");
                rejected += 1;
            }
            Ok(Ok(())) => accepted += 1,
        }
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{total} mutated models: {rejected} rejected with a reason, {accepted} still valid, {secs:.1} s"
    );
    assert!(rejected > total / 2, "most mutations must be caught");
}
