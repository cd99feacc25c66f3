pub mod cpu;
pub(crate) mod gpu;
