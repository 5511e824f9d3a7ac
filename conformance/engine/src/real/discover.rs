//! Discovery: the OMPD libraries a real target's runtime names in `ompd_dll_locations` (read by
//! `ompd_checks::dll_locations_of`), as a debugger finds them when no library is given.

use super::RealTarget;
use ompd_serve::source::Source;
use std::path::PathBuf;

/// The OMPD libraries a real target's runtime names in `ompd_dll_locations`, as paths that
/// exist: absolute entries as they are, relative ones in the runtime's directory (where the
/// runtimes ship them) and then as given. `Err` names what is missing.
pub fn discover(target: &RealTarget) -> Result<Vec<PathBuf>, String> {
    let (source, modules): (Box<dyn Source>, live_target::modules::Modules) = match target {
        RealTarget::Live { pid } => {
            let t = live_target::live::LiveTarget::attach(*pid)
                .map_err(|e| format!("cannot attach to pid {pid}: {e}"))?;
            let m = t.modules().clone();
            (Box::new(t), m)
        }
        RealTarget::Core { path } => {
            let t = live_target::core::CoreTarget::open(path)
                .map_err(|e| format!("cannot read core file {}: {e}", path.display()))?;
            let m = t.modules().clone();
            (Box::new(t), m)
        }
    };
    let listed = ompd_checks::dll_locations_of(source.as_ref())
        .map_err(|e| format!("no OMPD library named by the target: {e}"))?;
    let runtime_dir = modules
        .lookup("ompd_dll_locations")
        .and_then(|(i, _)| modules.list().get(i))
        .and_then(|m| m.path.parent().map(|d| d.to_path_buf()));
    let mut found = Vec::new();
    for entry in &listed {
        let p = PathBuf::from(entry);
        let candidates: Vec<PathBuf> = if p.is_absolute() {
            vec![p]
        } else {
            let mut c: Vec<PathBuf> = runtime_dir.iter().map(|d| d.join(&p)).collect();
            c.push(p);
            c
        };
        if let Some(hit) = candidates.into_iter().find(|c| c.is_file()) {
            if !found.contains(&hit) {
                found.push(hit);
            }
        }
    }
    if found.is_empty() {
        return Err(format!(
            "ompd_dll_locations lists {listed:?}, none of which exists here (runtime directory: {})",
            runtime_dir.map_or("unknown".into(), |d| d.display().to_string())
        ));
    }
    Ok(found)
}
