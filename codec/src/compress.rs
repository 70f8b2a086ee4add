//! zlib compression in libpmix's pcompress format (to be written).
