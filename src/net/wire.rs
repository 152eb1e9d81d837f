//! The frames clients and agents exchange with the lab over TCP.
//!
//! Every frame is a 7-byte header (`BL`, a kind byte, a big-endian payload length) and its
//! payload: raw bytes for `Data`, JSON for everything else. A data connection opens with
//! `Hello` (which run, which client, which stream), waits for `Start` (or `Reject`), then sends
//! `Data` frames and closes with `End`, which carries the client's own figures. An agent's
//! control connection opens with `Register` and then receives `Work`.

use std::io::{self, IoSlice, Read, Write};
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The first two bytes of every frame.
pub const MAGIC: [u8; 2] = *b"BL";
/// Bytes in a frame header.
pub const HEADER_LEN: usize = 7;
/// Largest JSON payload accepted.
pub const MAX_MESSAGE: u32 = 64 * 1024;
/// Largest data payload accepted (the largest block size).
pub const MAX_DATA: u32 = 64 << 20;

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameKind {
    /// Client → lab: the first frame of a data connection.
    Hello = 1,
    /// Lab → client: the run's clock starts; send.
    Start = 2,
    /// Lab → client or agent: refused, with the reason.
    Reject = 3,
    /// Client → lab: payload bytes.
    Data = 4,
    /// Client → lab: the stream's last frame, with the client's own figures.
    End = 5,
    /// Agent → lab: the first frame of a control connection.
    Register = 6,
    /// Lab → agent: registered under a name.
    Registered = 7,
    /// Lab → agent: a network run to send.
    Work = 8,
    /// Agent → lab: keeps the control connection alive.
    Ping = 9,
}

impl FrameKind {
    fn from_byte(byte: u8) -> Option<Self> {
        Some(match byte {
            1 => Self::Hello,
            2 => Self::Start,
            3 => Self::Reject,
            4 => Self::Data,
            5 => Self::End,
            6 => Self::Register,
            7 => Self::Registered,
            8 => Self::Work,
            9 => Self::Ping,
            _ => return None,
        })
    }

    fn max_len(self) -> u32 {
        if self == Self::Data {
            MAX_DATA
        } else {
            MAX_MESSAGE
        }
    }
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("the connection closed")]
    Closed,
    #[error("the other side sent nothing in time")]
    TimedOut,
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("not a backlab frame (bad magic bytes {0:02x?})")]
    BadMagic([u8; 2]),
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    #[error("a {kind:?} frame of {len} bytes is larger than the {max} allowed")]
    TooLarge { kind: FrameKind, len: u32, max: u32 },
    #[error("expected a {expected:?} frame, got {got:?}")]
    Unexpected { expected: FrameKind, got: FrameKind },
    #[error("a {kind:?} frame holds bad JSON: {source}")]
    BadMessage {
        kind: FrameKind,
        source: serde_json::Error,
    },
    #[error("refused: {0}")]
    Rejected(String),
}

/// A frame header, read and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: FrameKind,
    pub len: u32,
}

/// Reads and checks one header. A clean end of the connection before it is `Closed`.
pub fn read_header(reader: &mut impl Read) -> Result<Header, WireError> {
    let mut bytes = [0u8; HEADER_LEN];
    let mut filled = 0;
    while filled < HEADER_LEN {
        match reader.read(&mut bytes[filled..]) {
            Ok(0) if filled == 0 => return Err(WireError::Closed),
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
            Ok(count) => filled += count,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(io_error(error)),
        }
    }
    if bytes[..2] != MAGIC {
        return Err(WireError::BadMagic([bytes[0], bytes[1]]));
    }
    let kind = FrameKind::from_byte(bytes[2]).ok_or(WireError::UnknownKind(bytes[2]))?;
    let len = u32::from_be_bytes([bytes[3], bytes[4], bytes[5], bytes[6]]);
    if len > kind.max_len() {
        return Err(WireError::TooLarge {
            kind,
            len,
            max: kind.max_len(),
        });
    }
    Ok(Header { kind, len })
}

/// A read timeout is `TimedOut`, not an opaque "resource temporarily unavailable".
fn io_error(error: io::Error) -> WireError {
    if is_timeout(&error) {
        WireError::TimedOut
    } else {
        WireError::Io(error)
    }
}

/// Whether an I/O error is a socket read or write timeout.
pub fn is_timeout(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Reads from a socket with one deadline for the whole of what is read, not one timeout per
/// `read` call: a peer that trickles a byte at a time cannot hold a connection open.
pub struct Deadline<'a> {
    socket: &'a std::net::TcpStream,
    until: std::time::Instant,
}

impl<'a> Deadline<'a> {
    /// Reads from `socket` until `within` has passed.
    pub fn new(socket: &'a std::net::TcpStream, within: std::time::Duration) -> Self {
        Self {
            socket,
            until: std::time::Instant::now() + within,
        }
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self
            .until
            .saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.socket.set_read_timeout(Some(left))?;
        let mut socket = self.socket;
        socket.read(buf)
    }
}

/// The header bytes of a frame.
pub fn header_bytes(kind: FrameKind, len: u32) -> [u8; HEADER_LEN] {
    let len = len.to_be_bytes();
    [
        MAGIC[0], MAGIC[1], kind as u8, len[0], len[1], len[2], len[3],
    ]
}

/// Writes one frame, header and payload in as few system calls as the socket takes.
pub fn write_frame(writer: &mut impl Write, kind: FrameKind, payload: &[u8]) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&len| len <= kind.max_len())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "frame payload too large"))?;
    let header = header_bytes(kind, len);
    let mut slices = [IoSlice::new(&header), IoSlice::new(payload)];
    let mut slices: &mut [IoSlice<'_>] = &mut slices;
    while !slices.is_empty() {
        match writer.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(count) => IoSlice::advance_slices(&mut slices, count),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Writes a JSON message frame.
pub fn write_message<T: Serialize>(
    writer: &mut impl Write,
    kind: FrameKind,
    message: &T,
) -> io::Result<()> {
    let payload = serde_json::to_vec(message).map_err(io::Error::other)?;
    write_frame(writer, kind, &payload)
}

/// Reads the JSON payload of a frame whose header was read.
pub fn read_payload<T: DeserializeOwned>(
    reader: &mut impl Read,
    header: Header,
) -> Result<T, WireError> {
    let mut payload = vec![0u8; header.len as usize];
    reader.read_exact(&mut payload).map_err(io_error)?;
    serde_json::from_slice(&payload).map_err(|source| WireError::BadMessage {
        kind: header.kind,
        source,
    })
}

/// Reads a frame that must be of `expected` kind and decodes its JSON payload; a `Reject`
/// becomes `WireError::Rejected` with the lab's reason.
pub fn read_message<T: DeserializeOwned>(
    reader: &mut impl Read,
    expected: FrameKind,
) -> Result<T, WireError> {
    let header = read_header(reader)?;
    if header.kind == FrameKind::Reject && expected != FrameKind::Reject {
        let reason: Refusal = read_payload(reader, header)?;
        return Err(WireError::Rejected(reason.reason));
    }
    if header.kind != expected {
        return Err(WireError::Unexpected {
            expected,
            got: header.kind,
        });
    }
    read_payload(reader, header)
}

/// Client → lab: which run, client and stream a data connection belongs to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hello {
    /// The secret of the run, handed to its clients only.
    pub run_key: String,
    pub client: String,
    pub stream: u32,
}

/// Lab → client: the run's clock has started.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Start {}

/// Lab → client or agent: why it was refused.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Refusal {
    pub reason: String,
}

/// Client → lab: the stream is complete; the client's own count of what it sent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StreamEnd {
    pub bytes: u64,
    pub seconds: f64,
    /// Set when the client's source failed; the stream ends early.
    #[serde(default)]
    pub error: Option<String>,
}

/// Agent → lab: who it is and what it may read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Register {
    pub name: String,
    /// The lab's token, when the lab has one.
    pub token: Option<String>,
    /// The paths this agent may read from.
    pub sources: Vec<PathBuf>,
    pub version: String,
    pub host: String,
}

/// Lab → agent: the registration took.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Registered {
    pub name: String,
    /// Whether an earlier connection under this name was replaced.
    pub reconnected: bool,
}

/// What a client reads and sends.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ClientSource {
    /// Files under these paths, shared out over the client's streams.
    Paths(Vec<PathBuf>),
    /// Generated data of this compressibility.
    Generated { compress_ratio: f64 },
}

/// Lab → client: one client's part of a network run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkOrder {
    pub run_key: String,
    pub client: String,
    pub streams: u32,
    pub block_size: u64,
    pub source: ClientSource,
    /// The client's share of the run's bytes; it sends until its source ends without one.
    pub bytes: Option<u64>,
    /// The emulated link's cap in MB/s, shared by the client's streams.
    pub link_mb_s: Option<f64>,
    /// The data listener's port; the agent connects to the host it registered with.
    pub port: u16,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let mut wire = Vec::new();
        let hello = Hello {
            run_key: "k".into(),
            client: "c1".into(),
            stream: 3,
        };
        write_message(&mut wire, FrameKind::Hello, &hello).unwrap();
        write_frame(&mut wire, FrameKind::Data, b"payload").unwrap();
        let mut reader = wire.as_slice();
        let back: Hello = read_message(&mut reader, FrameKind::Hello).unwrap();
        assert_eq!(back, hello);
        let header = read_header(&mut reader).unwrap();
        assert_eq!(header.kind, FrameKind::Data);
        assert_eq!(header.len, 7);
        assert!(matches!(
            read_header(&mut &reader[7..]),
            Err(WireError::Closed)
        ));
    }

    #[test]
    fn bad_headers_are_named() {
        assert!(matches!(
            read_header(&mut &b"XY\x04\0\0\0\x01"[..]),
            Err(WireError::BadMagic(_))
        ));
        assert!(matches!(
            read_header(&mut &b"BL\x63\0\0\0\x01"[..]),
            Err(WireError::UnknownKind(0x63))
        ));
        assert!(matches!(
            read_header(&mut &b"BL\x01\xff\xff\xff\xff"[..]),
            Err(WireError::TooLarge { .. })
        ));
        assert!(matches!(
            read_header(&mut &b"BL\x04"[..]),
            Err(WireError::Io(_))
        ));
    }

    #[test]
    fn a_reject_carries_its_reason() {
        let mut wire = Vec::new();
        write_message(
            &mut wire,
            FrameKind::Reject,
            &Refusal {
                reason: "unknown run".into(),
            },
        )
        .unwrap();
        let error = read_message::<Start>(&mut wire.as_slice(), FrameKind::Start).unwrap_err();
        assert_eq!(error.to_string(), "refused: unknown run");
    }
}
