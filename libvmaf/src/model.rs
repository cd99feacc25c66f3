//! `VmafModel` and `VmafModelCollection`: a model set as vmafhip loads it
//! (a built-in version or a JSON file), with libvmaf's name and flags.

#![forbid(unsafe_code)]

use crate::dictionary::Dictionary;
use crate::ffi;
use gstvmafhip::vmaf::model::{ModelFlags, ModelSet};

/// A model (`bootstrap` empty) or a bootstrap model's collection.
#[derive(Clone, Debug)]
pub struct Model {
    pub set: ModelSet,
    pub flags: ModelFlags,
    /// The version name or path it was loaded from.
    pub source: String,
}

impl Model {
    /// The model named `source` (a built-in version or a path), named
    /// `name` in the results when given, with libvmaf's `flags`.
    pub fn load(source: &str, name: Option<&str>, flags: u64) -> Result<Model, String> {
        if flags & ffi::MODEL_FLAG_DISABLE_TRANSFORM != 0 {
            return Err("VMAF_MODEL_FLAG_DISABLE_TRANSFORM is not supported".into());
        }
        let mut set = ModelSet::load(source).map_err(|e| e.to_string())?;
        if let Some(n) = name {
            set.main.name = n.to_string();
        }
        Ok(Model {
            set,
            source: source.to_string(),
            flags: ModelFlags {
                disable_clip: flags & ffi::MODEL_FLAG_DISABLE_CLIP != 0,
                enable_transform: flags & ffi::MODEL_FLAG_ENABLE_TRANSFORM != 0,
            },
        })
    }

    /// A collection: the model and its bootstrap models.
    pub fn is_collection(&self) -> bool {
        !self.set.bootstrap.is_empty()
    }

    /// The scores' name: the model's per frame, and the base of a
    /// collection's `_bagging`, `_stddev`, `_ci_p95_lo` and `_ci_p95_hi`.
    pub fn name(&self) -> &str {
        &self.set.main.name
    }

    /// `opts` merged into the options of the model's features that
    /// extractor `feature` computes (libvmaf's `FEATURE.OPTION=VALUE`).
    pub fn overload(&mut self, feature: &str, opts: &Dictionary) -> Result<(), String> {
        for (k, v) in &opts.0 {
            self.set
                .overload(&format!("{feature}.{k}"), v)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}
