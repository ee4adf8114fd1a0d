// The file name a renderer writes for a location (JSON, SARIF): the name of the
// location's own file (SourceLoc::file) in the run's SourceManager, else the checked
// file's name.
#pragma once

#include "support/Source.h"

#include <string>

namespace dkv::report {

struct FileNames {
  const std::string &checked;            ///< the checked file's name
  const support::SourceManager *sources; ///< may be null: every location is in `checked`

  std::string nameOf(support::SourceLoc loc) const {
    const support::SourceFile *f = sources ? sources->find(loc.file) : nullptr;
    return f ? f->name() : checked;
  }
};

} // namespace dkv::report
