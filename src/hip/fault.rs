//! Fault injection for the failover tests: `VMAFHIP_FAULT=KIND:frame=N`
//! makes the HIP backend fail as a broken GPU would, at frame N:
//! - `launch`: submitting frame N fails;
//! - `sync`: collecting frame N's features fails (those read back with it
//!   are lost);
//! - `alloc`: setting up the device memory for a stream fails, when the
//!   first frame from N on arrives;
//! - `device-lost`: from frame N on, every call fails.
//!
//! Read once per process, only here; documented only in docs/testing.md;
//! says loudly on stderr that it is active.

#![forbid(unsafe_code)]

use crate::vmaf::VmafError;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Launch,
    Sync,
    Alloc,
    DeviceLost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: Kind,
    pub frame: u64,
}

impl Fault {
    /// `KIND:frame=N`.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let (kind, frame) = spec
            .split_once(":frame=")
            .ok_or_else(|| format!("VMAFHIP_FAULT={spec}: expected KIND:frame=N"))?;
        let kind = match kind {
            "launch" => Kind::Launch,
            "sync" => Kind::Sync,
            "alloc" => Kind::Alloc,
            "device-lost" => Kind::DeviceLost,
            other => {
                return Err(format!(
                    "VMAFHIP_FAULT={spec}: kind {other:?} (launch, sync, alloc or device-lost)"
                ));
            }
        };
        let frame = frame
            .parse()
            .map_err(|_| format!("VMAFHIP_FAULT={spec}: frame {frame:?} is not a number"))?;
        Ok(Fault { kind, frame })
    }

    /// The error it gives.
    pub fn error(&self, at: u64) -> VmafError {
        VmafError::Backend(format!(
            "HIP: injected fault ({:?} at frame {}) on frame {at}",
            self.kind, self.frame
        ))
    }
}

/// The process's fault, if `VMAFHIP_FAULT` asks for one (announced once).
pub fn configured() -> Option<Fault> {
    static FAULT: OnceLock<Option<Fault>> = OnceLock::new();
    *FAULT.get_or_init(|| {
        let spec = std::env::var("VMAFHIP_FAULT").ok()?;
        match Fault::parse(&spec) {
            Ok(f) => {
                eprintln!(
                    "vmafhip: VMAFHIP_FAULT={spec} is set: this process INJECTS GPU FAULTS (tests only)"
                );
                Some(f)
            }
            Err(e) => {
                eprintln!("vmafhip: {e}; no fault injected");
                None
            }
        }
    })
}

/// A backend's injected fault and whether it has struck (a lost device
/// stays lost; the others strike once).
#[derive(Debug, Default)]
pub struct Injector {
    fault: Option<Fault>,
    struck: bool,
}

impl Injector {
    pub fn from_env() -> Self {
        Self {
            fault: configured(),
            struck: false,
        }
    }

    /// Fails where `kind` (or a lost device) strikes at frame `at`.
    pub fn check(&mut self, kind: Kind, at: u64) -> Result<(), VmafError> {
        let Some(f) = self.fault else {
            return Ok(());
        };
        let lost = f.kind == Kind::DeviceLost && (self.struck || at >= f.frame);
        let once = f.kind == kind && !self.struck && at >= f.frame;
        if lost || once {
            self.struck = true;
            return Err(f.error(at));
        }
        Ok(())
    }

    /// Whether a lost device makes every call fail.
    pub fn lost(&self) -> Option<VmafError> {
        self.fault
            .filter(|f| f.kind == Kind::DeviceLost && self.struck)
            .map(|f| f.error(f.frame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_strike_once_or_for_good() {
        assert_eq!(
            Fault::parse("sync:frame=7"),
            Ok(Fault {
                kind: Kind::Sync,
                frame: 7
            })
        );
        assert!(Fault::parse("melt:frame=1").unwrap_err().contains("melt"));
        assert!(Fault::parse("launch").is_err());
        let mut i = Injector {
            fault: Some(Fault::parse("launch:frame=2").unwrap()),
            struck: false,
        };
        assert!(i.check(Kind::Launch, 1).is_ok());
        assert!(i.check(Kind::Sync, 2).is_ok());
        assert!(i.check(Kind::Launch, 2).is_err());
        assert!(i.check(Kind::Launch, 3).is_ok());
        let mut lost = Injector {
            fault: Some(Fault::parse("device-lost:frame=1").unwrap()),
            struck: false,
        };
        assert!(lost.check(Kind::Launch, 0).is_ok());
        assert!(lost.check(Kind::Sync, 1).is_err());
        assert!(lost.lost().is_some() && lost.check(Kind::Launch, 0).is_err());
    }
}
