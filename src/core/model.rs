//! libvmaf JSON models: feature list and options, normalisation, libsvm
//! nu-SVR with RBF kernel, score transform and clipping
//! (`read_json_model.c`, `predict.c`, `svm.cpp`), and bootstrap collections.

#![forbid(unsafe_code)]

use super::VmafError;
use serde_json::Value;
use std::path::Path;

/// Built-in models: (version name, JSON text). Netflix's files, unmodified;
/// their licence is `models/LICENSE`.
macro_rules! built_in {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../models/", $name, ".json")))),*]
    };
}

/// libvmaf's built-in models by version name (`model.c:built_in_models`);
/// its float models are [`FLOAT_BUILT_IN`].
pub const BUILT_IN: &[(&str, &str)] = built_in![
    "vmaf_v0.6.1",
    "vmaf_b_v0.6.3",
    "vmaf_v0.6.1neg",
    "vmaf_4k_v0.6.1",
    "vmaf_4k_v0.6.1neg",
    "vmaf_v1.0.16_3d0h",
    "vmaf_v1.0.16_5d0h",
    "vmaf_v1.0.16_1d5h_2160",
    "vmaf_v1.0.16_3d0h_2160",
    "vmaf_v1.0.16_hfr_3d0h",
    "vmaf_v1.0.16_hfr_5d0h",
    "vmaf_v1.0.16_hfr_1d5h_2160",
    "vmaf_v1.0.16_hfr_3d0h_2160",
];

/// libvmaf's built-in float models and the model each is made from: the
/// same normalisation, SVM and options, with the float extractors' feature
/// names (`VMAF_feature_adm2_score` for `VMAF_integer_feature_adm2_score`).
/// That is all that differs between Netflix's files of each pair;
/// `tests/golden.rs` holds the derived `vmaf_float_v0.6.1` to Netflix's file.
pub const FLOAT_BUILT_IN: &[(&str, &str)] = &[
    ("vmaf_float_v0.6.1", "vmaf_v0.6.1"),
    ("vmaf_float_v0.6.1neg", "vmaf_v0.6.1neg"),
    ("vmaf_float_b_v0.6.3", "vmaf_b_v0.6.3"),
    ("vmaf_float_4k_v0.6.1", "vmaf_4k_v0.6.1"),
];

/// Every built-in model's version name.
pub fn built_in_names() -> Vec<&'static str> {
    BUILT_IN
        .iter()
        .map(|(n, _)| *n)
        .chain(FLOAT_BUILT_IN.iter().map(|(n, _)| *n))
        .collect()
}

/// One option value: a number or boolean from `feature_opts_dicts`, or text
/// (a string option, or an override `cambi.enc_width=1280` as given), which
/// the extractor's option table parses by the option's type.
#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    Number(f64),
    Bool(bool),
    Str(String),
}

/// One model input: libvmaf's raw feature name plus its extractor options.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFeature {
    pub name: String,
    pub options: Vec<(String, OptValue)>,
    pub slope: f64,
    pub intercept: f64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transform {
    pub enabled: bool,
    pub p0: Option<f64>,
    pub p1: Option<f64>,
    pub p2: Option<f64>,
    pub knots: Vec<(f64, f64)>,
    pub out_lte_in: bool,
    pub out_gte_in: bool,
}

/// libsvm model: support vectors as (coefficient, sparse (index, value) list).
#[derive(Clone, Debug, PartialEq)]
pub struct Svm {
    pub gamma: f64,
    pub rho: f64,
    pub support: Vec<(f64, Vec<(i32, f64)>)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub name: String,
    pub features: Vec<ModelFeature>,
    pub linear_rescale: bool,
    pub slope: f64,
    pub intercept: f64,
    pub clip: Option<(f64, f64)>,
    pub transform: Transform,
    pub svm: Svm,
    /// `chroma_correction_parameter`: a zero speed_chroma input is replaced
    /// by `c·(1 − adm3)` (`predict.c:post_process_feature_from_another`).
    pub chroma_correction: Option<f64>,
}

/// How a model is applied: libvmaf's `disable_clip` / `enable_transform` flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelFlags {
    pub disable_clip: bool,
    pub enable_transform: bool,
}

/// scores; "1".."N" give the confidence interval.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSet {
    pub main: Model,
    pub bootstrap: Vec<Model>,
}

pub(crate) fn err(source: &str, what: impl Into<String>) -> VmafError {
    VmafError::Model {
        source: source.to_string(),
        what: what.into(),
    }
}

impl ModelSet {
    /// A built-in version name or a path, nothing else.
    pub(crate) fn load_plain(name_or_path: &str) -> Result<Self, VmafError> {
        if let Some((_, text)) = BUILT_IN.iter().find(|(n, _)| *n == name_or_path) {
            return Self::parse(name_or_path, text);
        }
        if let Some((_, base)) = FLOAT_BUILT_IN.iter().find(|(n, _)| *n == name_or_path) {
            let mut set = Self::load_plain(base)?;
            for m in std::iter::once(&mut set.main).chain(set.bootstrap.iter_mut()) {
                for f in &mut m.features {
                    f.name = f.name.replace("VMAF_integer_feature_", "VMAF_feature_");
                }
            }
            return Ok(set);
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            let names = built_in_names();
            return Err(err(
                name_or_path,
                format!(
                    "no such file, and not a built-in model (built-in: {})",
                    names.join(", ")
                ),
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| err(name_or_path, format!("cannot read: {e}")))?;
        Self::parse(name_or_path, &text)
    }

    /// Parse a single model, or failing that a collection, as libvmaf does.
    pub fn parse(source: &str, text: &str) -> Result<Self, VmafError> {
        let json: Value = serde_json::from_str(text).map_err(|e| {
            err(
                source,
                format!(
                    "invalid JSON at line {}, column {}: {e}",
                    e.line(),
                    e.column()
                ),
            )
        })?;
        let obj = json
            .as_object()
            .ok_or_else(|| err(source, "top level is not a JSON object"))?;
        if obj.contains_key("model_dict") {
            return Ok(ModelSet {
                main: Model::from_json(source, &json)?,
                bootstrap: Vec::new(),
            });
        }
        if obj.contains_key("0") {
            let main = Model::from_json(&format!("{source}[\"0\"]"), &obj["0"])?;
            let mut bootstrap = Vec::new();
            let mut i = 1;
            while let Some(m) = obj.get(&i.to_string()) {
                let mut model = Model::from_json(&format!("{source}[\"{i}\"]"), m)?;
                model.name = format!("vmaf_{i:04}");
                bootstrap.push(model);
                i += 1;
            }
            if bootstrap.is_empty() {
                return Err(err(source, "model collection has only model \"0\""));
            }
            return Ok(ModelSet { main, bootstrap });
        }
        Err(err(
            source,
            "neither a model (no \"model_dict\") nor a model collection (no \"0\")",
        ))
    }
}

fn num_array(
    source: &str,
    md: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<Vec<f64>, VmafError> {
    let arr = md
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| err(source, format!("model_dict.{key} missing or not a list")))?;
    arr.iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_f64()
                .ok_or_else(|| err(source, format!("model_dict.{key}[{i}] is not a number")))
        })
        .collect()
}

type ModelDict = serde_json::Map<String, Value>;

/// libvmaf reads libsvm nu-SVR models and their bootstrap collections only.
fn check_model_type(source: &str, md: &ModelDict) -> Result<(), VmafError> {
    let model_type = md
        .get("model_type")
        .and_then(Value::as_str)
        .ok_or_else(|| err(source, "model_dict.model_type missing"))?;
    if !matches!(
        model_type,
        "LIBSVMNUSVR" | "BOOTSTRAP_LIBSVMNUSVR" | "RESIDUEBOOTSTRAP_LIBSVMNUSVR"
    ) {
        return Err(err(
            source,
            format!("model_dict.model_type \"{model_type}\" is not a libsvm nu-SVR model"),
        ));
    }
    Ok(())
}

/// `feature_names`: a non-empty list of strings.
fn feature_names(source: &str, md: &ModelDict) -> Result<Vec<String>, VmafError> {
    let names = md
        .get("feature_names")
        .and_then(Value::as_array)
        .ok_or_else(|| err(source, "model_dict.feature_names missing or not a list"))?;
    let names: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str().map(str::to_string).ok_or_else(|| {
                err(
                    source,
                    format!("model_dict.feature_names[{i}] is not a string"),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    if names.is_empty() {
        return Err(err(source, "model_dict.feature_names is empty"));
    }
    Ok(names)
}

/// `norm_type` and, for `linear_rescale`, `slopes` and `intercepts` (the
/// score's first, then one per feature); identity for `none`.
fn normalisation(
    source: &str,
    md: &ModelDict,
    n: usize,
) -> Result<(bool, Vec<f64>, Vec<f64>), VmafError> {
    let norm = md
        .get("norm_type")
        .and_then(Value::as_str)
        .unwrap_or("none");
    match norm {
        "linear_rescale" => {
            let s = num_array(source, md, "slopes")?;
            let i = num_array(source, md, "intercepts")?;
            if s.len() != n + 1 || i.len() != n + 1 {
                return Err(err(
                    source,
                    format!(
                        "model_dict.slopes/intercepts have {}/{} entries, {n} features need {}",
                        s.len(),
                        i.len(),
                        n + 1
                    ),
                ));
            }
            Ok((true, s, i))
        }
        "none" => Ok((false, vec![1.0; n + 1], vec![0.0; n + 1])),
        other => Err(err(
            source,
            format!("model_dict.norm_type \"{other}\" is unknown"),
        )),
    }
}

/// `feature_opts_dicts`: per feature, its options (numbers, booleans or
/// strings); none where the list is absent.
fn feature_options(
    source: &str,
    md: &ModelDict,
    n: usize,
) -> Result<Vec<Vec<(String, OptValue)>>, VmafError> {
    let Some(opts) = md.get("feature_opts_dicts").and_then(Value::as_array) else {
        return Ok(vec![Vec::new(); n]);
    };
    if opts.len() != n {
        return Err(err(
            source,
            format!(
                "model_dict.feature_opts_dicts has {} entries for {n} features",
                opts.len()
            ),
        ));
    }
    let one = |i: usize, d: Option<&ModelDict>| -> Result<Vec<(String, OptValue)>, VmafError> {
        let mut options = Vec::new();
        for (k, v) in d.into_iter().flatten() {
            let val = match v {
                Value::Bool(b) => OptValue::Bool(*b),
                Value::Number(n) => OptValue::Number(n.as_f64().unwrap_or(0.0)),
                Value::String(t) => OptValue::Str(t.clone()),
                _ => {
                    return Err(err(
                        source,
                        format!(
                            "model_dict.feature_opts_dicts[{i}].{k} is neither a number, a boolean nor a string"
                        ),
                    ));
                }
            };
            options.push((k.clone(), val));
        }
        Ok(options)
    };
    opts.iter()
        .enumerate()
        .map(|(i, o)| one(i, o.as_object()))
        .collect()
}

/// `score_clip`: `[min, max]`, or none.
fn score_clip(source: &str, md: &ModelDict) -> Result<Option<(f64, f64)>, VmafError> {
    match md.get("score_clip") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let a = v
                .as_array()
                .filter(|a| a.len() == 2)
                .ok_or_else(|| err(source, "model_dict.score_clip is not [min, max]"))?;
            let lo = a[0]
                .as_f64()
                .ok_or_else(|| err(source, "model_dict.score_clip[0] is not a number"))?;
            let hi = a[1]
                .as_f64()
                .ok_or_else(|| err(source, "model_dict.score_clip[1] is not a number"))?;
            Ok(Some((lo, hi)))
        }
    }
}

/// An optional number (absent or null: none).
fn optional_number(source: &str, md: &ModelDict, key: &str) -> Result<Option<f64>, VmafError> {
    match md.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .map(Some)
            .ok_or_else(|| err(source, format!("model_dict.{key} is not a number"))),
    }
}

impl Model {
    /// A libvmaf JSON model (`model_dict`): its type checked, then each
    /// part read by its own function below, every error naming the key.
    fn from_json(source: &str, json: &Value) -> Result<Self, VmafError> {
        let md = json
            .get("model_dict")
            .and_then(Value::as_object)
            .ok_or_else(|| err(source, "\"model_dict\" missing or not an object"))?;
        check_model_type(source, md)?;
        let names = feature_names(source, md)?;
        let (linear_rescale, slopes, intercepts) = normalisation(source, md, names.len())?;
        let options = feature_options(source, md, names.len())?;
        let features = names
            .into_iter()
            .zip(options)
            .enumerate()
            .map(|(i, (name, options))| ModelFeature {
                name,
                options,
                slope: slopes[i + 1],
                intercept: intercepts[i + 1],
            })
            .collect::<Vec<_>>();
        let clip = score_clip(source, md)?;
        let transform = parse_transform(source, md.get("score_transform"))?;
        let svm_text = md
            .get("model")
            .and_then(Value::as_str)
            .ok_or_else(|| err(source, "model_dict.model (the libsvm text) missing"))?;
        let svm = parse_svm(source, svm_text, features.len())?;
        Ok(Model {
            name: "vmaf".into(),
            features,
            linear_rescale,
            slope: slopes[0],
            intercept: intercepts[0],
            clip,
            transform,
            svm,
            chroma_correction: optional_number(source, md, "chroma_correction_parameter")?,
        })
    }

    /// `predict.c:vmaf_predict_score_at_index` given the feature values in
    /// `feature_names` order. `raw` skips transform and clip (bootstrap statistics).
    pub fn predict(&self, values: &[f64], flags: ModelFlags, raw: bool) -> f64 {
        let norm = |f: &ModelFeature, v: f64| {
            if self.linear_rescale {
                f.slope * v + f.intercept
            } else {
                v
            }
        };
        let denorm = |f: &ModelFeature, v: f64| {
            if self.linear_rescale {
                (v - f.intercept) / f.slope
            } else {
                v
            }
        };
        let mut x: Vec<f64> = self
            .features
            .iter()
            .zip(values)
            .map(|(f, &v)| norm(f, v))
            .collect();
        if let Some(c) = self.chroma_correction
            && c != 0.0
        {
            // predict.c:post_process_feature_from_another("adm3", "speed_chroma"):
            // each input is de-normalised again; a speed_chroma of exactly 0
            // (flat or identical chroma) is replaced by c·(1 − adm3), written
            // as libvmaf evaluates it.
            let find = |key: &str| self.features.iter().position(|f| f.name.contains(key));
            if let (Some(gi), Some(si)) = (find("adm3"), find("speed_chroma"))
                && denorm(&self.features[si], x[si]) == 0.0
            {
                let guiding = denorm(&self.features[gi], x[gi]);
                x[si] = norm(&self.features[si], -c * guiding + c);
            }
        }
        let mut sum = 0.0;
        for (coef, sv) in &self.svm.support {
            sum += coef * rbf(&x, sv, self.svm.gamma);
        }
        sum -= self.svm.rho;
        let mut y = if self.linear_rescale {
            (sum - self.intercept) / self.slope
        } else {
            sum
        };
        if raw {
            return y;
        }
        if self.transform.enabled || flags.enable_transform {
            y = self.transform.apply(y);
        }
        if let Some((lo, hi)) = self.clip
            && !flags.disable_clip
        {
            y = if y < lo { lo } else { y };
            y = if y > hi { hi } else { y };
        }
        y
    }
}

/// libsvm's RBF kernel on sparse vectors, summing squared differences in
/// index order (`svm.cpp:Kernel::k_function`); `x` is dense with indices 1..n.
fn rbf(x: &[f64], sv: &[(i32, f64)], gamma: f64) -> f64 {
    let mut sum = 0.0;
    let mut xi = 0usize;
    let mut si = 0usize;
    while xi < x.len() && si < sv.len() {
        let (idx, val) = sv[si];
        let xidx = xi as i32 + 1;
        if xidx == idx {
            let d = x[xi] - val;
            sum += d * d;
            xi += 1;
            si += 1;
        } else if xidx > idx {
            sum += val * val;
            si += 1;
        } else {
            sum += x[xi] * x[xi];
            xi += 1;
        }
    }
    for &v in &x[xi..] {
        sum += v * v;
    }
    for &(_, v) in &sv[si..] {
        sum += v * v;
    }
    (-gamma * sum).exp()
}

impl Transform {
    /// `predict.c:transform`: polynomial, knots, then rectification.
    pub fn apply(&self, y_in: f64) -> f64 {
        let mut y = if self.p0.is_some() || self.p1.is_some() || self.p2.is_some() {
            let mut o = 0.0;
            if let Some(p0) = self.p0 {
                o += p0;
            }
            if let Some(p1) = self.p1 {
                o += p1 * y_in;
            }
            if let Some(p2) = self.p2 {
                o += p2 * y_in * y_in;
            }
            o
        } else {
            y_in
        };
        if self.knots.len() > 1 {
            y = piecewise_linear(y, &self.knots);
        }
        if self.out_lte_in && y > y_in {
            y = y_in;
        }
        if self.out_gte_in && y < y_in {
            y = y_in;
        }
        y
    }
}

/// `predict.c:piecewise_linear_mapping` (knots validated at load).
fn piecewise_linear(x: f64, knots: &[(f64, f64)]) -> f64 {
    let n_seg = knots.len() - 1;
    let mut y = 0.0;
    for idx in 0..n_seg {
        let (x0, y0) = knots[idx];
        let (x1, y1) = knots[idx + 1];
        let inside = x0 <= x && x <= x1;
        let (slope, offset) = if y0 == y1 {
            (0.0, y0)
        } else if x0 == 0.0 {
            ((y1 - y0) / x1, y0)
        } else {
            let a = (y1 - y0) / (x1 - x0);
            (a, y0 - x0 * a)
        };
        if inside || (idx == 0 && x < x0) || (idx == n_seg - 1 && x > x1) {
            y = slope * x + offset;
        }
    }
    y
}

fn parse_transform(source: &str, v: Option<&Value>) -> Result<Transform, VmafError> {
    let mut t = Transform::default();
    let Some(v) = v else { return Ok(t) };
    if v.is_null() {
        return Ok(t);
    }
    let o = v
        .as_object()
        .ok_or_else(|| err(source, "model_dict.score_transform is not an object"))?;
    let truthy = |k: &str| -> bool {
        match o.get(k) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s == "true",
            _ => false,
        }
    };
    t.enabled = truthy("enabled");
    t.out_lte_in = truthy("out_lte_in");
    t.out_gte_in = truthy("out_gte_in");
    for (k, slot) in [("p0", &mut t.p0), ("p1", &mut t.p1), ("p2", &mut t.p2)] {
        match o.get(k) {
            None | Some(Value::Null) => {}
            Some(x) => {
                *slot = Some(x.as_f64().ok_or_else(|| {
                    err(
                        source,
                        format!("model_dict.score_transform.{k} is not a number"),
                    )
                })?)
            }
        }
    }
    if let Some(k) = o.get("knots").filter(|k| !k.is_null()) {
        let arr = k
            .as_array()
            .ok_or_else(|| err(source, "model_dict.score_transform.knots is not a list"))?;
        if arr.len() > 10 {
            return Err(err(
                source,
                "model_dict.score_transform.knots has more than 10 knots",
            ));
        }
        for (i, p) in arr.iter().enumerate() {
            let pair = p
                .as_array()
                .filter(|a| a.len() == 2)
                .and_then(|a| Some((a[0].as_f64()?, a[1].as_f64()?)))
                .ok_or_else(|| {
                    err(
                        source,
                        format!("model_dict.score_transform.knots[{i}] is not [x, y]"),
                    )
                })?;
            t.knots.push(pair);
        }
        for (i, w) in t.knots.windows(2).enumerate() {
            if !(w[0].0 < w[1].0 && w[0].1 <= w[1].1) {
                return Err(err(
                    source,
                    format!(
                        "model_dict.score_transform.knots[{i}..{}] do not increase",
                        i + 1
                    ),
                ));
            }
        }
    }
    Ok(t)
}

/// `svm.cpp:svm_parse_model_from_buffer` for a nu_svr / rbf model.
fn parse_svm(source: &str, text: &str, n_features: usize) -> Result<Svm, VmafError> {
    let mut lines = text.lines().enumerate();
    let mut gamma = None;
    let mut rho = None;
    let mut total_sv = None;
    let e =
        |line: usize, what: String| err(source, format!("libsvm model line {}: {what}", line + 1));
    for (ln, line) in lines.by_ref() {
        let mut it = line.split_whitespace();
        let Some(key) = it.next() else { continue };
        let val = it.next();
        match key {
            "svm_type" if val != Some("nu_svr") => {
                return Err(e(ln, format!("svm_type {val:?} is not nu_svr")));
            }
            "kernel_type" if val != Some("rbf") => {
                return Err(e(ln, format!("kernel_type {val:?} is not rbf")));
            }
            "gamma" => gamma = val.and_then(|v| v.parse::<f64>().ok()),
            "rho" => rho = val.and_then(|v| v.parse::<f64>().ok()),
            "total_sv" => total_sv = val.and_then(|v| v.parse::<usize>().ok()),
            "SV" => break,
            "svm_type" | "kernel_type" | "nr_class" => {}
            other => return Err(e(ln, format!("unknown key \"{other}\""))),
        }
    }
    let gamma = gamma.ok_or_else(|| err(source, "libsvm model has no valid gamma"))?;
    let rho = rho.ok_or_else(|| err(source, "libsvm model has no valid rho"))?;
    let total = total_sv.ok_or_else(|| err(source, "libsvm model has no valid total_sv"))?;
    let mut support = Vec::with_capacity(total);
    for (ln, line) in lines {
        let mut it = line.split_whitespace();
        let Some(coef) = it.next() else { continue };
        let coef: f64 = coef.parse().map_err(|_| {
            e(
                ln,
                format!("support vector coefficient \"{coef}\" is not a number"),
            )
        })?;
        let mut nodes = Vec::new();
        for tok in it {
            let (i, v) = tok
                .split_once(':')
                .ok_or_else(|| e(ln, format!("\"{tok}\" is not index:value")))?;
            let i: i32 = i
                .parse()
                .map_err(|_| e(ln, format!("index \"{i}\" is not an integer")))?;
            let v: f64 = v
                .parse()
                .map_err(|_| e(ln, format!("value \"{v}\" is not a number")))?;
            if i < 1 || i as usize > n_features || nodes.last().is_some_and(|&(p, _)| p >= i) {
                return Err(e(
                    ln,
                    format!("index {i} out of order or outside 1..={n_features}"),
                ));
            }
            nodes.push((i, v));
        }
        support.push((coef, nodes));
    }
    if support.len() != total {
        return Err(err(
            source,
            format!(
                "libsvm model promises {total} support vectors (total_sv) but has {}: truncated?",
                support.len()
            ),
        ));
    }
    Ok(Svm {
        gamma,
        rho,
        support,
    })
}

/// Bootstrap statistics of one frame (`predict.c:vmaf_bootstrap_predict_score_at_index`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bootstrap {
    pub bagging: f64,
    pub stddev: f64,
    pub ci_lo: f64,
    pub ci_hi: f64,
}

/// Mean, population stddev and the 95% interval of the raw collection
/// scores, passed through the first collection model's transform and clip.
pub fn bootstrap(models: &[Model], values: &[f64], flags: ModelFlags) -> Bootstrap {
    let raw: Vec<f64> = models
        .iter()
        .map(|m| m.predict(values, flags, true))
        .collect();
    let n = raw.len() as f64;
    let mean = raw.iter().sum::<f64>() / n;
    let var = raw.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    let mut sorted = raw.clone();
    sorted.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        let pos = p * (sorted.len() - 1) as f64 / 100.0;
        let lo = pos.floor() as usize;
        let hi = pos.ceil() as usize;
        sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
    };
    let first = &models[0];
    let post = |y: f64| {
        let mut y = y;
        if first.transform.enabled || flags.enable_transform {
            y = first.transform.apply(y);
        }
        if let Some((lo, hi)) = first.clip
            && !flags.disable_clip
        {
            y = y.clamp(lo, hi);
        }
        y
    };
    let slope = (post(mean + 0.01) - post(mean - 0.01)) / 0.02;
    Bootstrap {
        bagging: post(mean),
        stddev: var.sqrt() * slope,
        ci_lo: post(pct(2.5)),
        ci_hi: post(pct(97.5)),
    }
}
