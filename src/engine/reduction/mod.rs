//! Data reduction: generated data with a chosen dedup ratio beside its compressibility, and
//! how well a stream of data dedups and compresses, estimated from a sample of its chunks.

pub mod extents;
pub mod generation;
pub mod scan;
pub mod source_estimate;
pub mod tree;
pub mod units;

pub use generation::DatasetStreams;
pub use scan::{ChunkSizes, ReductionEstimate, ReductionScan};
pub use source_estimate::{SOURCE_SCAN_BYTES, SourceReduction};
pub use tree::{FileSizes, TreeScan};
pub use units::{
    DEFAULT_DEDUP_UNIT, DedupSettings, GeneratedDedup, GenerationMade, Generations, UnitStream,
    UnitTally, UnitsMade,
};
