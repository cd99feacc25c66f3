//! A model as the user names it: libvmaf's `--model` argument
//! ([`ModelSpec`]) and `FEATURE.OPTION=VALUE` overrides, which reach the
//! model features that extractor `FEATURE` computes. Finding that extractor
//! takes the registry, so this part of [`ModelSet`] lives here, above
//! `core::model`, which parses and evaluates the models.

use super::provider_of;
use crate::core::VmafError;
use crate::core::model::{ModelFlags, ModelSet, OptValue, built_in_names, err};
use std::path::Path;

/// A parsed libvmaf `--model` argument.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSpec {
    pub models: ModelSet,
    pub flags: ModelFlags,
}

impl ModelSpec {
    /// libvmaf's `--model` syntax (`tools/cli_parse.c:parse_model_config`):
    /// `:`-separated `version=NAME` or `path=FILE`, `name=`, `disable_clip`,
    /// `enable_transform`, and `FEATURE.OPTION=VALUE` overrides merged into
    /// the options of the model's feature extracted by `FEATURE`, e.g.
    /// `version=vmaf_v1.0.16_3d0h:cambi.enc_width=1280`.
    pub fn parse(arg: &str) -> Result<Self, VmafError> {
        let mut source = None;
        let mut name = None;
        let mut flags = ModelFlags::default();
        let mut overrides = Vec::new();
        for kv in arg.split(':') {
            let (k, v) = match kv.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (kv, None),
            };
            match (k, v) {
                ("version" | "path", Some(v)) => source = Some(v),
                ("name", Some(v)) => name = Some(v),
                ("disable_clip", v) => flags.disable_clip = v.is_none_or(|v| v == "true"),
                ("enable_transform", v) => flags.enable_transform = v.is_none_or(|v| v == "true"),
                (k, Some(v)) if k.contains('.') => overrides.push((k, v)),
                _ => return Err(err(arg, format!("bad model option \"{kv}\""))),
            }
        }
        let source = source.ok_or_else(|| err(arg, "no version=NAME or path=FILE"))?;
        let mut models = ModelSet::load_plain(source)?;
        for (k, v) in overrides {
            models.overload(k, v)?;
        }
        if let Some(n) = name {
            models.main.name = n.to_string();
        }
        Ok(ModelSpec { models, flags })
    }
}

/// libvmaf's extractor name (`VmafFeatureExtractor.name`) of a raw model feature.
pub fn extractor_of(feature: &str) -> Option<&'static str> {
    provider_of(feature).map(|(e, _)| e.name())
}

impl ModelSet {
    /// A built-in version name (`vmaf_v0.6.1`) or a path to a JSON file, each
    /// optionally followed by `:FEATURE.OPTION=VALUE` overrides
    /// (`vmaf_v1.0.16_3d0h:cambi.enc_width=1280`).
    pub fn load(spec: &str) -> Result<Self, VmafError> {
        if built_in_names().contains(&spec) || Path::new(spec).exists() {
            return Self::load_plain(spec);
        }
        let mut parts = spec.split(':');
        let base = parts.next().unwrap_or_default();
        let mut models = Self::load_plain(base)?;
        for kv in parts {
            let (k, v) = kv
                .split_once('=')
                .filter(|(k, _)| k.contains('.'))
                .ok_or_else(|| {
                    err(
                        spec,
                        format!("\"{kv}\" is not a FEATURE.OPTION=VALUE override"),
                    )
                })?;
            models.overload(k, v)?;
        }
        Ok(models)
    }

    /// `vmaf_model_collection_feature_overload`: merge `option=value` into the
    /// options of every model feature that extractor `feature` computes.
    pub fn overload(&mut self, key: &str, value: &str) -> Result<(), VmafError> {
        let (feature, option) = key
            .split_once('.')
            .filter(|(f, o)| !f.is_empty() && !o.is_empty())
            .ok_or_else(|| err(key, "override is not FEATURE.OPTION=VALUE"))?;
        let mut hit = false;
        for m in std::iter::once(&mut self.main).chain(self.bootstrap.iter_mut()) {
            for f in &mut m.features {
                if extractor_of(&f.name) != Some(feature) {
                    continue;
                }
                hit = true;
                let v = OptValue::Str(value.to_string());
                match f.options.iter_mut().find(|(k, _)| k == option) {
                    Some(slot) => slot.1 = v,
                    None => f.options.push((option.to_string(), v)),
                }
            }
        }
        if !hit {
            let used: Vec<_> = self
                .main
                .features
                .iter()
                .filter_map(|f| extractor_of(&f.name))
                .collect();
            return Err(err(
                key,
                format!(
                    "the model has no feature \"{feature}\" (its features: {})",
                    used.join(", ")
                ),
            ));
        }
        Ok(())
    }
}
