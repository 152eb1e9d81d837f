//! How well the source compresses, as a drive's compressor would see it: a fast real
//! compressor (LZ4) over pieces read from files spread across the source.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use super::source;

/// Files looked at, and pieces read: enough to stand for the source, quick to read.
const SAMPLE_FILES: usize = 2000;
const PIECES: usize = 64;
const PIECE: usize = 64 << 10;

/// The source's compression ratio (raw ÷ compressed, at least 1), or `None` when nothing
/// could be read.
pub fn measure(paths: &[PathBuf]) -> Option<f64> {
    let files = source::list_files(paths, SAMPLE_FILES);
    if files.is_empty() {
        return None;
    }
    let step = (files.len() / PIECES).max(1);
    let mut buffer = vec![0u8; PIECE];
    let (mut raw, mut compressed) = (0u64, 0u64);
    for path in files.iter().step_by(step).take(PIECES) {
        let Ok(file) = path.open(false) else { continue };
        let Ok(len) = file.metadata().map(|m| m.len()) else {
            continue;
        };
        // The middle of the file: headers alone compress unlike the body.
        let offset = (len / 2).saturating_sub(PIECE as u64 / 2);
        let Ok(read) = file.read_at(&mut buffer, offset) else {
            continue;
        };
        if read == 0 {
            continue;
        }
        raw += read as u64;
        compressed += lz4_flex::block::compress(&buffer[..read]).len().max(1) as u64;
    }
    (compressed > 0).then(|| (raw as f64 / compressed as f64).max(1.0))
}
