// A fused chain's program text and options, and what keeps a chain from being fused
// (fused_program.hpp; the kernel side is schemes/fuse_*.cl).
#include "fused_program.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "chain.hpp"
#include "fused_rows.hpp"
#include "io.hpp"
#include "kernel_axes.hpp"
#include "launch_checks.hpp"
#include "sha256.hpp"

namespace kperf {

namespace fs = std::filesystem;

int fused_tile_halo(const std::vector<PipelineStage>& chain) {
  int halo = 0;
  for (const PipelineStage& s : chain) halo += s.app->radius;
  return halo;
}

namespace {

// The radii of the stages after stage k: the halo of its outputs (0 for the last).
int halo_after(const std::vector<PipelineStage>& chain, std::size_t k) {
  int halo = 0;
  for (std::size_t j = k + 1; j < chain.size(); ++j) halo += chain[j].app->radius;
  return halo;
}

// The storage precision reading the chain's input as its first stage does and writing its
// output as its last stage does; nullptr where none does.
const PrecisionDescriptor* chain_precision(const std::vector<PipelineStage>& chain) {
  const StorageType* in = chain.front().variant.precision_info().in;
  const StorageType* out = chain.back().variant.precision_info().out;
  for (const PrecisionDescriptor& p : precision_registry())
    if (p.in == in && p.out == out) return &p;
  return nullptr;
}

// The -D NAME=VALUE options of a text of options.
std::map<std::string, std::string> defines_of(const std::string& options) {
  std::map<std::string, std::string> out;
  std::istringstream in(options);
  std::string word;
  while (in >> word)
    if (word.rfind("-D", 0) == 0 && word.size() > 2) {
      const auto eq = word.find('=');
      out[word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
          eq == std::string::npos ? "1" : word.substr(eq + 1);
    }
  return out;
}

// The options each stage brings to the one program: its kernel axes' (the first stage's whole
// variant's are the program's input axes) and its app's parameters.
std::string stage_options(const PipelineStage& s, const AppParams& params) {
  std::string options = kernel_axes_build_options(s.variant);
  if (s.app->param_options) options += " " + s.app->param_options(params, false);
  return options;
}

// The outputs one call of stage k's window function computes: the launch's for the last stage;
// for an earlier one a chunk of its region (the block and its halo) as wide as the launch's
// outputs and at least 4 where the region allows (so window rows move as float4s), and as tall
// as one round of the work-group's items over the region needs, at most 8 rows.
WorkGroup stage_chunk(const std::vector<PipelineStage>& chain, std::size_t k) {
  const WorkGroup launch = chain.back().wg;
  if (k + 1 == chain.size()) return launch;
  const WorkGroup block = launch.block();
  const int halo = halo_after(chain, k);
  const int width = block.x + 2 * halo, height = block.y + 2 * halo;
  const int vec = std::min(std::max(4, launch.vec), width);
  const int across = (width + vec - 1) / vec;
  const int rows_per_round = std::max(1, launch.x * launch.y / across);
  const int py = std::clamp((height + rows_per_round - 1) / rows_per_round, 1, std::min(8, height));
  return {launch.x, launch.y, vec, py};
}

// Strips // and /* */ comments and string literals, keeping line breaks.
std::string without_comments(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
      if (i < text.size()) out += '\n';
    } else if (text.compare(i, 2, "/*") == 0) {
      const std::size_t end = text.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? text.size() : end + 2;
      out.append(static_cast<std::size_t>(std::count(text.begin() + static_cast<long>(i),
                                                     text.begin() + static_cast<long>(stop), '\n')),
                 '\n');
      i = stop - 1;
    } else if (text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      out += "\"\"";
    } else {
      out += text[i];
    }
  }
  return out;
}

// The text's lines, each preprocessor line (with its continuations) blank or, `directives`, alone.
std::string code_lines(const std::string& text, std::vector<std::string>* directives) {
  std::istringstream in(without_comments(text));
  std::string line, code;
  bool continued = false;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    const bool directive = continued || (first != std::string::npos && line[first] == '#');
    continued = directive && !line.empty() && line.back() == '\\';
    if (directive) {
      if (directives && line.find_first_not_of(" \t") != std::string::npos &&
          line[line.find_first_not_of(" \t")] == '#')
        directives->push_back(line.substr(line.find_first_not_of(" \t") + 1));
      code += '\n';
    } else {
      code += line + '\n';
    }
  }
  return code;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::vector<std::string> defined_macros(const std::string& text) {
  std::vector<std::string> directives, names;
  code_lines(text, &directives);
  for (const std::string& d : directives) {
    std::size_t i = d.find_first_not_of(" \t");
    if (i == std::string::npos || d.compare(i, 6, "define") != 0) continue;
    i = d.find_first_not_of(" \t", i + 6);
    std::size_t end = i;
    while (end < d.size() && ident_char(d[end])) ++end;
    if (i != std::string::npos && end > i) names.push_back(d.substr(i, end - i));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<std::string> file_scope_names(const std::string& text) {
  const std::string code = code_lines(text, nullptr);
  const std::vector<std::string> macros = defined_macros(text);
  std::set<std::string> names;
  int depth = 0;     // braces, parentheses and brackets together
  std::string last;  // the identifier just before, at depth 0
  for (std::size_t i = 0; i < code.size();) {
    const char c = code[i];
    if (ident_char(c) && !std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t end = i;
      while (end < code.size() && ident_char(code[end])) ++end;
      if (depth == 0) last = code.substr(i, end - i);
      i = end;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < code.size() && ident_char(code[i])) ++i;
      continue;
    }
    if (depth == 0 && (c == '(' || c == '[' || c == '=' || c == ';' || c == ',') && !last.empty())
      names.insert(last);
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (!std::isspace(static_cast<unsigned char>(c))) last.clear();
    ++i;
  }
  std::vector<std::string> out;
  for (const std::string& n : names)
    if (n.rfind("__", 0) != 0 && n.rfind("kperf_", 0) != 0 && n.rfind("KPERF_", 0) != 0 &&
        n != "_Pragma" && !std::binary_search(macros.begin(), macros.end(), n))
      out.push_back(n);
  return out;
}

std::optional<std::pair<int, std::string>> fused_chain_problem(
    const std::vector<PipelineStage>& chain) {
  std::map<std::string, std::pair<std::string, std::size_t>> set_by;  // -D name: value, stage
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const Variant& v = chain[k].variant;
    const int stage = static_cast<int>(k);
    const std::string reads_local =
        "this stage reads the stage before's outputs from local memory, where ";
    if (!v.output.none())
      return std::make_pair(stage, std::string("output schemes are not written for a fused "
                                               "chain, whose stages' outputs stay in local memory "
                                               "until the last stage stores"));
    if (std::string(v.load_path().name) != "local")
      return std::make_pair(
          stage, k == 0 ? "a fused chain reads its input into a local tile: the " +
                              std::string(v.load_path().name) + " load path is not written for it"
                        : reads_local + "the " + v.load_path().name + " load path does not apply");
    if (v.host_perforate)
      return std::make_pair(stage, std::string("host perforation packs the input on the host: a "
                                               "fused chain's tile is not written for packed "
                                               "input"));
    if (races(v))
      return std::make_pair(stage, std::string("a relaxed barrier is not written for a fused "
                                               "chain, whose barriers keep its stages apart"));
    if (k == 0 && fuse_rows(chain) > 0 && !v.is_accurate() &&
        std::string(v.scheme->family) != "rows")
      return std::make_pair(stage,
                            "the rolling design (--fuse-rows) streams rows: its first "
                            "stage takes the accurate scheme or rows:k, and " +
                                v.canonical() + " is not written for it");
    if (k > 0 && !v.is_accurate())
      return std::make_pair(stage, reads_local +
                                       "each is computed once per work-group: an input "
                                       "scheme has no reads to skip there");
    if (k > 0)
      if (auto problem = stage_link_problem(chain[k - 1].variant, v))
        return std::make_pair(stage, *problem);
    for (const auto& [name, value] : defines_of(stage_options(chain[k], {}))) {
      auto [it, fresh] = set_by.emplace(name, std::make_pair(value, k));
      if (!fresh && it->second.first != value)
        return std::make_pair(stage, "stage " + std::to_string(it->second.second + 1) +
                                         " builds with -D" + name + "=" + it->second.first +
                                         " and this one with " + value + ": one fused program " +
                                         "holds one value");
    }
  }
  if (!chain_precision(chain))
    return std::make_pair(-1, std::string("the chain reads ") +
                                  chain.front().variant.precision_info().in->name + " and writes " +
                                  chain.back().variant.precision_info().out->name +
                                  ": no storage precision stores so");
  return std::nullopt;
}

namespace {

// The first stage's app as the fused tile sees it: a halo of every stage's radius, always a tile.
AppDescriptor first_as_tile(const std::vector<PipelineStage>& chain) {
  AppDescriptor first = *chain.front().app;
  first.radius = fused_tile_halo(chain);
  first.accurate_uses_tile = true;
  return first;
}

}  // namespace

std::optional<std::pair<int, Verdict>> check_fused_launch(const std::vector<PipelineStage>& chain,
                                                          const DeviceInfo& dev) {
  const AppDescriptor first = first_as_tile(chain);
  const WorkGroup launch = chain.back().wg;
  const RollingShape rolling = rolling_shape(chain);
  // The rolling design's stages read their windows from a strip, its rows as tall as the strip.
  const WorkGroup strip{launch.x, 1, launch.vec, rolling.rows};
  for (std::size_t k = 0; k < chain.size(); ++k)
    if (auto verdict =
            rolling.rows ? check_variant(chain[k].variant, *chain[k].app, strip)
                         : check_variant(chain[k].variant, k == 0 ? first : *chain[k].app, launch))
      return std::make_pair(static_cast<int>(k), *verdict);
  if (auto verdict = check_work_group(launch, dev)) return std::make_pair(-1, *verdict);
  if (rolling.rows && rolling.rows % launch.py)
    return std::make_pair(
        -1, Verdict{Status::kInvalidConfig, "the rolling design's strips of " +
                                                std::to_string(rolling.rows) +
                                                " rows (--fuse-rows) are not whole steps of --py " +
                                                std::to_string(launch.py) + " rows"});
  if (rolling.rows && rolling.block_x() < 4)
    return std::make_pair(
        -1, Verdict{Status::kInvalidConfig,
                    "the rolling design's " + std::to_string(rolling.columns()) +
                        " columns a row (the work-group's x times --vec) leave no block of 4 "
                        "beside the chain's halo of " +
                        std::to_string(2 * rolling.halo_after_first) + " columns"});
  const std::size_t bytes = fused_local_bytes(chain);
  if (bytes > dev.local_mem_size)
    return std::make_pair(
        -1,
        Verdict{Status::kInvalidConfig,
                "the fused kernel's tile and stage outputs need " + std::to_string(bytes) +
                    " bytes of local memory; device has " + std::to_string(dev.local_mem_size)});
  return std::nullopt;
}

std::size_t fused_local_bytes(const std::vector<PipelineStage>& chain) {
  if (fuse_rows(chain)) return rolling_local_bytes(chain);
  const AppDescriptor first = first_as_tile(chain);
  Variant input = chain.front().variant;
  if (const PrecisionDescriptor* p = chain_precision(chain)) input.precision = p;
  const WorkGroup launch = chain.back().wg, block = launch.block();
  std::size_t bytes = tile_local_bytes(first, input, launch);
  for (std::size_t k = 0; k + 1 < chain.size(); ++k) {
    const int halo = halo_after(chain, k);
    bytes += static_cast<std::size_t>(block.y + 2 * halo) *
             static_cast<std::size_t>((block.x + 2 * halo + 3) / 4 * 4) * sizeof(float);
  }
  return bytes;
}

namespace {

// Stage k's part of a fused program's text: its view of the contract, its app file with its
// file-scope names prefixed, its functions, then its names and macros undefined.
void stage_text(std::ostringstream& s, const std::vector<PipelineStage>& chain, std::size_t k,
                const PrecisionDescriptor& precision, const std::string& kernel_root,
                const std::map<std::string, std::string>& defined) {
  const StorageType& f16 = storage_type("f16");
  const PipelineStage& st = chain[k];
  const bool last = k + 1 == chain.size();
  const StorageType* reads = k == 0 ? precision.in : chain[k - 1].variant.precision_info().out;
  const StorageType* writes = last ? precision.out : st.variant.precision_info().out;
  const bool rolling = fuse_rows(chain) > 0;
  // A rolling stage computes the launch's VEC x PY outputs a step, whatever the stage.
  const WorkGroup chunk = rolling ? chain.back().wg : stage_chunk(chain, k);
  const fs::path file = fs::path(kernel_root) / "kernels" / st.app->kernel_file;
  const std::string text = read_file(file.string());
  s << "\n// stage " << k + 1 << ": " << st.app->name << ", " << file.filename().string()
    << " (sha256 " << sha256_hex(text) << ")\n"
    << "#define KPERF_FUSE_STAGE " << k + 1 << "\n";
  if (last || rolling) {
    s << "#define KPERF_FUSE_STAGE_VEC " << chunk.vec << "\n"
      << "#define KPERF_FUSE_STAGE_PY " << chunk.py << "\n";
  } else {
    // An earlier stage's chunk, unless --cl-options names one (-DKPERF_FUSE_CHUNK_VEC_K=...).
    for (const auto& [axis, value] : {std::make_pair("VEC", chunk.vec), {"PY", chunk.py}})
      s << "#ifdef KPERF_FUSE_CHUNK_" << axis << "_" << k + 1 << "\n#define KPERF_FUSE_STAGE_"
        << axis << " KPERF_FUSE_CHUNK_" << axis << "_" << k + 1 << "\n#else\n#define "
        << "KPERF_FUSE_STAGE_" << axis << " " << value << "\n#endif\n";
  }
  s << "#define KPERF_FUSE_STAGE_RADIUS " << st.app->radius << "\n"
    << "#define KPERF_FUSE_STAGE_HALO " << halo_after(chain, k) << "\n"
    << "#define KPERF_FUSE_STAGE_IN_HALF " << (reads == &f16) << "\n"
    << "#define KPERF_FUSE_STAGE_OUT_HALF " << (writes == &f16) << "\n"
    << "#define KPERF_FUSE_STAGE_RECON_LI "
    << (k == 0 && chain[0].variant.recon == Recon::kLi ? 1 : 0) << "\n"
    << "#define KPERF_FUSE_STAGE_ROUND "
    << (writes->is_float() ? 0
        : writes == &f16   ? 1
                           : 2)
    << "\n#include \"fuse_stage_begin.cl\"\n";
  const std::string prefix = "kperf_s" + std::to_string(k + 1) + "_";
  const std::vector<std::string> names = file_scope_names(text);
  for (const std::string& n : names) s << "#define " << n << " " << prefix << n << "\n";
  s << "#include \""
    << (st.app->user() ? fs::absolute(file).lexically_normal().string()
                       : std::string(st.app->kernel_file))
    << "\"\n#include \"" << (rolling ? "fuse_roll_stage.cl" : "fuse_stage_end.cl") << "\"\n";
  for (const std::string& n : names) s << "#undef " << n << "\n";
  for (const std::string& m : defined_macros(text))
    if (m != "RADIUS" && !defined.count(m)) s << "#undef " << m << "\n";
}

// The kernel at the end of a fused program's text: the tile design's (fuse_kernel.cl) or the
// rolling design's (fuse_roll_kernel.cl), each stage reading the region or ring before it.
void kernel_text(std::ostringstream& s, std::size_t stages, bool rolling) {
  const std::string n = std::to_string(stages);
  if (!rolling) {
    s << "\n#include \"fuse_kernel.cl\"\nKPERF_FUSE_KERNEL_BEGIN\n";
    for (std::size_t k = 1; k < stages; ++k)
      s << "KPERF_FUSE_MIDDLE(" << k << ", "
        << (k == 1 ? std::string("kperf_fuse_tile") : "kperf_fuse_inter_" + std::to_string(k - 1))
        << ")\n";
    s << "KPERF_FUSE_LAST(" << n << ", kperf_fuse_inter_" << stages - 1 << ")\n";
    return;
  }
  s << "\n#include \"fuse_roll_kernel.cl\"\nKPERF_ROLL_KERNEL_BEGIN\n";
  for (std::size_t k = 1; k < stages; ++k) s << "KPERF_ROLL_DECLARE(" << k << ")\n";
  s << "KPERF_ROLL_DECLARE_LAST(" << n << ")\nKPERF_ROLL_STEP_BEGIN\n";
  for (std::size_t k = 1; k < stages; ++k)
    s << "KPERF_ROLL_MIDDLE(" << k << ", kperf_roll_mine_" << k - 1 << ")\n";
  s << "KPERF_ROLL_LAST(" << n << ", kperf_roll_mine_" << stages - 1
    << ")\nKPERF_ROLL_KERNEL_END\n";
}

}  // namespace

FusedProgram fused_program(const std::vector<PipelineStage>& chain, const std::string& kernel_root,
                           const AppParams& params, const std::string& extra_options) {
  const WorkGroup launch = chain.back().wg;
  const PrecisionDescriptor* precision = chain_precision(chain);
  const int rows = fuse_rows(chain);
  Variant input = chain.front().variant;
  input.precision = precision;
  FusedProgram p;
  p.options = "-cl-std=CL1.2 -I " + (fs::path(kernel_root) / "schemes").string() + " -I " +
              (fs::path(kernel_root) / "kernels").string() + " " + input.build_options() +
              " -DWG_X=" + std::to_string(launch.x) + " -DWG_Y=" + std::to_string(launch.y);
  // The design: the rolling design's strip height, where it is the one.
  if (rows) p.options += " -DKPERF_FUSE_ROWS=" + std::to_string(rows);
  // Every stage's kernel axes and app parameters, each -D once (fused_chain_problem refuses two
  // values of one).
  std::map<std::string, std::string> seen = defines_of(p.options);
  for (const PipelineStage& st : chain)
    for (const auto& [name, value] : defines_of(stage_options(st, params)))
      if (seen.emplace(name, value).second) p.options += " -D" + name + "=" + value;
  if (!extra_options.empty()) p.options += " " + extra_options;
  const std::map<std::string, std::string> defined = defines_of(p.options);

  std::ostringstream s;
  s << "// kperf fused chain" << (rows ? " (rolling strips)" : "") << ":";
  for (const PipelineStage& st : chain) s << " " << st.app->name << " (" << st.variant.id() << ")";
  s << ", launched at " << wg_label(launch.x, launch.y, launch.vec, launch.py) << "\n"
    << "#define KPERF_FUSE_STAGES " << chain.size() << "\n"
    << "#define KPERF_FUSE_LAUNCH_VEC " << launch.vec << "\n"
    << "#define KPERF_FUSE_LAUNCH_PY " << launch.py << "\n"
    << "#define KPERF_FUSE_HALO_0 " << fused_tile_halo(chain) << "\n";
  for (std::size_t k = 0; k + 1 < chain.size(); ++k)
    s << "#define KPERF_FUSE_HALO_" << k + 1 << " " << halo_after(chain, k) << "\n";
  if (rows)
    s << "#define KPERF_ROLL_BLOCK_X " << rolling_shape(chain).block_x()
      << "\n#include \"fuse_roll.cl\"\n";
  else
    s << "#include \"fuse_contract.cl\"\n";
  for (std::size_t k = 0; k < chain.size(); ++k)
    stage_text(s, chain, k, *precision, kernel_root, defined);
  kernel_text(s, chain.size(), rows > 0);
  p.source = s.str();
  return p;
}

}  // namespace kperf
