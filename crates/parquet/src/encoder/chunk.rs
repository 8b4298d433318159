//! A finished column chunk whose bytes may lie in several places.
//!
//! Page headers, levels, compressed bodies and encoded values are written
//! into the chunk's own buffer. The body of an uncompressed `PLAIN` page of
//! a required, unnested fixed-width leaf is the Arrow values buffer
//! itself, byte for byte: such a page keeps slices of the batches' buffers
//! (shared, reference counted) instead of a copy, so its values are copied
//! once, by the write that puts them in the file, as an IPC writer copies
//! them. [`ColumnChunk`] is what [`super::LeafEncoder::close`] returns and
//! parquet's `SerializedRowGroupWriter::append_column` reads.

use std::io::Read;

use arrow_buffer::Buffer;
use bytes::Bytes;
use parquet::file::reader::{ChunkReader, Length};

/// One column chunk's bytes: the encoder's own buffer with shared Arrow
/// buffers spliced in.
#[derive(Debug, Clone)]
pub struct ColumnChunk {
    own: Bytes,
    /// `(at, buffer)`: `buffer` comes after `own[..at]` (ascending `at`).
    splices: Vec<(usize, Buffer)>,
    len: usize,
}

impl ColumnChunk {
    pub(super) fn new(own: Vec<u8>, splices: Vec<(usize, Buffer)>) -> Self {
        let len = own.len() + splices.iter().map(|(_, b)| b.len()).sum::<usize>();
        ColumnChunk {
            own: Bytes::from(own),
            splices,
            len,
        }
    }

    /// The chunk's size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the chunk holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many Arrow buffers the chunk shares (for tests).
    #[cfg(test)]
    pub(super) fn shared_pieces(&self) -> usize {
        self.splices.len()
    }

    /// The chunk's own buffer (for [`super::BufferPool::give_back`]); the
    /// shared Arrow buffers are released.
    pub(super) fn into_own(self) -> Bytes {
        self.own
    }

    /// The pieces in file order.
    fn pieces(&self) -> Vec<Piece> {
        let mut out = Vec::with_capacity(2 * self.splices.len() + 1);
        let mut from = 0;
        for (at, b) in &self.splices {
            if *at > from {
                out.push(Piece::Own(self.own.slice(from..*at)));
            }
            out.push(Piece::Shared(b.clone()));
            from = *at;
        }
        if from < self.own.len() {
            out.push(Piece::Own(self.own.slice(from..)));
        }
        out
    }

    /// The whole chunk in one buffer (a copy when it has shared parts).
    pub fn to_bytes(&self) -> Bytes {
        if self.splices.is_empty() {
            return self.own.clone();
        }
        let mut out = Vec::with_capacity(self.len);
        for p in self.pieces() {
            out.extend_from_slice(p.bytes());
        }
        Bytes::from(out)
    }
}

#[derive(Debug, Clone)]
enum Piece {
    Own(Bytes),
    Shared(Buffer),
}

impl Piece {
    fn bytes(&self) -> &[u8] {
        match self {
            Piece::Own(b) => b,
            Piece::Shared(b) => b.as_slice(),
        }
    }
}

/// Reads a [`ColumnChunk`] from an offset, piece by piece.
pub struct ChunkRead {
    pieces: std::vec::IntoIter<Piece>,
    current: Option<(Piece, usize)>,
}

impl Read for ChunkRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let Some((piece, at)) = &mut self.current else {
                return Ok(0);
            };
            let rest = &piece.bytes()[*at..];
            if rest.is_empty() {
                self.current = self.pieces.next().map(|p| (p, 0));
                continue;
            }
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            *at += n;
            return Ok(n);
        }
    }
}

impl Length for ColumnChunk {
    fn len(&self) -> u64 {
        self.len as u64
    }
}

impl ChunkReader for ColumnChunk {
    type T = ChunkRead;

    fn get_read(&self, start: u64) -> parquet::errors::Result<ChunkRead> {
        let mut skip = usize::try_from(start).unwrap_or(usize::MAX);
        let mut pieces = self.pieces().into_iter();
        let mut current = None;
        for p in pieces.by_ref() {
            let n = p.bytes().len();
            if skip < n {
                current = Some((p, skip));
                break;
            }
            skip -= n;
        }
        Ok(ChunkRead { pieces, current })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let start = usize::try_from(start).unwrap_or(usize::MAX);
        if start.checked_add(length).is_none_or(|end| end > self.len) {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "bytes {start}..+{length} of a {}-byte column chunk",
                self.len
            )));
        }
        if self.splices.is_empty() {
            return Ok(self.own.slice(start..start + length));
        }
        let mut out = vec![0u8; length];
        let mut read = self.get_read(start as u64)?;
        read.read_exact(&mut out)?;
        Ok(Bytes::from(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk() -> ColumnChunk {
        // own: "hh" [A A A] "xyz" [B B] "t"
        ColumnChunk::new(
            b"hhxyzt".to_vec(),
            vec![
                (2, Buffer::from(b"AAA".to_vec())),
                (5, Buffer::from(b"BB".to_vec())),
            ],
        )
    }

    #[test]
    fn reads_the_pieces_in_order_from_any_offset() {
        let c = chunk();
        let whole = b"hhAAAxyzBBt";
        assert_eq!(c.len(), whole.len());
        assert_eq!(&c.to_bytes()[..], whole);
        for start in 0..=whole.len() {
            let mut got = Vec::new();
            c.get_read(start as u64)
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            assert_eq!(&got[..], &whole[start..], "from {start}");
            for len in 0..=whole.len() - start {
                let b = c.get_bytes(start as u64, len).unwrap();
                assert_eq!(&b[..], &whole[start..start + len]);
            }
        }
        assert!(c.get_bytes(5, 7).is_err());
        assert!(c.get_bytes(u64::MAX, 1).is_err());
    }

    #[test]
    fn small_reads_cross_piece_boundaries() {
        let mut r = chunk().get_read(1).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 2];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(&got[..], b"hAAAxyzBBt");
    }
}
