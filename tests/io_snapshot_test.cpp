// SPDX-License-Identifier: MIT
// Snapshot files: exact round trip through the HDF5 C API, the derived
// fields, independence from the particle layout, compression, the output
// directory check and the writer thread.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "io/snapshot_fields.hpp"
#include "io/snapshot_files.hpp"
#include "io/snapshot_thread.hpp"
#include "io/snapshot_writer.hpp"
#include "support/cases.hpp"
#include "support/compare.hpp"
#include "support/io.hpp"

using namespace sim;

namespace {

// A small non-square box with an obstacle and a particle cloud under gravity.
Config cloud_box() {
  Config c = test::quiet_box(24);
  c.ny = 16;
  c.lx = 1.5;
  c.gy = -9.81;
  c.density = 1000.0;
  c.viscosity = 1e-3;
  c.tolerance = 1e-4;
  Obstacle o;
  o.shape = ObstacleShape::circle;
  o.x = 0.75;
  o.y = 0.3;
  o.radius = 0.15;
  c.obstacles.push_back(o);
  ParticleRegion r;
  r.x0 = 0.2;
  r.x1 = 1.3;
  r.y0 = 0.6;
  r.y1 = 0.9;
  r.count = 300;
  r.diameter_min = 1e-3;
  r.diameter_max = 2e-3;
  c.regions.push_back(r);
  c.particle_density = 2500.0;
  return c;
}

}  // namespace

TEST_CASE("io: snapshot round trip through the HDF5 C API is exact") {
  const Config cfg = cloud_box();
  SimState s = test::run_steps(cfg, 4);
  // Dead slots must not reach the file.
  for (size_t r = 0; r < s.particles.size(); r += 7) s.particles.alive[r] = 0;
  s.counters.removed = 3;
  s.counters.recycled = 2;
  const std::string dir = test::scratch_dir("roundtrip");
  const std::string path = join_path(dir, snapshot_file_name(s.step));
  CHECK(snapshot_file_name(s.step) == "snap_000004.h5");
  write_snapshot(path, s, make_snapshot_meta(cfg, "cpu | layout=soa"));
  CHECK(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(temporary_path(path)));

  const SnapshotContents back = read_snapshot(path);
  const SnapshotHeader& h = back.header;
  CHECK(h.step == s.step);
  CHECK(h.time == s.time);
  CHECK(h.dt == s.dt);
  CHECK(h.next_id == s.next_id);
  CHECK(h.counters.removed == 3);
  CHECK(h.counters.recycled == 2);
  CHECK(h.capacity == static_cast<int64_t>(s.particles.size()));
  CHECK(h.nx == 24);
  CHECK(h.ny == 16);
  CHECK(h.dx == cfg.dx());
  CHECK(h.dy == cfg.dy());
  CHECK(h.config == config_to_toml(cfg));
  CHECK(h.strategies == "cpu | layout=soa");
  CHECK(h.version == SIM_VERSION);
  CHECK(h.units.find("pressure [Pa]") != std::string::npos);

  const SnapshotGrid g = snapshot_grid(s, cfg.density);
  const SnapshotParticles p = snapshot_particles(s.particles);
  SnapshotContents expect;
  expect.header = h;
  expect.grid = g;
  expect.particles = p;
  test::check_same_snapshot(back, expect);

  int64_t alive = 0;
  for (uint32_t a : s.particles.alive) alive += a;
  CHECK(h.particles == alive);
  CHECK(std::is_sorted(back.particles.id.begin(), back.particles.id.end()));
  int solid = 0;
  for (uint8_t v : back.grid.solid) solid += v;
  CHECK(solid > 0);
}

TEST_CASE("io: derived fields are the second-order cell-centred values") {
  Config cfg = test::quiet_box(12);
  cfg.ny = 10;
  SimState s = make_initial_state(cfg);
  const Grid& g = s.grid;
  // Linear fields: every centred difference and average is exact.
  const double a = 0.7, b = -0.4, c = 0.25;
  for (int j = -1; j <= g.ny + 1; ++j)
    for (int i = -1; i <= g.nx + 1; ++i) {
      s.u[g.idx(i, j)] = static_cast<real>(a * (j + 0.5) * g.dy + c * i * g.dx);
      s.v[g.idx(i, j)] = static_cast<real>(b * (i + 0.5) * g.dx);
      s.phi[g.idx(i, j)] = static_cast<real>(0.01 * i);
    }
  const double rho = 998.0;
  const SnapshotGrid f = snapshot_grid(s, rho);
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      const size_t k = static_cast<size_t>(j) * g.nx + i;
      CHECK(f.vorticity[k] == doctest::Approx(b - a).epsilon(1e-5));
      CHECK(f.divergence[k] == doctest::Approx(c).epsilon(1e-5));
      CHECK(f.velocity[3 * k] == doctest::Approx(a * (j + 0.5) * g.dy + c * (i + 0.5) * g.dx).epsilon(1e-5));
      CHECK(f.velocity[3 * k + 1] == doctest::Approx(b * (i + 0.5) * g.dx).epsilon(1e-5));
      CHECK(f.velocity[3 * k + 2] == 0.0f);
      CHECK(f.pressure[k] == doctest::Approx(rho * 0.01 * i).epsilon(1e-6));
    }
}

TEST_CASE("io: the file does not depend on the particle layout or slot order") {
  Config soa = cloud_box();
  Config aos = soa;
  aos.layout = Layout::aos;
  const SimState a = test::run_steps(soa, 3), b = test::run_steps(aos, 3);
  const std::string dir = test::scratch_dir("layout");
  write_snapshot(dir + "/soa.h5", a, make_snapshot_meta(soa, "x"));
  write_snapshot(dir + "/aos.h5", b, make_snapshot_meta(aos, "x"));
  test::check_same_snapshot(read_snapshot(dir + "/soa.h5"), read_snapshot(dir + "/aos.h5"));

  // A device may sort slots by cell; ids put the particles back in order.
  HostParticles shuffled = a.particles;
  std::vector<size_t> perm(shuffled.size());
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = (k * 37) % perm.size();
  for (size_t k = 0; k < perm.size(); ++k) {
    const size_t r = perm[k];
    shuffled.x[k] = a.particles.x[r];
    shuffled.y[k] = a.particles.y[r];
    shuffled.vx[k] = a.particles.vx[r];
    shuffled.vy[k] = a.particles.vy[r];
    shuffled.d[k] = a.particles.d[r];
    shuffled.id[k] = a.particles.id[r];
    shuffled.alive[k] = a.particles.alive[r];
  }
  const SnapshotParticles p = snapshot_particles(a.particles), q = snapshot_particles(shuffled);
  CHECK(test::same_bits(p.position, q.position));
  CHECK(test::same_bits(p.id, q.id));
  CHECK(test::same_bits(p.diameter, q.diameter));
}

TEST_CASE("io: compressed snapshots are chunked shuffled and deflated with the same values") {
  Config cfg = cloud_box();
  const SimState s = test::run_steps(cfg, 2);
  const std::string dir = test::scratch_dir("compress");
  write_snapshot(dir + "/plain.h5", s, make_snapshot_meta(cfg, "x"));
  cfg.compress = true;
  cfg.compression_level = 6;
  write_snapshot(dir + "/packed.h5", s, make_snapshot_meta(cfg, "x"));
  test::check_same_snapshot(read_snapshot(dir + "/plain.h5"), read_snapshot(dir + "/packed.h5"));

  const hid_t f = H5Fopen((dir + "/packed.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  for (const char* name : {"/grid/pressure", "/grid/velocity", "/grid/u", "/particles/position", "/particles/id"}) {
    CAPTURE(name);
    const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    const hid_t p = H5Dget_create_plist(d);
    CHECK(H5Pget_layout(p) == H5D_CHUNKED);
    REQUIRE(H5Pget_nfilters(p) == 3);
    unsigned flags = 0, cd[4] = {0, 0, 0, 0};
    size_t ncd = 4;
    CHECK(H5Pget_filter2(p, 0, &flags, &ncd, cd, 0, nullptr, nullptr) == H5Z_FILTER_SHUFFLE);
    ncd = 4;
    CHECK(H5Pget_filter2(p, 1, &flags, &ncd, cd, 0, nullptr, nullptr) == H5Z_FILTER_DEFLATE);
    CHECK(cd[0] == 6u);
    ncd = 4;
    CHECK(H5Pget_filter2(p, 2, &flags, &ncd, cd, 0, nullptr, nullptr) == H5Z_FILTER_FLETCHER32);  // checked first on reading
    H5Pclose(p);
    H5Dclose(d);
  }
  H5Fclose(f);
}

TEST_CASE("io: every snapshot dataset is chunked in whole rows and carries a Fletcher32 checksum") {
  const Config cfg = cloud_box();
  const SimState s = test::run_steps(cfg, 2);
  const std::string path = test::scratch_dir("fletcher32") + "/plain.h5";
  write_snapshot(path, s, make_snapshot_meta(cfg, "x"));
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  uint64_t data_bytes = 0;
  for (const SnapshotField& field : kSnapshotFields) {
    const std::string name = field.path();
    CAPTURE(name);
    const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
    REQUIRE(d >= 0);
    const hid_t type = H5Dget_type(d), space = H5Dget_space(d);
    CHECK(H5Tget_size(type) == field.element_bytes());
    data_bytes += static_cast<uint64_t>(H5Sget_simple_extent_npoints(space)) * H5Tget_size(type);
    H5Sclose(space);
    H5Tclose(type);
    const hid_t p = H5Dget_create_plist(d);
    REQUIRE(H5Pget_layout(p) == H5D_CHUNKED);
    REQUIRE(H5Pget_nfilters(p) == 1);
    unsigned flags = 0, cd[4] = {0, 0, 0, 0};
    size_t ncd = 4;
    CHECK(H5Pget_filter2(p, 0, &flags, &ncd, cd, 0, nullptr, nullptr) == H5Z_FILTER_FLETCHER32);
    // A small dataset is one chunk: its whole rows.
    const hid_t sp = H5Dget_space(d);
    hsize_t dims[3] = {0, 0, 0}, chunk[3] = {0, 0, 0};
    const int rank = H5Sget_simple_extent_dims(sp, dims, nullptr);
    REQUIRE(H5Pget_chunk(p, 3, chunk) == rank);
    for (int k = 0; k < rank; ++k) CHECK(chunk[k] == dims[k]);
    H5Sclose(sp);
    H5Pclose(p);
    H5Dclose(d);
  }
  H5Fclose(f);
  // What the collective writer checks the free space against.
  CHECK(data_bytes == snapshot_data_bytes(24, 16, static_cast<uint64_t>(read_snapshot_header(path).particles)));
  test::check_same_snapshot(read_snapshot(path), read_snapshot(path));
}

TEST_CASE("io: chunks of a large grid are blocks of whole rows of about 1 MiB") {
  // 600 x 700 floats: rows of 2800 B, 374 rows to a 1 MiB chunk; velocity 3 floats a cell.
  Config cfg = cloud_box();
  cfg.nx = 700;
  cfg.ny = 600;
  const SimState s = make_initial_state(cfg);
  const std::string path = test::scratch_dir("fletcher32_large") + "/large.h5";
  write_snapshot(path, s, make_snapshot_meta(cfg, "x"));
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  auto chunk_of = [&](const char* name) {
    const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    const hid_t p = H5Dget_create_plist(d);
    std::vector<hsize_t> c(3, 0);
    c.resize(static_cast<size_t>(H5Pget_chunk(p, 3, c.data())));
    CHECK(H5Pget_nfilters(p) == 1);
    H5Pclose(p);
    H5Dclose(d);
    return c;
  };
  CHECK(chunk_of("/grid/pressure") == std::vector<hsize_t>{(hsize_t(1) << 20) / (4 * 700), 700});
  CHECK(chunk_of("/grid/velocity") == std::vector<hsize_t>{(hsize_t(1) << 20) / (12 * 700), 700, 3});
  CHECK(chunk_of("/grid/solid") == std::vector<hsize_t>{600, 700});  // 420 kB: one chunk
  H5Fclose(f);
  const SnapshotContents c = read_snapshot(path);
  CHECK(c.grid.pressure.size() == 600u * 700u);
}

TEST_CASE("io: an independent reader sees the documented names shapes and attributes") {
  const Config cfg = cloud_box();
  const SimState s = test::run_steps(cfg, 2);
  const std::string dir = test::scratch_dir("h5py");
  const std::string path = dir + "/snap_000002.h5";
  write_snapshot(path, s, make_snapshot_meta(cfg, "x"));
  const int64_t n = read_snapshot_header(path).particles;
  const std::string python = test::python_with("h5py");
  if (!python.empty()) {
    // The datasets kSnapshotFields names, which the file must hold as documented.
    std::string json = "[";
    for (const SnapshotField& f : kSnapshotFields) {
      std::string shape;
      for (uint64_t d : f.dims(24, 16, static_cast<uint64_t>(n)))
        shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      json += std::string(json.size() > 1 ? ", " : "") + "{\"path\": \"" + f.path() + "\", \"shape\": [" + shape +
              "], \"dtype\": \"" + f.type_name() + "\"}";
    }
    const std::string fields = dir + "/fields.json";
    test::write_text(fields, json + "]\n");
    const std::string cmd = python + " " + test::quoted(test::source_path("tests/io_h5py_check.py")) + " " +
                            test::quoted(path) + " 24 16 " + std::to_string(n) + " " + test::quoted(fields);
    CHECK(test::shell(cmd) == 0);
  } else if (test::shell("h5dump --version >/dev/null 2>&1") == 0) {
    const std::string out = dir + "/h5dump.txt";
    REQUIRE(test::shell("h5dump -H " + test::quoted(path) + " > " + test::quoted(out)) == 0);
    const std::string h = test::read_text(out);
    for (const char* name : {"DATASET \"pressure\"", "DATASET \"velocity\"", "DATASET \"u\"", "DATASET \"id\"",
                             "ATTRIBUTE \"config\"", "ATTRIBUTE \"next_id\"", "( 16, 24, 3 )", "( 16, 25 )"})
      CHECK_MESSAGE(h.find(name) != std::string::npos, name);
  } else {
    MESSAGE("SKIPPED: neither python3 with h5py nor h5dump is available");
  }
}

TEST_CASE("io: the output directory is created or refused with a one-line reason") {
  const std::string dir = test::scratch_dir("outdir");
  const std::string nested = dir + "/a/b/c";
  prepare_output_dir(nested);
  CHECK(std::filesystem::is_directory(nested));

  const std::string file = dir + "/plain_file";
  test::write_text(file, "keep me\n");
  const std::string bad = file + "/out";
  try {
    prepare_output_dir(bad);
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "output directory '" + bad + "': " + std::strerror(ENOTDIR));
  }

  Config cfg = cloud_box();
  cfg.steps = 2;
  cfg.output = bad;
  std::string err;
  CHECK(test::run_case(cfg, "", &err) != 0);
  CHECK(err == "sim: error: output directory '" + bad + "': " + std::strerror(ENOTDIR) + "\n");
  CHECK(test::read_text(file) == "keep me\n");
}

TEST_CASE("io: the writer thread writes every queued snapshot and the index") {
  const Config cfg = cloud_box();
  const SimState s = test::run_steps(cfg, 1);
  const std::string dir = test::scratch_dir("thread");
  SnapshotTiming t;
  {
    SnapshotThread writer(make_snapshot_meta(cfg, "x"), SnapshotSeries(dir));
    for (int k = 1; k <= 5; ++k) {
      SimState copy = s;
      copy.step = 10 * k;
      copy.time = 0.5 * k;
      writer.submit(std::move(copy));
    }
    writer.finish();
    t = writer.timing();
  }
  CHECK(t.written == 5);
  CHECK(t.write_ms > 0);
  CHECK(t.hidden_ms() <= t.write_ms);
  for (int k = 1; k <= 5; ++k) CHECK(read_snapshot_header(dir + "/" + snapshot_file_name(10 * k)).step == 10 * k);
  const std::string index = test::read_text(dir + "/sim.xdmf");
  CHECK(index.find("<Time Value=\"2.5\"/>") != std::string::npos);
  for (const auto& e : std::filesystem::directory_iterator(dir)) CHECK(e.path().extension() != ".tmp");

  // A failed write stops the run at the next hand-over, naming the file
  // (the index: a new series writes it before its first snapshot).
  const std::string gone = test::scratch_dir("thread_gone");
  SnapshotThread writer(make_snapshot_meta(cfg, "x"), SnapshotSeries(gone));
  std::filesystem::remove_all(gone);
  writer.submit(s);
  try {
    writer.finish();
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "no such file or directory writing " + gone + "/sim.xdmf");
  }
  CHECK_THROWS_AS(writer.submit(s), std::runtime_error);
}

TEST_CASE("io: docs/OUTPUT.md holds the generated snapshot dataset tables") {
  const std::string path = test::source_path("docs/OUTPUT.md");
  std::string doc = test::read_text(path);
  REQUIRE(!doc.empty());
  bool rewrote = false;
  for (const auto& [group, marker] : {std::pair{SnapshotGroup::grid, std::string("grid")},
                                      std::pair{SnapshotGroup::particles, std::string("particles")}}) {
    CAPTURE(marker);
    const std::string begin = "<!-- BEGIN snapshot_fields_markdown(" + marker + ") -->\n",
                      end = "<!-- END snapshot_fields_markdown(" + marker + ") -->";
    const auto b = doc.find(begin), e = doc.find(end);
    REQUIRE(b != std::string::npos);
    REQUIRE(e != std::string::npos);
    const std::string generated = snapshot_fields_markdown(group);
    if (std::getenv("SIM_REGENERATE_DOCS")) {
      doc.replace(b + begin.size(), e - b - begin.size(), generated);
      rewrote = true;
      continue;
    }
    INFO("docs/OUTPUT.md is stale: SIM_REGENERATE_DOCS=1 ./build/sim_tests -tc='*OUTPUT.md*'");
    CHECK(doc.substr(b + begin.size(), e - b - begin.size()) == generated);
  }
  if (rewrote) {
    test::write_text(path, doc);
    MESSAGE("rewrote " << path);
    return;
  }
  // The ParaView section names the arrays sim.xdmf lists.
  const auto xdmf = doc.find("## The XDMF index and ParaView"), restart = doc.find("## Restart");
  REQUIRE(xdmf < restart);
  const std::string section = doc.substr(xdmf, restart - xdmf);
  for (const SnapshotField& f : kSnapshotFields)
    if (f.xdmf == XdmfRole::scalar || f.xdmf == XdmfRole::vector)
      CHECK_MESSAGE(section.find("`" + std::string(f.name) + "`") != std::string::npos, f.path());
}

TEST_CASE("io: the units attribute names every dataset with its unit") {
  const Config cfg = cloud_box();
  const std::string path = test::scratch_dir("units") + "/snap_000000.h5";
  write_snapshot(path, make_initial_state(cfg), make_snapshot_meta(cfg, "x"));
  const std::string units = read_snapshot_header(path).units;
  const auto grid = units.find("/grid:"), particles = units.find("/particles:");
  REQUIRE(grid != std::string::npos);
  REQUIRE(particles != std::string::npos);
  REQUIRE(grid < particles);
  for (const SnapshotField& f : kSnapshotFields) {
    CAPTURE(f.path());
    const std::string section =
        f.group() == SnapshotGroup::grid ? units.substr(grid, particles - grid) : units.substr(particles);
    const std::string name = f.name;
    bool named = false;
    for (auto at = section.find(name); at != std::string::npos && !named; at = section.find(name, at + 1))
      named = !std::isalnum(static_cast<unsigned char>(section[at - 1])) &&
              (at + name.size() == section.size() ||
               !std::isalnum(static_cast<unsigned char>(section[at + name.size()])));
    CHECK(named);
    CHECK(section.find("[" + std::string(f.unit)) != std::string::npos);
  }
}
