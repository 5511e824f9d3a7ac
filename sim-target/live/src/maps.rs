//! The memory mappings of a target: of a live process from `/proc/PID/maps`, of a core file from
//! its `NT_FILE` note. Both give, per mapping, the address range, the offset into the mapped file
//! and the file's path; the modules and the core reader are built on them.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// One mapping of a target's address space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Offset into the mapped file of `start`, in bytes.
    pub offset: u64,
    /// The mapped file's path; `None` for anonymous memory. `/proc/PID/maps` also names
    /// pseudo-files such as `[heap]` or `[vdso]`; those are kept as they are (see
    /// [`Mapping::file`]).
    pub path: Option<String>,
}

impl Mapping {
    /// Whether `addr` lies in the mapping.
    pub fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.end
    }

    /// The path of the mapped file if the mapping is backed by one (an absolute path; a file
    /// deleted since it was mapped has its ` (deleted)` suffix kept, and will not open).
    pub fn file(&self) -> Option<&Path> {
        self.path
            .as_deref()
            .filter(|p| p.starts_with('/'))
            .map(Path::new)
    }
}

/// Parses the text of `/proc/PID/maps`: `start-end perms offset dev inode [path]` per line.
/// Lines that do not parse are skipped.
pub fn parse_proc_maps(text: &str) -> Vec<Mapping> {
    text.lines().filter_map(parse_maps_line).collect()
}

fn parse_maps_line(line: &str) -> Option<Mapping> {
    // The path is everything after the fifth field; it may contain spaces.
    let mut rest = line;
    let mut fields = [""; 5];
    for f in &mut fields {
        rest = rest.trim_start_matches(' ');
        let end = rest.find(' ').unwrap_or(rest.len());
        *f = &rest[..end];
        rest = &rest[end..];
    }
    let (start, end) = fields[0].split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    let offset = u64::from_str_radix(fields[2], 16).ok()?;
    if end < start {
        return None;
    }
    let path = rest.trim_start_matches(' ');
    Some(Mapping {
        start,
        end,
        offset,
        path: (!path.is_empty()).then(|| path.to_string()),
    })
}

/// The mappings of live process `pid`.
pub fn read_proc_maps(pid: i32) -> std::io::Result<Vec<Mapping>> {
    Ok(parse_proc_maps(&std::fs::read_to_string(format!(
        "/proc/{pid}/maps"
    ))?))
}

/// Parses the descriptor of an `NT_FILE` note of a 64-bit little-endian core: a count, the page
/// size, `count` triples (start, end, file offset in pages), then `count` NUL-terminated paths.
/// Returns the mappings and the page size.
pub fn parse_nt_file(desc: &[u8]) -> Result<(Vec<Mapping>, u64), String> {
    let word = |i: usize| -> Result<u64, String> {
        let at = i.checked_mul(8).ok_or("NT_FILE: offset overflow")?;
        desc.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .ok_or_else(|| format!("NT_FILE: truncated at byte {at} of {}", desc.len()))
    };
    let count = word(0)?;
    let page = word(1)?;
    // Each entry needs 24 bytes of triple plus at least one byte of name.
    if count > (desc.len() as u64) / 25 {
        return Err(format!(
            "NT_FILE: {count} entries cannot fit in {} bytes",
            desc.len()
        ));
    }
    let count = count as usize;
    let mut names = desc
        .get(16 + 24 * count..)
        .ok_or("NT_FILE: truncated before the file names")?
        .split(|&b| b == 0);
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let start = word(2 + 3 * i)?;
        let end = word(3 + 3 * i)?;
        let pages = word(4 + 3 * i)?;
        let name = names
            .next()
            .ok_or_else(|| format!("NT_FILE: file name {i} missing"))?;
        if end < start {
            return Err(format!(
                "NT_FILE: entry {i} ends ({end:#x}) before it starts ({start:#x})"
            ));
        }
        let offset = pages
            .checked_mul(page)
            .ok_or_else(|| format!("NT_FILE: entry {i} file offset overflows"))?;
        out.push(Mapping {
            start,
            end,
            offset,
            path: Some(String::from_utf8_lossy(name).into_owned()),
        });
    }
    Ok((out, page))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_maps_lines_parse_with_and_without_paths() {
        let text = "\
55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 1234                       /usr/bin/my prog
55d0c0a01000-55d0c0a02000 r-xp 00001000 fd:01 1234                       /usr/bin/my prog
7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]
7f0000000000-7f0000001000 rw-p 00000000 00:00 0
garbage line
";
        let m = parse_proc_maps(text);
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].start, 0x55d0c0a00000);
        assert_eq!(m[1].offset, 0x1000);
        assert_eq!(m[1].path.as_deref(), Some("/usr/bin/my prog"));
        assert_eq!(m[1].file(), Some(Path::new("/usr/bin/my prog")));
        assert_eq!(m[2].path.as_deref(), Some("[stack]"));
        assert_eq!(m[2].file(), None);
        assert_eq!(m[3].path, None);
        assert!(m[3].contains(0x7f0000000fff) && !m[3].contains(0x7f0000001000));
    }

    fn nt_file(entries: &[(u64, u64, u64, &str)], page: u64) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend((entries.len() as u64).to_le_bytes());
        d.extend(page.to_le_bytes());
        for (s, e, o, _) in entries {
            d.extend(s.to_le_bytes());
            d.extend(e.to_le_bytes());
            d.extend(o.to_le_bytes());
        }
        for (.., n) in entries {
            d.extend(n.as_bytes());
            d.push(0);
        }
        d
    }

    #[test]
    fn nt_file_parses_and_rejects_damage() {
        let d = nt_file(
            &[(0x1000, 0x3000, 0, "/a"), (0x5000, 0x6000, 2, "/lib/b.so")],
            4096,
        );
        let (m, page) = parse_nt_file(&d).unwrap();
        assert_eq!(page, 4096);
        assert_eq!(m[1].offset, 2 * 4096);
        assert_eq!(m[1].path.as_deref(), Some("/lib/b.so"));
        for cut in 0..d.len() - 1 {
            // Every truncation is an error or a shorter valid list, never a panic.
            let _ = parse_nt_file(&d[..cut]);
        }
        let mut huge = d.clone();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_nt_file(&huge).is_err());
        let backwards = nt_file(&[(0x3000, 0x1000, 0, "/a")], 4096);
        assert!(parse_nt_file(&backwards).is_err());
        let overflow = nt_file(&[(0x1000, 0x2000, u64::MAX, "/a")], 4096);
        assert!(parse_nt_file(&overflow).is_err());
    }
}
