//! A file the operator names (`backlab lmdd of=FILE`): created or truncated, written from its
//! start, and kept, so that a later read can measure it. Only the command line builds it; a
//! campaign's targets are directories the lab cleans up.
//!
//! With lmdd's `opat=1` the sink writes lmdd's pattern instead of the data it is handed: each
//! 4-byte word holds the low 32 bits of its own byte offset in the file (little-endian), filled
//! into a buffer of the sink's own just before each write, on the writing thread, as lmdd
//! fills its buffer. A later read can check every word.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{Capabilities, Opening, Sink, Target};
use crate::engine::EngineSettings;
use crate::engine::buffer::{AlignedBuf, PAGE};
use crate::engine::error::EngineError;
use crate::engine::target::{KindFacts, ToolRepository, Writes};
use crate::field_errors::FieldErrors;

/// The named file, open for writing.
pub struct FileSink {
    path: PathBuf,
    file: File,
    direct: bool,
    /// `opat=1`: the buffer each block's pattern is filled into, and the offset it starts at.
    pattern: Option<(AlignedBuf, u64)>,
}

impl Sink for FileSink {
    fn write_block(&mut self, data: &[u8]) -> io::Result<()> {
        let Some((buffer, offset)) = &mut self.pattern else {
            return self.file.write_all(data);
        };
        if buffer.len() < data.len() {
            *buffer = AlignedBuf::new(data.len());
        }
        let block = &mut buffer.as_mut_slice()[..data.len()];
        fill_pattern(block, *offset);
        *offset += data.len() as u64;
        self.file.write_all(block)
    }

    fn finish(&mut self, fsync: bool) -> io::Result<()> {
        if fsync {
            self.file.sync_data()?;
        }
        Ok(())
    }

    fn alignment(&self) -> usize {
        if self.direct { PAGE } else { 1 }
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// lmdd's output pattern for a block that starts at byte `offset`: each 4-byte word is the
/// low 32 bits of its own offset, little-endian.
pub fn fill_pattern(block: &mut [u8], offset: u64) {
    // Whole words as u32 where the block is aligned for them (a sink's own buffer always is),
    // so the loop compiles to wide stores: 32-byte ones where the CPU has AVX2, as the C
    // library's memset uses for the zeros other tools fill with.
    let start = offset as u32;
    match bytemuck::try_cast_slice_mut::<u8, u32>(block) {
        Ok(words) => {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                unsafe { fill_words_avx2(words, start) };
                return;
            }
            fill_words(words, start);
        }
        Err(_) => {
            for (index, word) in block.chunks_exact_mut(4).enumerate() {
                word.copy_from_slice(&start.wrapping_add(4 * index as u32).to_le_bytes());
            }
        }
    }
}

/// The pattern's words from `start` on.
#[inline(always)]
fn fill_words(words: &mut [u32], start: u32) {
    for (index, word) in words.iter_mut().enumerate() {
        *word = start.wrapping_add(4 * index as u32).to_le();
    }
}

/// [`fill_words`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fill_words_avx2(words: &mut [u32], start: u32) {
    fill_words(words, start);
}

/// A named file to write, and what goes into it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NamedFile {
    pub path: PathBuf,
    /// lmdd's `opat=1`: each block is filled with lmdd's offset pattern just before its write,
    /// on the writing thread, instead of carrying the data the pipeline handed over.
    #[serde(default)]
    pub pattern: bool,
}

/// A file on a real file system, kept after the run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileTarget(pub NamedFile);

/// What this kind is before its settings are read. A file the operator names on the command line, never from a spec.
pub const FACTS: KindFacts = KindFacts {
    id: "file",
    label: "file",
    takes_path: true,
    writes: Writes::NamedFile,
    tool_repository: ToolRepository::Nowhere,
    object_store: false,
};

impl Target for FileTarget {
    fn facts(&self) -> &'static KindFacts {
        &FACTS
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::HARDWARE
    }

    fn words(&self) -> String {
        format!("file {}", self.0.path.display())
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.0.path)
    }

    fn path_mut(&mut self) -> Option<&mut PathBuf> {
        Some(&mut self.0.path)
    }

    fn device_id(&self) -> Option<u64> {
        let parent = self.0.path.parent().filter(|p| !p.as_os_str().is_empty());
        std::fs::metadata(parent.unwrap_or(Path::new(".")))
            .ok()
            .map(|metadata| metadata.dev())
    }

    fn preflight(&self, _direct: bool, _settings: &EngineSettings, errors: &mut FieldErrors) {
        let parent = self.0.path.parent().filter(|p| !p.as_os_str().is_empty());
        if !parent.unwrap_or(Path::new(".")).is_dir() {
            errors.add(
                "of",
                format!("{}: its directory does not exist", self.0.path.display()),
            );
        }
    }

    fn open(&self, how: &Opening<'_>) -> Result<Vec<Box<dyn Sink>>, EngineError> {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        if how.direct {
            options.custom_flags(libc::O_DIRECT);
        }
        let file = options
            .open(&self.0.path)
            .map_err(|source| EngineError::TargetCreate {
                path: self.0.path.to_path_buf(),
                source,
            })?;
        Ok(vec![Box::new(FileSink {
            path: self.0.path.to_path_buf(),
            file,
            direct: how.direct,
            pattern: self
                .0
                .pattern
                .then(|| (AlignedBuf::new(how.block_size.max(PAGE)), 0)),
        })])
    }
}

#[cfg(test)]
mod tests {
    use super::fill_pattern;
    use crate::engine::buffer::AlignedBuf;

    #[test]
    fn each_word_holds_its_own_offset() {
        let words = |block: &[u8]| -> Vec<u32> {
            block
                .chunks_exact(4)
                .map(|word| u32::from_le_bytes(word.try_into().expect("4 bytes")))
                .collect()
        };
        // An aligned buffer (wide stores) and a slice of bytes one off alignment (word by word).
        let mut aligned = AlignedBuf::new(16);
        fill_pattern(aligned.as_mut_slice(), 4096);
        assert_eq!(words(aligned.as_slice()), [4096, 4100, 4104, 4108]);
        let mut bytes = AlignedBuf::new(17);
        fill_pattern(&mut bytes.as_mut_slice()[1..], 4096);
        assert_eq!(words(&bytes.as_slice()[1..]), [4096, 4100, 4104, 4108]);
        fill_pattern(aligned.as_mut_slice(), (1 << 32) + 8);
        assert_eq!(
            words(aligned.as_slice())[0],
            8,
            "the low 32 bits, as lmdd's uint"
        );
    }
}
