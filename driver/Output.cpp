// Complete-or-absent output files and the write check of standard output.
#include "driver/Output.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace dkv::driver {

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (file_.is_open())
    file_.close();
  if (!temp_.empty())
    ::unlink(temp_.c_str());
  temp_.clear();
  cleanup_ = support::Cleanup();
}

bool AtomicFile::open(const std::string &path, std::string &error) {
  namespace fs = std::filesystem;
  path_ = path;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // A hidden name next to the target: ".NAME.dkv-XXXXXX".
  std::string pattern = (dir / ("." + target.filename().string() + ".dkv-XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    error = fmt::format("cannot write '{}': {}", path, std::strerror(errno));
    return false;
  }
  ::close(fd);
  temp_ = name.data();
  cleanup_ = support::Cleanup::file(temp_);
  file_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!file_) {
    error = fmt::format("cannot write '{}'", path);
    discard();
    return false;
  }
  return true;
}

bool AtomicFile::commit(std::string &error) {
  file_.flush();
  const bool written = static_cast<bool>(file_);
  file_.close();
  if (!written || file_.fail()) {
    error = fmt::format("cannot write '{}': a write error (is the disk full?); nothing was "
                        "written",
                        path_);
    discard();
    return false;
  }
  // mkstemp makes the file private (0600); a report gets the usual permissions.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(temp_.c_str(), 0666 & ~mask);
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    error = fmt::format("cannot write '{}': {}", path_, std::strerror(errno));
    discard();
    return false;
  }
  temp_.clear();
  cleanup_ = support::Cleanup();
  return true;
}

bool writeFileAtomically(const std::string &path, const std::string &text, std::string &error) {
  AtomicFile file;
  if (!file.open(path, error))
    return false;
  file.stream() << text;
  return file.commit(error);
}

bool flushed(std::ostream &out, std::ostream &err, const std::string &what) {
  out.flush();
  if (out)
    return true;
  err << "dkv: error: cannot write the report to " << what
      << ": a write error (a closed pipe, a full disk); the report is incomplete\n";
  return false;
}

} // namespace dkv::driver
