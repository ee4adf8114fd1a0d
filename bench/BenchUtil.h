// What the benchmark programs share: reading an example's annotations, lowering it
// for a device count, and looking up a statistic. Not a library of dkv (bench/ only).
#pragma once

#include "model/Model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dkv::bench {

/// The value of statistic `key` in an engine's or a verdict's statistics, `absent`
/// when it has none.
std::string statOf(const std::vector<std::pair<std::string, std::string>> &stats,
                   const std::string &key, const std::string &absent = "");

/// An example kernel and what its annotations say (frontend::readAnnotations).
struct Example {
  std::string path;
  std::string name;             ///< the file name, "all_reduce.dk"
  std::string stem;             ///< "all_reduce"
  std::vector<int64_t> devices; ///< `// devices:`; empty: any
  /// `// options:` as model options (--invocations, --dma-chunks, --sem-unit,
  /// --no-entry-barrier), and as written.
  model::Options options;
  std::string optionText;
  bool staticError = false; ///< `// expect: static-error`
  bool readable = false;    ///< the file could be read
};

/// Reads `path` and its annotations; `readable` false if it cannot be read.
Example readExample(const std::string &path);

/// Every `*.dk` file directly in `dir`, sorted (empty if there is none or `dir`
/// cannot be read).
std::vector<std::string> examplesIn(const std::string &dir);

/// Whether the example is meant for `devices` (its `// devices:` lists it, or it has
/// none).
bool allowsDevices(const Example &example, int64_t devices);

/// The example lowered for `devices` devices with its options (parse, sema, lower);
/// nullopt with `error` ("frontend errors", "lowering errors", or why the file cannot
/// be read) if that fails.
std::optional<model::Program> lowerExample(const Example &example, int64_t devices,
                                           std::string &error);

} // namespace dkv::bench
