//! Fault injection for the failover tests: `VMAFHIP_FAULT=KIND:frame=N`
//! makes the HIP backend fail as a broken GPU would, at frame N:
//! - `launch`: submitting frame N fails;
//! - `sync`: collecting frame N's features fails (those read back with it
//!   are lost);
//! - `alloc`: setting up the device memory for a stream fails, when the
//!   first frame from N on arrives;
//! - `device-lost`: from frame N on, every call of the backend it strikes
//!   fails (a backend opened after it works: the device came back).
//!
//! Several faults, comma-separated (`launch:frame=100,sync:frame=200`),
//! each strike once per process, at the first call of its kind from its
//! frame on, whichever backend makes it (a GPU reopened by
//! `on-gpu-error=retry` goes on from there).
//!
//! Read once per process, only here; documented only in docs/testing.md;
//! says loudly on stderr that it is active.

#![forbid(unsafe_code)]

use crate::core::VmafError;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// `Fault`s, comma-separated.
pub fn parse_list(spec: &str) -> Result<Vec<Fault>, String> {
    spec.split(',').map(|f| Fault::parse(f.trim())).collect()
}

/// Faults and whether each has struck, shared by every backend that
/// injects them.
#[derive(Debug, Default)]
pub struct Faults {
    faults: Vec<Fault>,
    struck: Vec<AtomicBool>,
}

impl Faults {
    pub fn new(faults: Vec<Fault>) -> Self {
        let struck = faults.iter().map(|_| AtomicBool::new(false)).collect();
        Self { faults, struck }
    }

    /// The first fault not struck yet that `kind` at frame `at` sets off,
    /// marked struck.
    fn strike(&self, kind: Kind, at: u64) -> Option<Fault> {
        self.faults
            .iter()
            .zip(&self.struck)
            .find_map(|(f, struck)| {
                let hits = at >= f.frame && (f.kind == kind || f.kind == Kind::DeviceLost);
                (hits && !struck.swap(true, Ordering::Relaxed)).then_some(*f)
            })
    }
}

/// The process's faults, as `VMAFHIP_FAULT` asks (announced once).
pub fn configured() -> &'static Faults {
    static FAULTS: OnceLock<Faults> = OnceLock::new();
    FAULTS.get_or_init(|| {
        let Ok(spec) = std::env::var("VMAFHIP_FAULT") else {
            return Faults::default();
        };
        match parse_list(&spec) {
            Ok(f) => {
                eprintln!(
                    "vmafhip: VMAFHIP_FAULT={spec} is set: this process INJECTS GPU FAULTS (tests only)"
                );
                Faults::new(f)
            }
            Err(e) => {
                eprintln!("vmafhip: {e}; no fault injected");
                Faults::default()
            }
        }
    })
}

/// A backend's view of the faults: the process's, and the lost device
/// that struck it, if one did (every later call fails).
#[derive(Debug)]
pub struct Injector {
    faults: &'static Faults,
    lost: Option<Fault>,
}

impl Default for Injector {
    fn default() -> Self {
        Self::from_env()
    }
}

impl Injector {
    pub fn from_env() -> Self {
        Self::new(configured())
    }

    pub fn new(faults: &'static Faults) -> Self {
        Self { faults, lost: None }
    }

    /// Fails where a fault of `kind` (or a lost device) strikes at frame `at`.
    pub fn check(&mut self, kind: Kind, at: u64) -> Result<(), VmafError> {
        if let Some(f) = self.lost {
            return Err(f.error(at));
        }
        let Some(f) = self.faults.strike(kind, at) else {
            return Ok(());
        };
        if f.kind == Kind::DeviceLost {
            self.lost = Some(f);
        }
        Err(f.error(at))
    }

    /// Whether a lost device makes every call fail.
    pub fn lost(&self) -> Option<VmafError> {
        self.lost.map(|f| f.error(f.frame))
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
        assert!(parse_list("launch:frame=1,sync").is_err());
        let faults = Box::leak(Box::new(Faults::new(
            parse_list("launch:frame=2, device-lost:frame=5").unwrap(),
        )));
        let mut i = Injector::new(faults);
        assert!(i.check(Kind::Launch, 1).is_ok());
        assert!(i.check(Kind::Sync, 2).is_ok());
        assert!(i.check(Kind::Launch, 2).is_err());
        assert!(i.check(Kind::Launch, 3).is_ok());
        // A second backend: the launch fault has struck already.
        let mut reopened = Injector::new(faults);
        assert!(reopened.check(Kind::Launch, 3).is_ok());
        assert!(reopened.check(Kind::Sync, 5).is_err());
        assert!(reopened.lost().is_some() && reopened.check(Kind::Launch, 0).is_err());
        // The device came back for the next backend.
        let mut third = Injector::new(faults);
        assert!(third.check(Kind::Sync, 9).is_ok() && third.lost().is_none());
    }
}
