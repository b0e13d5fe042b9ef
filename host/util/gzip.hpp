// Result documents on disk, plain or gzip-compressed: the gzip container around the deflate
// codec that Debian's libstb already ships (stb_image decodes, stb_image_write encodes).
#pragma once

#include <string>

namespace kperf {

// Whether `bytes` start with the gzip magic (1f 8b).
bool is_gzip(const std::string& bytes);
// One gzip member holding `bytes` (deflate at stb's strongest setting, CRC-32 and size trailer).
std::string gzip_compress(const std::string& bytes);
// The data of every gzip member in `bytes`, concatenated. Throws InputError naming `name` when
// the stream is truncated or corrupt (bad header, deflate data, CRC or size).
std::string gzip_decompress(const std::string& bytes, const std::string& name);

// Whether a path names a compressed document (ends in ".gz").
bool is_gzip_path(const std::string& path);
// A whole document: gzip-compressed files (by their magic, whatever the name) are decompressed.
// Throws InputError when the file cannot be read or decompressed.
std::string read_document(const std::string& path);
// Writes a document atomically (write_file_atomic), gzip-compressed when the path ends in ".gz".
void write_document_atomic(const std::string& path, const std::string& text);

// Seconds between the checkpoints a long command writes of its document (kperf run, kperf tune):
// KPERF_CHECKPOINT_S, default 10; 0 writes one after every row. Throws std::invalid_argument
// for a value that is not a number >= 0.
double checkpoint_interval_s();

}  // namespace kperf
