// What the benchmark programs share (bench/BenchUtil.h).
#include "bench/BenchUtil.h"

#include "frontend/Annotations.h"
#include "frontend/Frontend.h"
#include "lower/Lower.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <algorithm>
#include <filesystem>

namespace dkv::bench {

std::string statOf(const std::vector<std::pair<std::string, std::string>> &stats,
                   const std::string &key, const std::string &absent) {
  for (const auto &[k, value] : stats)
    if (k == key)
      return value;
  return absent;
}

Example readExample(const std::string &path) {
  Example e;
  e.path = path;
  e.name = std::filesystem::path(path).filename().string();
  e.stem = std::filesystem::path(path).stem().string();
  std::string error;
  support::SourceManager sources;
  std::optional<support::FileId> id = sources.load(path, error);
  if (!id)
    return e; // reported when the example is lowered
  e.readable = true;
  support::DiagnosticEngine diags(&sources);
  frontend::Annotations a = frontend::readAnnotations(sources.file(*id), diags);
  e.devices = a.devices;
  e.staticError = a.expect && a.expect->verdict == frontend::ExpectedVerdict::StaticError;
  for (size_t i = 0; i < a.options.size(); ++i) {
    e.optionText += (i ? " " : "") + a.options[i];
    const std::string &word = a.options[i];
    if (word == "--no-entry-barrier") {
      e.options.entryBarrier = false;
    } else if (i + 1 < a.options.size()) {
      const std::string &value = a.options[++i];
      e.optionText += " " + value;
      if (word == "--invocations")
        e.options.invocations = std::stoi(value);
      else if (word == "--dma-chunks")
        e.options.dmaChunks = std::stoi(value);
      else if (word == "--sem-unit")
        e.options.semUnit = std::stoll(value);
      else if (word == "--dma-order" && value == "link")
        e.options.dmaOrder = model::DmaOrder::Link;
    }
  }
  return e;
}

std::vector<std::string> examplesIn(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".dk")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

bool allowsDevices(const Example &example, int64_t devices) {
  return example.devices.empty() || std::find(example.devices.begin(), example.devices.end(),
                                              devices) != example.devices.end();
}

std::optional<model::Program> lowerExample(const Example &example, int64_t devices,
                                           std::string &error) {
  support::SourceManager sources;
  std::optional<support::FileId> id = sources.load(example.path, error);
  if (!id)
    return std::nullopt;
  support::DiagnosticEngine diags(&sources);
  bool ok = false;
  auto module = frontend::loadModule(sources.file(*id), {}, devices, diags, ok);
  if (!ok || !module) {
    error = "frontend errors";
    return std::nullopt;
  }
  std::optional<model::Program> program =
      lower::lower(*module, example.name, example.options, diags);
  if (!program || diags.hasErrors()) {
    error = "lowering errors";
    return std::nullopt;
  }
  return program;
}

} // namespace dkv::bench
