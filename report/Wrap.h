// Breaking a text into lines of a given width without cutting anything: the text
// trace's cells (Render.h), the pictures' texts (Svg.h) and the command line's help
// share one rule.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dkv::report {

/// `text` broken into lines of at most `width` characters (at least 1): at spaces where
/// it can, preferring not to break at a space before a source line (`@17`), a number
/// (`+= 32`, `line 17`), `=` or `+` when another space fits; inside a word only when the
/// word alone is wider than `width`. Nothing is dropped but the spaces at the breaks, so
/// the lines joined with single spaces (or, after a break inside a word, with none) give
/// the text back. An empty text is one empty line.
std::vector<std::string> wrapText(const std::string &text, size_t width);

} // namespace dkv::report
