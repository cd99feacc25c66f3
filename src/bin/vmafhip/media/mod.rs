//! The inputs as media: what each is and holds (`video`, `probe`,
//! `input`), which decoder takes it (`decode`), and the threads that feed
//! its frames to the element (`feed` for raw and Y4M, `nvdec` for the
//! GPU's own decoder). Leaves of the command: they know its options
//! (`cli`) and nothing above.

pub mod decode;
pub mod feed;
pub mod input;
pub mod nvdec;
pub mod probe;
pub mod video;
