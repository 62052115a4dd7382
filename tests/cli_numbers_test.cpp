// SPDX-License-Identifier: MIT
// Numbers on the command line: every integer option, of `sim` and of
// `sim bench`, takes the same forms (decimal digits, an optional sign) and
// refuses the others (hexadecimal, octal, spaces, empty) with one line in the
// style of the other option errors, status 2. `010` is ten, never octal eight.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "support/cli.hpp"

using namespace sim;
using test::Parsed;
using test::parse_args;

namespace {

// The usage error of `sim ARGS box.toml` (or `sim bench ARGS box.toml`), "" when it parses.
std::string error_of(std::vector<std::string> args) {
  args.push_back("box.toml");
  const Parsed p = parse_args(args);
  if (p.code == -1) return "";
  CHECK(p.code == 2);
  return p.err;
}

const std::string kSeedRange = "expected an integer in [0, 9223372036854775807], got ";

}  // namespace

TEST_CASE("cli numbers: hexadecimal, octal-looking, spaced and empty integers read alike in every option") {
  // --seed took CLI11's strtoull base 0: 0x10 was 16 and 010 was 8.
  CHECK(error_of({"--seed", "0x10"}) == "sim: error: --seed: " + kSeedRange + "0x10\n");
  CHECK(error_of({"--seed", "0b11"}) == "sim: error: --seed: " + kSeedRange + "0b11\n");
  CHECK(error_of({"--seed", " 5"}) == "sim: error: --seed: " + kSeedRange + " 5\n");
  CHECK(error_of({"--seed", ""}) == "sim: error: --seed: " + kSeedRange + "an empty value\n");
  CHECK(error_of({"--seed", "-1"}) == "sim: error: --seed: " + kSeedRange + "-1\n");
  CHECK(error_of({"--seed", "+-1"}) == "sim: error: --seed: " + kSeedRange + "+-1\n");
  CHECK(*parse_args({"--seed", "010", "box.toml"}).options.seed == 10u);
  CHECK(*parse_args({"--seed", "+7", "box.toml"}).options.seed == 7u);
  CHECK(*parse_args({"--seed", "9223372036854775807", "box.toml"}).options.seed ==
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));

  // --steps and --snapshot-every passed the check but CLI11 then read 010 as 8.
  for (const char* opt : {"--steps", "--snapshot-every"}) {
    CAPTURE(opt);
    const std::string o = opt;
    CHECK(error_of({o, "0x10"}) == "sim: error: " + o + ": expected an integer, got 0x10\n");
    CHECK(error_of({o, "0X10"}) == "sim: error: " + o + ": expected an integer, got 0X10\n");
    CHECK(error_of({o, " 5"}) == "sim: error: " + o + ": expected an integer, got  5\n");
    CHECK(error_of({o, "5x"}) == "sim: error: " + o + ": expected an integer, got 5x\n");
    CHECK(error_of({o, "1e3"}) == "sim: error: " + o + ": expected an integer, got 1e3\n");
    CHECK(error_of({o, "+"}) == "sim: error: " + o + ": expected an integer, got +\n");
    CHECK(error_of({o, "++5"}) == "sim: error: " + o + ": expected an integer, got ++5\n");
    CHECK(error_of({o, "9223372036854775808"}) ==
          "sim: error: " + o + ": out of range of a 64-bit integer: 9223372036854775808\n");
  }
  CHECK(*parse_args({"--steps", "010", "box.toml"}).options.steps == 10);
  CHECK(*parse_args({"--steps", "+010", "box.toml"}).options.steps == 10);
  CHECK(*parse_args({"--snapshot-every", "0010", "box.toml"}).options.snapshot_every == 10);
  CHECK(*parse_args({"--steps", "-9223372036854775808", "box.toml"}).options.steps ==
        std::numeric_limits<int64_t>::min());  // the config loader words the range

  // The integer strategy options took hex and octal through CLI11's cast.
  for (const char* opt : {"--block-x", "--block-y", "--sort-every"}) {
    CAPTURE(opt);
    const std::string o = opt;
    const std::string expected = o == "--sort-every" ? "an integer or \"auto\"" : "an integer";  // gpu.sort_every takes auto
    CHECK(error_of({o, "0x10"}) == "sim: error: " + o + ": expected " + expected + ", got 0x10\n");
    CHECK(error_of({o, ""}) == "sim: error: " + o + ": expected " + expected + ", got an empty value\n");
    CHECK(error_of({o, "99999999999999999999"}) ==
          "sim: error: " + o + ": out of range of a 64-bit integer: 99999999999999999999\n");
  }
  const Parsed s = parse_args({"--sort-every", "010", "--block-x", "+032", "box.toml"});
  REQUIRE(s.code == -1);
  CHECK(s.options.strategies.at("sort_every") == "10");
  CHECK(s.options.strategies.at("block_x") == "32");
}

TEST_CASE("cli numbers: sim bench's integer options take the same forms") {
  CHECK(error_of({"bench", "--steps", "0x10"}) == "sim: error: --steps: expected an integer >= 1, got 0x10\n");
  CHECK(error_of({"bench", "--warmup", ""}) == "sim: error: --warmup: expected an integer >= 0, got an empty value\n");
  CHECK(error_of({"bench", "--warmup", "-1"}) == "sim: error: --warmup: expected an integer >= 0, got -1\n");
  CHECK(error_of({"bench", "--steps", "99999999999999999999"}) ==
        "sim: error: --steps: out of range of a 64-bit integer: 99999999999999999999\n");
  CHECK(error_of({"bench", "--micro-particles", "0x10"}) ==
        "sim: error: --micro-particles: expected an integer >= 1 (K and M suffixes allowed), got 0x10\n");
  CHECK(error_of({"bench", "--micro-particles", "M"}) ==
        "sim: error: --micro-particles: expected an integer >= 1 (K and M suffixes allowed), got M\n");
  CHECK(error_of({"bench", "--micro-particles", "9000000000000M"}) ==
        "sim: error: --micro-particles: out of range of a 64-bit integer: 9000000000000M\n");
  CHECK(error_of({"bench", "--micro-sizes", "64,0x100"}) ==
        "sim: error: --micro-sizes: expected an integer in [8, 2147483647], got 0x100\n");
  CHECK(error_of({"bench", "--micro-sizes", "4294967296"}) ==
        "sim: error: --micro-sizes: expected an integer in [8, 2147483647], got 4294967296\n");
  CHECK(error_of({"bench", "--sort-every", "0x10"}) ==
        "sim: error: --sort-every: expected an integer or \"auto\", got 0x10\n");

  const Parsed p = parse_args({"bench", "--steps", "010", "--warmup", "+03", "--micro-sizes", "064,0128",
                               "--micro-particles", "010K,+2M", "--copy-mib", "016", "box.toml"});
  REQUIRE(p.code == -1);
  const BenchOptions& b = p.options.bench;
  CHECK(b.steps == 10);
  CHECK(b.warmup == 3);
  CHECK(b.micro_sizes == std::vector<int>{64, 128});
  CHECK(b.micro_particles == std::vector<int64_t>{10 << 10, 2 << 20});
  CHECK(b.copy_mib == 16);
}
