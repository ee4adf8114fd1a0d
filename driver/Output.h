// Reports written completely or not at all: an output file written under a temporary
// name and renamed into place, and the check that standard output took everything.
#pragma once

#include "support/Stop.h"

#include <fstream>
#include <iosfwd>
#include <string>

namespace dkv::driver {

/// A file that appears complete or not at all: open() creates a temporary file in the
/// target's directory (so the rename stays on one file system), commit() flushes,
/// closes and renames it over the target; a write error, a failed commit, or an
/// object destroyed without commit() (an error, a signal, a hard stop: the name is in
/// the cleanup registry, support::Cleanup) removes the temporary and leaves any old
/// target as it was.
class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile();

  /// Creates the temporary file for `path`; false with `error` ("cannot write 'p':
  /// reason") when it cannot.
  bool open(const std::string &path, std::string &error);
  std::ostream &stream() { return file_; }
  /// Flushes, closes and renames into place; false with `error` on any write error
  /// (the temporary is removed).
  bool commit(std::string &error);

private:
  void discard();
  std::string path_;
  std::string temp_;
  std::ofstream file_;
  support::Cleanup cleanup_;
};

/// Writes `text` to `path` with AtomicFile; false with `error` when it cannot.
bool writeFileAtomically(const std::string &path, const std::string &text, std::string &error);

/// Flushes `out` and reports a write error on it to `err` ("dkv: error: cannot write
/// the report to standard output"); true when everything was written.
bool flushed(std::ostream &out, std::ostream &err, const std::string &what);

} // namespace dkv::driver
