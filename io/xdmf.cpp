// SPDX-License-Identifier: MIT
#include "io/xdmf.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "io/snapshot_fields.hpp"

namespace sim {
namespace {

// Shortest text that reads back to the same double.
std::string exact(double v) {
  char buf[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string indented(const std::string& text, const std::string& indent) {
  std::istringstream lines(text);
  std::string out;
  for (std::string line; std::getline(lines, line);) out += indent + line + "\n";
  return out;
}

struct Item {
  std::string dims, type, precision, source;
};

void data_item(std::ostream& o, const Item& d, const char* indent) {
  o << indent << "<DataItem Dimensions=\"" << d.dims << "\" NumberType=\"" << d.type << "\" Precision=\""
    << d.precision << "\" Format=\"HDF\">" << xml_escape(d.source) << "</DataItem>\n";
}

void attribute(std::ostream& o, const std::string& name, const char* kind, const char* center, const Item& d) {
  o << "  <Attribute Name=\"" << name << "\" AttributeType=\"" << kind << "\" Center=\"" << center << "\">\n";
  data_item(o, d, "    ");
  o << "  </Attribute>\n";
}

// NumberType and Precision of a field's elements.
Item item(const SnapshotField& f, const std::string& dims, const std::string& file) {
  const std::string d = f.components == 1 ? dims : dims + " " + std::to_string(f.components);
  const char* type = f.holds_float() ? "Float" : f.element_bytes() == 1 ? "UChar" : "UInt";
  return {d, type, std::to_string(f.element_bytes()), file + f.name};
}

// The Attribute elements of the fields of `group`, in table order.
void attributes(std::ostream& o, SnapshotGroup group, const std::string& dims, const std::string& file) {
  for (const SnapshotField& f : kSnapshotFields) {
    if (f.group() != group || (f.xdmf != XdmfRole::scalar && f.xdmf != XdmfRole::vector)) continue;
    attribute(o, f.name, f.xdmf == XdmfRole::vector ? "Vector" : "Scalar",
              group == SnapshotGroup::grid ? "Cell" : "Node", item(f, dims, file));
  }
}

void grid(std::ostream& o, const XdmfStep& s) {
  const std::string cells = "1 " + std::to_string(s.ny) + " " + std::to_string(s.nx);
  const std::string file = s.file + ":/grid/";
  // The slab is one cell thick; its thickness only matters for how it looks.
  const double dz = std::min(s.dx, s.dy);
  o << "<Grid Name=\"grid\" GridType=\"Uniform\">\n"
    << "  <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"2 " << s.ny + 1 << " " << s.nx + 1 << "\"/>\n"
    << "  <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
    << "    <DataItem Name=\"Origin\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">"
       "0 0 0</DataItem>\n"
    << "    <DataItem Name=\"Spacing\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">"
    << exact(dz) << " " << exact(s.dy) << " " << exact(s.dx) << "</DataItem>\n"
    << "  </Geometry>\n";
  attributes(o, SnapshotGroup::grid, cells, file);
  o << "</Grid>\n";
}

void particles(std::ostream& o, const XdmfStep& s) {
  const std::string n = std::to_string(s.particles);
  const std::string file = s.file + ":/particles/";
  o << "<Grid Name=\"particles\" GridType=\"Uniform\">\n"
    << "  <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" << n << "\" NodesPerElement=\"1\"/>\n"
    << "  <Geometry GeometryType=\"XYZ\">\n";
  for (const SnapshotField& f : kSnapshotFields)
    if (f.xdmf == XdmfRole::geometry) data_item(o, item(f, n, file), "    ");
  o << "  </Geometry>\n";
  attributes(o, SnapshotGroup::particles, n, file);
  o << "</Grid>\n";
}

}  // namespace

std::string xdmf_document(const std::vector<XdmfStep>& steps) {
  std::ostringstream o;
  o << kXdmfPrologue
    << "  <Domain>\n"
    << "    <Grid Name=\"sim\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const XdmfStep& s : steps) {
    std::ostringstream body;
    grid(body, s);
    // ParaView 5.11 fails on an empty Polyvertex set ("Error in Update() of
    // Geometry"); a step without particles has no particle grid.
    if (s.particles > 0) particles(body, s);
    o << "      <Grid Name=\"step_" << s.step << "\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
      << "        <Time Value=\"" << exact(s.time) << "\"/>\n"
      << indented(body.str(), "        ") << "      </Grid>\n";
  }
  o << "    </Grid>\n"
    << "  </Domain>\n"
    << "</Xdmf>\n";
  return o.str();
}

}  // namespace sim
