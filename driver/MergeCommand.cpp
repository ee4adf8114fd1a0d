// `dkv merge FILE.json...`: the JSON reports of `dkv check --property ID --format json`
// on one instance, one per property (on any number of cores or machines, e.g. with
// `xargs -P`, docs/performance.md), merged into one verdict.
#include "driver/Commands.h"

#include "support/Invariant.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <ostream>
#include <set>

namespace dkv::driver {

int mergeCommand(const std::vector<std::string> &files, const std::string &format,
                 std::ostream &out, std::ostream &err) {
  std::string instance, file;
  std::set<std::string> decided;
  int64_t total = -1;
  nlohmann::json findings = nlohmann::json::array();
  std::vector<std::string> inconclusive;
  for (const std::string &path : files) {
    std::ifstream in(path);
    nlohmann::json j = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
    if (!in || j.is_discarded() || !j.is_object()) {
      err << path << ": error: not a JSON report of dkv check\n";
      return support::kExitInputError;
    }
    const nlohmann::json &stats = j.value("stats", nlohmann::json::object());
    if (!stats.contains("property") || !stats.contains("properties")) {
      err << path
          << ": error: not a report of one property (dkv check --property ID --format "
             "json)\n";
      return support::kExitInputError;
    }
    // "kernel k on mesh x=8, property race.3 only": the instance is what precedes it.
    std::string thisInstance = j.value("instance", "");
    const std::string thisFile = j.value("file", "");
    if (const size_t at = thisInstance.rfind(", property "); at != std::string::npos)
      thisInstance.resize(at);
    if (instance.empty()) {
      instance = thisInstance;
      file = thisFile;
    } else if (thisInstance != instance || thisFile != file) {
      err << path << ": error: a report of another instance (" << thisFile << ": " << thisInstance
          << ", not " << file << ": " << instance << ")\n";
      return support::kExitInputError;
    }
    const std::string id = stats["property"].get<std::string>();
    const int64_t count = std::stoll(stats["properties"].get<std::string>());
    if (total >= 0 && count != total) {
      err << path << ": error: the instance has " << count << " properties here, " << total
          << " in the other reports\n";
      return support::kExitInputError;
    }
    total = count;
    if (!decided.insert(id).second)
      continue; // the same property twice: its first report counts
    const std::string status = j.value("status", "");
    if (status == "findings")
      for (const nlohmann::json &f : j["findings"])
        findings.push_back(f);
    else if (status != "verified")
      inconclusive.push_back(fmt::format("{}: {}", id, j.value("reason", status)));
  }
  const int64_t missing = total - static_cast<int64_t>(decided.size());
  std::string status = !findings.empty()                      ? "findings"
                       : !inconclusive.empty() || missing > 0 ? "inconclusive"
                                                              : "verified";
  if (format == "json") {
    nlohmann::json merged = {{"dkv_format", 1},      {"status", status},
                             {"instance", instance}, {"file", file},
                             {"properties", total},  {"properties_decided", decided.size()},
                             {"findings", findings}, {"inconclusive", inconclusive}};
    out << merged.dump(2) << "\n";
  } else {
    for (const nlohmann::json &f : findings)
      out << fmt::format("{}: {}: {} [{}]\n", f["primary"].value("file", file), f.value("kind", ""),
                         f.value("message", ""), f.value("property", ""));
    for (const std::string &i : inconclusive)
      out << "inconclusive: " << i << "\n";
    out << fmt::format(
        "{}: {}: {}{} ({} of {} properties decided, {} reports)\n", status, file, instance,
        status == "verified" ? ": no data race, deadlock, exit or lifetime violation" : "",
        decided.size(), total, files.size());
  }
  return status == "findings"       ? support::kExitFindings
         : status == "inconclusive" ? support::kExitInconclusive
                                    : support::kExitOk;
}

} // namespace dkv::driver
