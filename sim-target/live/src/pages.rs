//! A file read a page at a time, each page read once and kept: `/proc/PID/mem` of a stopped
//! process, a core file, the files a core's mappings came from. None of them changes while a
//! target is open (the process stays stopped, a core is written once), so a kept page answers
//! every later read without a system call. A library reads the same runtime structures over and
//! over; this is what keeps a real target from costing a `pread` per read.
//!
//! A read answers as reading the file at once would: the bytes up to where the first page that
//! stops short ends, and why it stopped (the file ended there, or the read failed, with the
//! error's text). The kernel reads `/proc/PID/mem` a page at a time too, so a read of it fails
//! where, and as, the first page it reaches fails.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

/// The unit a file is read and kept in.
pub(crate) const PAGE: u64 = 4096;

/// A file with the pages read so far.
#[derive(Debug)]
pub(crate) struct FilePages {
    file: File,
    pages: Mutex<HashMap<u64, Arc<Page>>>,
}

/// One page as the file gave it: the bytes readable from its start, then how the rest ended
/// (none when the whole page was read).
#[derive(Debug)]
struct Page {
    bytes: Vec<u8>,
    end: Option<End>,
}

/// Why a read stops short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The file has nothing more there (its end, or nothing readable).
    Nothing,
    /// The read failed with this error.
    Failed(String),
}

impl FilePages {
    /// `file`, with no page read yet.
    pub(crate) fn new(file: File) -> FilePages {
        FilePages {
            file,
            pages: Mutex::default(),
        }
    }

    /// Fills `buf` from offset `at`: how many bytes it filled, and why it stopped short if it
    /// did (`None`: all of `buf`).
    pub(crate) fn read_at(&self, buf: &mut [u8], at: u64) -> (usize, Option<End>) {
        let mut done = 0;
        while done < buf.len() {
            let pos = at + done as u64;
            let base = pos & !(PAGE - 1);
            let page = self.page(base);
            let from = (pos - base) as usize;
            if from >= page.bytes.len() {
                return (done, Some(page.end.clone().unwrap_or(End::Nothing)));
            }
            let take = (page.bytes.len() - from).min(buf.len() - done);
            buf[done..done + take].copy_from_slice(&page.bytes[from..from + take]);
            done += take;
        }
        (done, None)
    }

    /// Fills all of `buf` from offset `at`, or fails as `FileExt::read_exact_at` does.
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], at: u64) -> Result<(), String> {
        match self.read_at(buf, at).1 {
            None => Ok(()),
            Some(End::Nothing) => Err("failed to fill whole buffer".into()),
            Some(End::Failed(e)) => Err(e),
        }
    }

    /// The page at `base` (a multiple of [`PAGE`]): kept, or read now and kept.
    fn page(&self, base: u64) -> Arc<Page> {
        let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        pages
            .entry(base)
            .or_insert_with(|| Arc::new(self.read_page(base)))
            .clone()
    }

    fn read_page(&self, base: u64) -> Page {
        let mut bytes = vec![0u8; PAGE as usize];
        let mut done = 0;
        let end = loop {
            if done == bytes.len() {
                break None;
            }
            match self.file.read_at(&mut bytes[done..], base + done as u64) {
                Ok(0) => break Some(End::Nothing),
                Ok(k) => done += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Some(End::Failed(e.to_string())),
            }
        };
        bytes.truncate(done);
        Page { bytes, end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(bytes: &[u8]) -> (tempfile::NamedTempFile, FilePages) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        let pages = FilePages::new(File::open(f.path()).unwrap());
        (f, pages)
    }

    #[test]
    fn reads_across_pages_and_stops_where_the_file_ends() {
        let data: Vec<u8> = (0..PAGE as usize + 100).map(|i| (i % 251) as u8).collect();
        let (_f, pages) = file_of(&data);
        let mut buf = vec![0u8; 20];
        assert_eq!(pages.read_at(&mut buf, PAGE - 10), (20, None));
        assert_eq!(buf, data[PAGE as usize - 10..PAGE as usize + 10]);
        let mut long = vec![0u8; 200];
        assert_eq!(pages.read_at(&mut long, PAGE), (100, Some(End::Nothing)));
        assert_eq!(long[..100], data[PAGE as usize..]);
        assert_eq!(
            pages.read_exact_at(&mut long, PAGE).unwrap_err(),
            "failed to fill whole buffer",
            "the text of read_exact_at's error"
        );
        assert_eq!(
            pages.read_at(&mut [0u8; 4], 3 * PAGE),
            (0, Some(End::Nothing))
        );
    }

    #[test]
    fn a_kept_page_is_not_read_again() {
        let (f, pages) = file_of(&[1u8; 64]);
        let mut buf = [0u8; 8];
        pages.read_exact_at(&mut buf, 0).unwrap();
        std::fs::write(f.path(), [2u8; 64]).unwrap();
        pages.read_exact_at(&mut buf, 8).unwrap();
        assert_eq!(buf, [1u8; 8], "the page read first answers");
        let fresh = FilePages::new(File::open(f.path()).unwrap());
        fresh.read_exact_at(&mut buf, 8).unwrap();
        assert_eq!(buf, [2u8; 8]);
    }
}
