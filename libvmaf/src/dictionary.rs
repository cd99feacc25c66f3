//! `VmafFeatureDictionary`: an extractor's options as key/value strings,
//! in the order set.

#![forbid(unsafe_code)]

/// Options by name; setting a key again replaces its value.
#[derive(Clone, Debug, Default)]
pub struct Dictionary(pub Vec<(String, String)>);

impl Dictionary {
    pub fn set(&mut self, key: &str, value: &str) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => self.0.push((key.to_string(), value.to_string())),
        }
    }
}
