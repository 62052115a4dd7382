// SPDX-License-Identifier: MIT
// The include rule of docs/ARCHITECTURE.md: each layer's folder includes only
// the folders below it. Read from the sources themselves, so a new include
// that breaks the layering fails here.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The layers, each with the folders its files may include (itself among
// them). The model is the bottom; the application the top. A folder not
// listed (tests, examples) may include any.
const std::map<std::string, std::set<std::string>>& include_rule() {
  static const std::map<std::string, std::set<std::string>> rule = {
      {"sim/model", {"sim/model"}},
      {"sim/ranks", {"sim/ranks", "sim/model"}},
      {"sim/cpu", {"sim/cpu", "sim/ranks", "sim/model"}},
      {"cuda", {"cuda", "sim/ranks", "sim/model"}},
      {"io", {"io", "sim/ranks", "sim/model"}},
      {"sim/app", {"sim/app", "io", "cuda", "sim/cpu", "sim/ranks", "sim/model"}},
  };
  return rule;
}

// The layer of a path relative to the source root ("sim/app/bench/x.cpp" ->
// "sim/app"), or "" when it is in none.
std::string layer_of(const std::string& rel) {
  std::string best;
  for (const auto& [folder, allowed] : include_rule())
    if (rel.rfind(folder + "/", 0) == 0 && folder.size() > best.size()) best = folder;
  return best;
}

struct Include {
  std::string file;  // relative to the source root
  int line;
  std::string target;
};

std::vector<Include> project_includes(const fs::path& root) {
  static const std::regex inc(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<Include> out;
  for (const char* top : {"sim", "cuda", "io"})
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      if (!e.is_regular_file()) continue;
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh" && ext != ".h") continue;
      std::ifstream in(e.path());
      std::string text;
      int n = 0;
      const std::string rel = fs::relative(e.path(), root).generic_string();
      while (std::getline(in, text)) {
        ++n;
        std::smatch m;
        if (std::regex_search(text, m, inc)) out.push_back({rel, n, m[1].str()});
      }
    }
  return out;
}

}  // namespace

TEST_CASE("architecture: every file includes only the layers the include rule allows") {
  const fs::path root = SIM_SOURCE_DIR;
  const std::vector<Include> includes = project_includes(root);
  REQUIRE(includes.size() > 300);  // the sources were found
  int checked = 0;
  for (const Include& i : includes) {
    const std::string from = layer_of(i.file);
    if (from.empty()) continue;  // e.g. cuda/stub is in the cuda layer; nothing is outside
    const std::string to = layer_of(i.target);
    if (to.empty()) {
      // a project header must be named from the source root; a bare name is only
      // allowed for a file beside it
      if (i.target.find('/') == std::string::npos) CHECK_MESSAGE(fs::exists(root / fs::path(i.file).parent_path() / i.target), i.file << ":" << i.line << ": " << i.target);
      continue;
    }
    ++checked;
    CHECK_MESSAGE(include_rule().at(from).count(to) == 1,
                  i.file << ":" << i.line << " (" << from << ") includes " << i.target << " (" << to
                         << "), which the include rule of docs/ARCHITECTURE.md does not allow");
  }
  CHECK(checked > 300);
}

TEST_CASE("architecture: the application reaches a backend through its entry header only") {
  // docs/ARCHITECTURE.md, "Backends are reached through sim/model/backend.hpp".
  int seen = 0;
  for (const Include& i : project_includes(SIM_SOURCE_DIR)) {
    if (layer_of(i.file) != "sim/app") continue;
    const std::string to = layer_of(i.target);
    INFO(i.file << ":" << i.line << " includes " << i.target);
    if (to == "cuda") {
      CHECK(i.target == "cuda/cuda_backend.hpp");
      ++seen;
    }
    if (to == "sim/cpu") {
      CHECK(i.file == "sim/app/backend_factory.cpp");
      CHECK(i.target == "sim/cpu/cpu_backend.hpp");
      ++seen;
    }
  }
  CHECK(seen >= 2);  // the factory makes both
}

TEST_CASE("architecture: the include rule is written in docs/ARCHITECTURE.md as the test checks it") {
  // Each layer's line of the rule table in the doc: "| `folder` | `a`, `b` |".
  std::ifstream in(fs::path(SIM_SOURCE_DIR) / "docs" / "ARCHITECTURE.md");
  REQUIRE(in);
  std::map<std::string, std::set<std::string>> doc;
  static const std::regex row(R"re(^\|\s*`([a-z/]+)`\s*\|([^|]*)\|)re");
  static const std::regex name(R"re(`([a-z/]+)`)re");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, row) || include_rule().count(m[1].str()) == 0) continue;
    std::set<std::string>& allowed = doc[m[1].str()];
    allowed.insert(m[1].str());
    const std::string cell = m[2].str();
    for (auto it = std::sregex_iterator(cell.begin(), cell.end(), name); it != std::sregex_iterator(); ++it)
      allowed.insert((*it)[1].str());
  }
  CHECK(doc == include_rule());
}

// The licence (LICENSE, MIT) named in every source file, where tools that
// read SPDX identifiers look: the first line, or the second after a #!.
TEST_CASE("architecture: every source file carries the SPDX licence identifier") {
  const fs::path root = SIM_SOURCE_DIR;
  int files = 0;
  for (const char* top : {"sim", "cuda", "io", "tests", "examples", "scripts", "cmake"})
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      if (!e.is_regular_file()) continue;
      const std::string ext = e.path().extension().string();
      static const char* kinds[] = {".cpp", ".hpp", ".cu", ".cuh", ".h", ".py", ".sh", ".cmake"};
      if (std::find(std::begin(kinds), std::end(kinds), ext) == std::end(kinds)) continue;
      std::ifstream in(e.path());
      std::string first, second;
      std::getline(in, first);
      std::getline(in, second);
      const std::string& line = first.rfind("#!", 0) == 0 ? second : first;
      INFO(fs::relative(e.path(), root).generic_string());
      CHECK(line.find("SPDX-License-Identifier: MIT") != std::string::npos);
      ++files;
    }
  CHECK(files > 200);
  std::ifstream license(root / "LICENSE");
  std::string head;
  std::getline(license, head);
  CHECK(head == "MIT License");
}
