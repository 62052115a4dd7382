// SPDX-License-Identifier: MIT
// File-system side of the snapshot output: names, the output directory, and
// the write-to-temporary-then-rename rule that keeps every final name either
// absent or complete, whatever moment the process dies at.
#pragma once
#include <cstdint>
#include <string>

namespace sim {

// "snap_000500.h5": the step zero-padded to six digits (more when needed).
std::string snapshot_file_name(int64_t step);
std::string join_path(const std::string& dir, const std::string& name);

// strerror(err) starting in lower case ("no space left on device"), for
// messages of the form "<what happened> writing <file>".
std::string os_error_text(int err);

// The temporary a file is written under before commit_file(): same directory
// (rename is atomic only within a file system), a name no reader globs for,
// unique to this process.
std::string temporary_path(const std::string& final_path);

// Creates `dir` (and its parents) when missing and proves it writable by
// creating and removing a probe file. Throws std::runtime_error:
// "output directory 'DIR': <strerror text>". Leaves existing files alone.
void prepare_output_dir(const std::string& dir);

// Bytes an unprivileged process may still write on the file system holding
// `dir` (statvfs f_bavail); 0 when it cannot be told.
uint64_t free_bytes(const std::string& dir);

// Makes the finished temporary durable (fsync) and renames it over `final_path`.
void commit_file(const std::string& temporary, const std::string& final_path);

// `text` to `path` through a temporary and commit_file().
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace sim
