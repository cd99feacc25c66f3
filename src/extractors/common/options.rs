//! Extractor option tables, as libvmaf's `VmafOption` arrays: parsing of the
//! values a model or an override gives, range checks, and the feature-name
//! suffix libvmaf derives from the non-default ones
//! (`feature_name.c:vmaf_feature_name_from_options`).

use crate::core::VmafError;
use crate::core::model::OptValue;

/// An option's C type, which decides how a value is parsed and printed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `VMAF_OPT_TYPE_DOUBLE`, printed `%g`.
    Num,
    /// `VMAF_OPT_TYPE_INT`, printed `%d`.
    Int,
    /// `VMAF_OPT_TYPE_BOOL`, printed as the bare alias.
    Bool,
    /// `VMAF_OPT_TYPE_STRING`, printed as is.
    Str,
}

/// One row of an extractor's option table.
pub struct OptSpec {
    pub name: &'static str,
    /// The short name in feature names; `None` prints the full name.
    pub alias: Option<&'static str>,
    pub kind: Kind,
    /// Default: the number (0/1 for booleans), or the text for strings.
    pub default: f64,
    pub default_text: &'static str,
    pub min: f64,
    pub max: f64,
    /// `VMAF_OPT_FLAG_FEATURE_PARAM`: a non-default value renames outputs.
    pub param: bool,
}

impl OptSpec {
    pub const fn num(
        name: &'static str,
        alias: &'static str,
        default: f64,
        min: f64,
        max: f64,
    ) -> Self {
        Self::new(name, Some(alias), Kind::Num, default, "", min, max)
    }
    pub const fn int(
        name: &'static str,
        alias: &'static str,
        default: f64,
        min: f64,
        max: f64,
    ) -> Self {
        Self::new(name, Some(alias), Kind::Int, default, "", min, max)
    }
    pub const fn boolean(name: &'static str, alias: &'static str) -> Self {
        Self::new(name, Some(alias), Kind::Bool, 0.0, "", 0.0, 1.0)
    }
    pub const fn text(
        name: &'static str,
        alias: Option<&'static str>,
        default: &'static str,
    ) -> Self {
        Self::new(name, alias, Kind::Str, 0.0, default, 0.0, 0.0)
    }
    pub const fn new(
        name: &'static str,
        alias: Option<&'static str>,
        kind: Kind,
        default: f64,
        default_text: &'static str,
        min: f64,
        max: f64,
    ) -> Self {
        Self {
            name,
            alias,
            kind,
            default,
            default_text,
            min,
            max,
            param: true,
        }
    }
    /// The same option without `VMAF_OPT_FLAG_FEATURE_PARAM`.
    pub const fn not_param(mut self) -> Self {
        self.param = false;
        self
    }
}

/// Resolved values of one extractor, in table order.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub nums: Vec<f64>,
    pub texts: Vec<String>,
    /// `_alias_value` for each non-default feature parameter, in option-name order.
    pub suffix: String,
}

impl Resolved {
    pub fn num(&self, specs: &[OptSpec], name: &str) -> f64 {
        self.nums[index(specs, name)]
    }
    pub fn flag(&self, specs: &[OptSpec], name: &str) -> bool {
        self.num(specs, name) != 0.0
    }
    pub fn text(&self, specs: &[OptSpec], name: &str) -> &str {
        &self.texts[index(specs, name)]
    }
}

fn index(specs: &[OptSpec], name: &str) -> usize {
    specs
        .iter()
        .position(|s| s.name == name)
        .unwrap_or_else(|| panic!("option table has no {name}"))
}

/// `%g` as libvmaf prints option values into feature names.
pub fn fmt_g(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let s = format!("{v:.6}");
    let digits_before = (v.abs().log10().floor() as i32 + 1).max(1);
    let prec = (6 - digits_before).max(0) as usize;
    let s = if prec == 6 { s } else { format!("{v:.prec$}") };
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Parse and check `given` (option name or alias → value) against `specs`.
/// A number from a model file passes through `strtof` and `%g` first, as
/// `dict.c:vmaf_dictionary_set` stores it; text is parsed by the option's type.
pub fn resolve(
    specs: &[OptSpec],
    given: &[(String, OptValue)],
    feature: &str,
) -> Result<Resolved, VmafError> {
    let mut nums: Vec<f64> = specs.iter().map(|s| s.default).collect();
    let mut texts: Vec<String> = specs.iter().map(|s| s.default_text.to_string()).collect();
    let bad = |what: String| VmafError::Unsupported(format!("{feature}: {what}"));
    for (k, v) in given {
        let Some(i) = specs
            .iter()
            .position(|s| s.name == k || s.alias == Some(k.as_str()))
        else {
            let known: Vec<_> = specs.iter().map(|s| s.name).collect();
            return Err(bad(format!(
                "unknown option \"{k}\" (known: {})",
                known.join(", ")
            )));
        };
        let s = &specs[i];
        match (s.kind, v) {
            (Kind::Str, OptValue::Str(t)) => texts[i] = t.clone(),
            (Kind::Str, _) => return Err(bad(format!("option {k} takes text"))),
            (Kind::Bool, OptValue::Bool(b)) => nums[i] = f64::from(u8::from(*b)),
            (Kind::Bool, OptValue::Str(t)) if t == "true" || t == "false" => {
                nums[i] = f64::from(u8::from(t == "true"))
            }
            (Kind::Bool, _) => return Err(bad(format!("option {k} takes true or false"))),
            (_, OptValue::Number(n)) => {
                nums[i] = fmt_g(f64::from(*n as f32)).parse().unwrap_or(*n);
            }
            (_, OptValue::Str(t)) => {
                nums[i] = t
                    .trim()
                    .parse()
                    .map_err(|_| bad(format!("option {k}: \"{t}\" is not a number")))?;
            }
            (_, OptValue::Bool(_)) => return Err(bad(format!("option {k} takes a number"))),
        }
        if s.kind == Kind::Int {
            nums[i] = nums[i].trunc();
        }
        if matches!(s.kind, Kind::Num | Kind::Int) && !(s.min..=s.max).contains(&nums[i]) {
            return Err(bad(format!(
                "option {k} = {} is outside [{}, {}]",
                fmt_g(nums[i]),
                fmt_g(s.min),
                fmt_g(s.max)
            )));
        }
    }
    let mut order: Vec<usize> = (0..specs.len()).collect();
    order.sort_by_key(|&i| specs[i].name);
    let mut suffix = String::new();
    for i in order {
        let s = &specs[i];
        let key = s.alias.unwrap_or(s.name);
        if !s.param {
            continue;
        }
        match s.kind {
            Kind::Str if texts[i] != s.default_text => {
                suffix.push_str(&format!("_{key}_{}", texts[i]))
            }
            Kind::Bool if nums[i] != s.default => suffix.push_str(&format!("_{key}")),
            Kind::Int if nums[i] != s.default => {
                suffix.push_str(&format!("_{key}_{}", nums[i] as i64))
            }
            Kind::Num if nums[i] != s.default => {
                suffix.push_str(&format!("_{key}_{}", fmt_g(nums[i])))
            }
            _ => {}
        }
    }
    Ok(Resolved {
        nums,
        texts,
        suffix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_like_printf() {
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(0.5), "0.5");
        assert_eq!(fmt_g(1080.0), "1080");
        assert_eq!(fmt_g(0.03125), "0.03125");
        assert_eq!(fmt_g(f64::INFINITY), "inf");
        assert_eq!(fmt_g(f64::NEG_INFINITY), "-inf");
        assert_eq!(fmt_g(f64::NAN), "nan");
        assert_eq!(fmt_g(f64::from(0.7f32)), "0.7");
        assert_eq!(fmt_g(f64::from(0.06f32)), "0.06");
        assert_eq!(fmt_g(f64::from(0.19f32)), "0.19");
    }

    #[test]
    fn suffix_sorted_by_option_name_with_types() {
        let specs = [
            OptSpec::int("zeta", "z", 0.0, 0.0, 10.0),
            OptSpec::boolean("alpha", "a"),
            OptSpec::num("mid", "m", 1.0, 0.0, 5.0),
            OptSpec::text("method", Some("psm"), "nearest"),
        ];
        let given = vec![
            ("z".to_string(), OptValue::Str("7".into())),
            ("alpha".to_string(), OptValue::Bool(true)),
            ("mid".to_string(), OptValue::Number(0.6)),
            ("method".to_string(), OptValue::Str("bilinear".into())),
        ];
        let r = resolve(&specs, &given, "f").unwrap();
        assert_eq!(r.suffix, "_a_psm_bilinear_m_0.6_z_7");
        assert_eq!(r.num(&specs, "mid"), 0.6);
        let e = resolve(&specs, &[("nope".into(), OptValue::Number(1.0))], "f").unwrap_err();
        assert!(e.to_string().contains("unknown option \"nope\""), "{e}");
        let e = resolve(&specs, &[("mid".into(), OptValue::Number(9.0))], "f").unwrap_err();
        assert!(e.to_string().contains("outside"), "{e}");
    }
}
