// Python strings: code points over UTF-8, and CPython's repr of a str.
#include "pytrace/Text.h"

#include <fmt/format.h>

namespace dkv::pytrace {

bool isAscii(const std::string &s) {
  for (unsigned char c : s)
    if (c >= 0x80)
      return false;
  return true;
}

std::vector<char32_t> codePoints(const std::string &s) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    size_t n;
    if (c < 0x80) {
      cp = c, n = 1;
    } else if ((c >> 5) == 6) {
      cp = c & 0x1f, n = 2;
    } else if ((c >> 4) == 14) {
      cp = c & 0x0f, n = 3;
    } else {
      cp = c & 0x07, n = 4;
    }
    for (size_t k = 1; k < n && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    out.push_back(cp);
    i += n;
  }
  return out;
}

std::string toUtf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return out;
}

std::string toUtf8(const std::vector<char32_t> &cps) {
  std::string out;
  for (char32_t cp : cps)
    out += toUtf8(cp);
  return out;
}

int64_t strLength(const std::string &s) {
  int64_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xc0) != 0x80;
  return n;
}

std::string strRepr(const std::string &s) {
  // CPython: single quotes unless the text has a single quote and no double quote.
  bool single = s.find('\'') != std::string::npos, dbl = s.find('"') != std::string::npos;
  char q = single && !dbl ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == q || c == '\\')
      out += '\\', out += static_cast<char>(c);
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  out += q;
  return out;
}

} // namespace dkv::pytrace
