// Source files and line tables.
#include "support/Source.h"

#include "support/Invariant.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

namespace dkv::support {

SourceFile::SourceFile(std::string name, std::string text, FileId id)
    : name_(std::move(name)), text_(std::move(text)), id_(id) {
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n' && i + 1 < text_.size())
      lineStarts_.push_back(i + 1);
}

std::string_view SourceFile::lineText(uint32_t line) const {
  if (line == 0 || line > lineStarts_.size())
    return {};
  size_t begin = lineStarts_[line - 1];
  size_t end = text_.find('\n', begin);
  if (end == std::string::npos)
    end = text_.size();
  if (end > begin && text_[end - 1] == '\r')
    --end;
  return std::string_view(text_).substr(begin, end - begin);
}

SourceLoc SourceFile::locForOffset(size_t offset) const {
  auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
  size_t line = static_cast<size_t>(it - lineStarts_.begin());
  size_t col = offset - lineStarts_[line - 1] + 1;
  return SourceLoc{static_cast<uint32_t>(line), static_cast<uint32_t>(col), id_};
}

std::optional<SourceFile> SourceFile::load(const std::string &path, std::string &error,
                                           size_t maxBytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = "cannot read file: it is a directory";
    return std::nullopt;
  }
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> in(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!in) {
    error = errno != 0 ? fmt::format("cannot open file: {}", std::strerror(errno))
                       : std::string("cannot open file");
    return std::nullopt;
  }
  std::string text;
  bool truncated = false;
  char buffer[1 << 16];
  while (true) {
    size_t n = std::fread(buffer, 1, sizeof(buffer), in.get());
    size_t room = maxBytes - text.size();
    text.append(buffer, std::min(n, room));
    if (n > room) {
      truncated = true;
      break;
    }
    if (n < sizeof(buffer))
      break;
  }
  if (std::ferror(in.get())) {
    error = fmt::format("cannot read file: {}", std::strerror(errno));
    return std::nullopt;
  }
  SourceFile file(path, std::move(text));
  file.truncated_ = truncated;
  return file;
}

FileId SourceManager::adopt(SourceFile file) {
  DKV_INVARIANT(files_.size() < std::numeric_limits<FileId>::max(), "too many source files");
  file.id_ = static_cast<FileId>(files_.size());
  files_.push_back(std::make_unique<SourceFile>(std::move(file)));
  return files_.back()->id_;
}

FileId SourceManager::add(std::string name, std::string text) {
  return adopt(SourceFile(std::move(name), std::move(text)));
}

std::optional<FileId> SourceManager::load(const std::string &path, std::string &error,
                                          size_t maxBytes) {
  std::optional<SourceFile> file = SourceFile::load(path, error, maxBytes);
  if (!file)
    return std::nullopt;
  return adopt(std::move(*file));
}

const SourceFile &SourceManager::file(FileId id) const {
  DKV_INVARIANT(id < files_.size(), "no source file with this id");
  return *files_[id];
}

const SourceFile *SourceManager::find(FileId id) const {
  return id < files_.size() ? files_[id].get() : nullptr;
}

std::string_view SourceManager::name(FileId id) const {
  const SourceFile *f = find(id);
  return f ? std::string_view(f->name()) : std::string_view();
}

std::string_view SourceManager::text(FileId id) const {
  const SourceFile *f = find(id);
  return f ? std::string_view(f->text()) : std::string_view();
}

uint32_t SourceManager::addInlineContext(SourceLoc callSite, std::string callee) {
  contexts_.push_back({callSite, std::move(callee)});
  return static_cast<uint32_t>(contexts_.size());
}

std::vector<SourceManager::InlineContext> SourceManager::inlineChain(SourceLoc loc,
                                                                     size_t max) const {
  std::vector<InlineContext> chain;
  // Context ids only grow outwards (a call's context is made before the calls inside
  // it), so the walk ends; the bound keeps a corrupt id from looping.
  for (uint32_t id = loc.inlined; id != 0 && id <= contexts_.size() && chain.size() < max;) {
    const InlineContext &c = contexts_[id - 1];
    chain.push_back(c);
    if (c.callSite.inlined >= id)
      break;
    id = c.callSite.inlined;
  }
  return chain;
}

} // namespace dkv::support
