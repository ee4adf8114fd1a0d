// Source files and line tables.
#include "support/Source.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace dkv::support {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
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
  return SourceLoc{static_cast<uint32_t>(line), static_cast<uint32_t>(col)};
}

std::optional<SourceFile> SourceFile::load(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open file";
    return std::nullopt;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    error = "cannot read file";
    return std::nullopt;
  }
  return SourceFile(path, buffer.str());
}

} // namespace dkv::support
