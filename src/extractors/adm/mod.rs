pub mod cpu;
mod decouple;
mod dwt;
pub(crate) mod gpu;
mod mask;
pub mod tables;
