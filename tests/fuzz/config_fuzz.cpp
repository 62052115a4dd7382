// SPDX-License-Identifier: MIT
// libFuzzer target for the config front end: a TOML document and `--set
// KEY=VALUE` overrides through load_config_string, the path every config
// file and command line takes. Input: the TOML text, then each override
// after a NUL byte ("text\0run.steps=3\0fluid.viscosity=1e-3").
// A ConfigError is the expected answer to bad input; anything else escaping
// (another exception type, a crash, a sanitizer report) is a finding,
// because main() would turn it into the wrong status or message.
// Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/config_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t nul = in.find('\0', start);
    parts.push_back(in.substr(start, nul == std::string::npos ? std::string::npos : nul - start));
    if (nul == std::string::npos) break;
    start = nul + 1;
  }
  const std::string text = parts.front();
  parts.erase(parts.begin());
  try {
    const sim::Config c = sim::load_config_string(text, "fuzz.toml", parts);
    (void)c;
  } catch (const sim::ConfigError&) {
  }
  return 0;
}
