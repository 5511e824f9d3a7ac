//! The zygote's wire format. One request is one byte carrying three descriptors
//! (`SCM_RIGHTS`): the worker's stdin, stdout and stderr ([`Descriptors`]), then what its units
//! need ([`Needs`]): the number of their target keys, then each key and the library's path as
//! its length and bytes, then the number of units (4-byte little-endian words).

use super::Descriptors;
use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// What a worker's units need that a zygote prepares before it forks.
pub(crate) struct Needs<'a> {
    /// The keys of the units' targets ([`crate::worker::keys`]).
    pub(crate) targets: &'a [String],
    /// The library file the units load.
    pub(crate) library: &'a Path,
    /// How many units there are.
    pub(crate) units: usize,
}

/// One request for a worker.
pub(super) struct Request {
    /// Its stdin, stdout and stderr.
    pub(super) fds: Vec<OwnedFd>,
    /// The keys of its units' targets ([`crate::worker::keys`]).
    pub(super) keys: Vec<String>,
    /// The library file its units load (empty: none).
    pub(super) library: PathBuf,
    /// How many units there are.
    pub(super) units: usize,
}

/// The next request, or `None` at the end of the stream.
pub(super) fn receive(ctl: &UnixStream) -> Result<Option<Request>, String> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    use std::os::fd::FromRawFd;
    let mut byte = [0u8; 1];
    let mut iov = [IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 3]);
    let msg = recvmsg::<()>(
        ctl.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(|e| format!("cannot read a request: {e}"))?;
    if msg.bytes == 0 {
        return Ok(None);
    }
    let mut fds = Vec::new();
    for c in msg.cmsgs().map_err(|e| format!("bad request: {e}"))? {
        if let ControlMessageOwned::ScmRights(raw) = c {
            // SAFETY: SCM_RIGHTS installed these descriptors in this process; nothing else
            // owns them.
            fds.extend(
                raw.into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    if fds.len() != 3 {
        return Err(format!(
            "a request carried {} descriptors, not 3",
            fds.len()
        ));
    }
    let (keys, library, units) = read_needs(ctl)?;
    Ok(Some(Request {
        fds,
        keys,
        library,
        units,
    }))
}

/// What a request says its worker's units need ([`encode`]): the keys of their targets, their
/// library file and their number.
fn read_needs(ctl: &UnixStream) -> Result<(Vec<String>, PathBuf, usize), String> {
    let keys = (0..read_u32(ctl)?)
        .map(|_| String::from_utf8(read_bytes(ctl)?).map_err(|e| format!("a request's key: {e}")));
    let keys = keys.collect::<Result<_, _>>()?;
    let library: std::ffi::OsString = std::os::unix::ffi::OsStringExt::from_vec(read_bytes(ctl)?);
    let units = read_u32(ctl)? as usize;
    Ok((keys, library.into(), units))
}

/// A request's little-endian `u32`.
fn read_u32(mut ctl: &UnixStream) -> Result<u32, String> {
    let mut word = [0u8; 4];
    ctl.read_exact(&mut word)
        .map_err(|e| format!("cannot read a request: {e}"))?;
    Ok(u32::from_le_bytes(word))
}

/// One of a request's byte strings: its length, then its bytes.
fn read_bytes(mut ctl: &UnixStream) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0u8; read_u32(ctl)? as usize];
    ctl.read_exact(&mut bytes)
        .map_err(|e| format!("cannot read a request: {e}"))?;
    Ok(bytes)
}

/// Sends a request to the zygote at the other end of `ctl`: a worker on `fds` whose units
/// need `needs`.
pub(super) fn send(ctl: &UnixStream, fds: &Descriptors, needs: &Needs) -> Result<(), String> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    let raw = [
        fds.stdin.as_raw_fd(),
        fds.events.as_raw_fd(),
        fds.capture.as_raw_fd(),
    ];
    sendmsg::<()>(
        ctl.as_raw_fd(),
        &[IoSlice::new(b"w")],
        &[ControlMessage::ScmRights(&raw)],
        MsgFlags::MSG_NOSIGNAL,
        None,
    )
    .map_err(|e| format!("the zygote takes no request: {e}"))?;
    let mut ctl = ctl;
    ctl.write_all(&encode(needs)?)
        .map_err(|e| format!("the zygote takes no request: {e}"))
}

/// A request's needs as they are sent: the number of keys, then each key and the library's
/// path as its length and bytes, then the number of units (little-endian `u32`s).
fn encode(needs: &Needs) -> Result<Vec<u8>, String> {
    use std::os::unix::ffi::OsStrExt;
    let word = |n: usize| u32::try_from(n).map(u32::to_le_bytes);
    let too_long = |_| "a request over 4 GiB".to_string();
    let mut out = word(needs.targets.len()).map_err(too_long)?.to_vec();
    let library = needs.library.as_os_str().as_bytes();
    for bytes in needs.targets.iter().map(String::as_bytes).chain([library]) {
        out.extend(word(bytes.len()).map_err(too_long)?);
        out.extend(bytes);
    }
    out.extend(word(needs.units).map_err(too_long)?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_carries_every_key_of_the_batch_in_order_the_library_path_byte_for_byte_and_the_units(
    ) {
        use std::os::unix::ffi::OsStrExt;
        let targets = vec![
            "{\"a\":1}".to_string(),
            String::new(),
            "{\"a\":1}".to_string(),
        ];
        let library = Path::new(std::ffi::OsStr::from_bytes(b"/lib/\xffompd \xe9.so"));
        let needs = Needs {
            targets: &targets,
            library,
            units: 4,
        };
        let (mut ours, theirs) = UnixStream::pair().unwrap();
        ours.write_all(&encode(&needs).unwrap()).unwrap();
        assert_eq!(
            read_needs(&theirs).unwrap(),
            (targets, library.to_path_buf(), 4)
        );
    }
}
