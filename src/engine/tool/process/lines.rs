//! A foreign program's output, read in bounded memory: each line handed on as it comes, and a
//! short tail kept for the error message, however much the program writes.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read};

/// Longest line handed to the caller; the rest of a longer line is dropped and the line ends
/// with "…". A tool's progress line (restic's JSON status) is far shorter.
pub(super) const LINE_MAX_BYTES: usize = 64 * 1024;
/// Lines a tail keeps.
pub(super) const TAIL_LINES: usize = 40;
/// Bytes a tail keeps over all its lines.
pub(super) const TAIL_BYTES: usize = 8 * 1024;
/// Longest line a tail keeps; the rest is cut and the line ends with "…".
pub(super) const TAIL_LINE_BYTES: usize = 512;
/// What each read takes from the pipe.
const CHUNK_BYTES: usize = 16 * 1024;

/// The last lines of an output, at most `TAIL_LINES` lines and `TAIL_BYTES` bytes.
#[derive(Debug, Default)]
pub(super) struct Tail {
    lines: VecDeque<String>,
    bytes: usize,
}

impl Tail {
    /// Keeps `line` (cut to `TAIL_LINE_BYTES`), forgetting the oldest lines beyond the bounds.
    pub(super) fn push(&mut self, line: &str) {
        let kept = cut(line, TAIL_LINE_BYTES);
        self.bytes += kept.len();
        self.lines.push_back(kept);
        while self.lines.len() > TAIL_LINES || self.bytes > TAIL_BYTES {
            match self.lines.pop_front() {
                Some(oldest) => self.bytes -= oldest.len(),
                None => break,
            }
        }
    }

    /// The lines kept, oldest first, one per line.
    pub(super) fn text(&self) -> String {
        let mut text = String::with_capacity(self.bytes + self.lines.len());
        for (index, line) in self.lines.iter().enumerate() {
            if index > 0 {
                text.push('\n');
            }
            text.push_str(line);
        }
        text
    }
}

/// `line` cut to at most `max_bytes` bytes on a character boundary, with "…" where it was cut.
fn cut(line: &str, max_bytes: usize) -> String {
    if line.len() <= max_bytes {
        return line.to_string();
    }
    let mut end = max_bytes.saturating_sub('…'.len_utf8());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

/// Reads `from` to its end and gives each non-empty line to `each`, decoded lossily. A line ends
/// at `\n` or `\r` (a progress bar redraws itself with `\r`); one longer than `LINE_MAX_BYTES`
/// is cut there. Memory stays bounded whatever the program writes, and the pipe is drained
/// as fast as `each` returns.
pub(super) fn read_lines(mut from: impl Read, mut each: impl FnMut(&str)) {
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut line = Vec::new();
    let mut cut_short = false;
    loop {
        let read = match from.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        for piece in chunk[..read].split_inclusive(|byte| matches!(byte, b'\n' | b'\r')) {
            let (body, ends) = match piece.split_last() {
                Some((b'\n' | b'\r', body)) => (body, true),
                _ => (piece, false),
            };
            let room = LINE_MAX_BYTES - line.len();
            if body.len() > room {
                line.extend_from_slice(&body[..room]);
                cut_short = true;
            } else {
                line.extend_from_slice(body);
            }
            if ends {
                emit(&mut line, &mut cut_short, &mut each);
            }
        }
    }
    emit(&mut line, &mut cut_short, &mut each);
}

fn emit(line: &mut Vec<u8>, cut_short: &mut bool, each: &mut impl FnMut(&str)) {
    if !line.is_empty() {
        let text = String::from_utf8_lossy(line);
        if *cut_short {
            each(&format!("{text}…"));
        } else {
            each(&text);
        }
    }
    line.clear();
    *cut_short = false;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(input: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        read_lines(input, |line| lines.push(line.to_string()));
        lines
    }

    #[test]
    fn lines_end_at_newlines_and_carriage_returns() {
        assert_eq!(
            lines_of(b"one\ntwo\r\n 10%\r 20%\rlast"),
            vec!["one", "two", " 10%", " 20%", "last"]
        );
    }

    #[test]
    fn a_line_longer_than_the_bound_is_cut() {
        let mut input = vec![b'x'; LINE_MAX_BYTES * 3];
        input.extend_from_slice(b"\nnext\n");
        let lines = lines_of(&input);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), LINE_MAX_BYTES + '…'.len_utf8());
        assert!(lines[0].ends_with('…'));
        assert_eq!(lines[1], "next");
    }

    #[test]
    fn a_tail_keeps_the_last_lines_within_its_bounds() {
        let mut tail = Tail::default();
        for number in 0..1000 {
            tail.push(&format!("line {number}"));
        }
        let text = tail.text();
        assert_eq!(text.lines().count(), TAIL_LINES);
        assert!(text.ends_with("line 999"));
        assert!(text.starts_with(&format!("line {}", 1000 - TAIL_LINES)));

        let mut tail = Tail::default();
        for _ in 0..100 {
            tail.push(&"é".repeat(10_000));
        }
        let text = tail.text();
        assert!(text.len() <= TAIL_BYTES + TAIL_LINES, "{}", text.len());
        assert!(text.lines().all(|line| line.len() <= TAIL_LINE_BYTES));
        assert!(text.lines().all(|line| line.ends_with('…')));
    }
}
