// SPDX-License-Identifier: MIT
// Files for the tests: paths in the source tree, scratch directories that
// are removed at exit, reading text back, and external tools (a shell, a
// Python that can import a module).
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sim::test {

// SIM_SOURCE_DIR/<rel>; on a machine where the tree sits elsewhere (the
// device the GPU test binaries are copied to and run from the repository
// root) <rel> under the working directory.
inline std::string source_path(const std::string& rel) {
  const std::string built_in = std::string(SIM_SOURCE_DIR) + "/" + rel;
  return std::filesystem::exists(built_in) ? built_in : rel;
}

// An empty directory under the system temp dir, unique to this process;
// all of them are removed at exit unless SIM_KEEP_TEST_OUTPUT is set.
inline std::string scratch_dir(const std::string& name) {
  namespace fs = std::filesystem;
  struct Root {
    fs::path path = fs::temp_directory_path() / ("sim_test_" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      if (!std::getenv("SIM_KEEP_TEST_OUTPUT")) fs::remove_all(path, ec);
    }
  };
  static const Root root;
  const fs::path p = root.path / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

// The whole file ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> v;
  for (std::string line; std::getline(in, line);) v.push_back(line);
  return v;
}

inline void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Number of '\n' in s.
inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Exit status of a shell command (-1 when it did not run or was killed).
inline int shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : (WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
}

// A Python interpreter that can import `module`: python3 on the PATH first,
// then the system one (Debian's python3-h5py and python3-paraview install
// there, which a pyenv or venv python3 does not see). "" when none can.
inline std::string python_with(const std::string& module) {
  for (const char* py : {"python3", "/usr/bin/python3"})
    if (shell(std::string(py) + " -c 'import " + module + "' >/dev/null 2>&1") == 0) return py;
  return "";
}

// s in single quotes, for a shell command line (s holds no single quote).
inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace sim::test
