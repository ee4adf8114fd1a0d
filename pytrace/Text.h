// Python strings as CPython sees them: sequences of code points, stored as UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dkv::pytrace {

/// True if every byte is ASCII (then bytes and code points coincide).
bool isAscii(const std::string &s);
/// The code points of UTF-8 text (the parser has checked it is valid UTF-8).
std::vector<char32_t> codePoints(const std::string &s);
std::string toUtf8(const std::vector<char32_t> &cps);
std::string toUtf8(char32_t cp);
/// len() of a str.
int64_t strLength(const std::string &s);
/// CPython's repr of a str (quotes chosen as CPython chooses them, escapes of
/// non-printable ASCII characters; other characters as they are).
std::string strRepr(const std::string &s);

} // namespace dkv::pytrace
