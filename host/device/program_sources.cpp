// The files a program reads, and the ledger of a command's builds (see program_sources.hpp).
#include "program_sources.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "compile_workers.hpp"
#include "io.hpp"
#include "sha256.hpp"

namespace fs = std::filesystem;

namespace kperf {

namespace {

constexpr const char* kLedgerVariable = "KPERF_SOURCES_LEDGER";

// One line of a file that matters here: an object-like #define, or an #include of a quoted or
// bracketed name (`target`) or of a macro expression (`expression`).
struct Directive {
  bool include = false;
  std::string name, value;         // a #define
  std::string target, expression;  // an #include
};

struct ParsedFile {
  std::string sha256;
  std::vector<Directive> directives;
};

std::string trimmed(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

ParsedFile parse(const std::string& text) {
  ParsedFile out{sha256_hex(text), {}};
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string rest = trimmed(line);
    if (rest.empty() || rest[0] != '#') continue;
    rest = trimmed(rest.substr(1));
    Directive d;
    if (rest.rfind("include", 0) == 0) {
      rest = trimmed(rest.substr(7));
      d.include = true;
      if (!rest.empty() && (rest[0] == '"' || rest[0] == '<')) {
        const auto end = rest.find(rest[0] == '"' ? '"' : '>', 1);
        if (end == std::string::npos) continue;
        d.target = rest.substr(1, end - 1);
      } else {
        d.expression = rest.substr(0, rest.find("//"));
      }
    } else if (rest.rfind("define", 0) == 0 && rest.size() > 6 && std::isspace(rest[6])) {
      rest = trimmed(rest.substr(6));
      std::size_t n = 0;
      while (n < rest.size() &&
             (std::isalnum(static_cast<unsigned char>(rest[n])) || rest[n] == '_'))
        ++n;
      if (n == 0 || (n < rest.size() && rest[n] == '(')) continue;  // function-like
      d.name = rest.substr(0, n);
      d.value = trimmed(rest.substr(n).substr(0, rest.substr(n).find("//")));
    } else {
      continue;
    }
    out.directives.push_back(std::move(d));
  }
  return out;
}

std::vector<std::string> identifiers(const std::string& expression) {
  std::vector<std::string> out;
  std::string word;
  for (char c : expression + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word.push_back(c);
    } else {
      if (!word.empty() && !std::isdigit(static_cast<unsigned char>(word[0]))) out.push_back(word);
      word.clear();
    }
  }
  return out;
}

// The file name a macro expression such as KPERF_STR(KPERF_LOAD_FILE) stands for: the value of
// its first identifier defined as an object-like macro, through macros naming macros.
std::string expand(const std::string& expression,
                   const std::map<std::string, std::string>& macros) {
  for (const std::string& id : identifiers(expression)) {
    auto it = macros.find(id);
    if (it == macros.end()) continue;
    std::string value = it->second;
    for (int depth = 0; depth < 8; ++depth) {
      const auto next = macros.find(value);
      if (next == macros.end()) break;
      value = next->second;
    }
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    if (!value.empty()) return value;
  }
  return "";
}

struct BuildSetting {
  std::vector<fs::path> include_dirs;
  std::map<std::string, std::string> macros;  // -D NAME[=VALUE]
};

BuildSetting parse_options(const std::string& options) {
  BuildSetting out;
  std::istringstream in(options);
  std::string word;
  while (in >> word) {
    std::string arg;
    if (word == "-I" || word == "-D") {
      if (!(in >> arg)) break;
    } else if (word.rfind("-I", 0) == 0 || word.rfind("-D", 0) == 0) {
      arg = word.substr(2);
    } else {
      continue;
    }
    if (word[1] == 'I') {
      out.include_dirs.push_back(fs::absolute(arg).lexically_normal());
    } else {
      const auto eq = arg.find('=');
      out.macros.emplace(arg.substr(0, eq), eq == std::string::npos ? "1" : arg.substr(eq + 1));
    }
  }
  return out;
}

// The files read so far by this process, parsed once each (kperf's sources do not change during
// a run: the resume fingerprint and the binary cache rely on that too).
class SourceFiles {
 public:
  const ParsedFile* file(const fs::path& path) {
    auto it = files_.find(path.string());
    if (it == files_.end()) {
      std::error_code ec;
      if (!fs::is_regular_file(path, ec)) return nullptr;
      it = files_.emplace(path.string(), parse(read_file(path.string()))).first;
    }
    return &it->second;
  }
  const ParsedFile& text(const std::string& source) {
    auto it = texts_.find(source);
    if (it == texts_.end()) it = texts_.emplace(source, parse(source)).first;
    return it->second;
  }

 private:
  std::unordered_map<std::string, ParsedFile> files_, texts_;
};

void walk(SourceFiles& files, const ParsedFile& file, const fs::path& folder,
          const BuildSetting& setting, std::map<std::string, std::string>& macros,
          ProgramSources& out) {
  for (const Directive& d : file.directives) {
    if (!d.include) {
      macros.emplace(d.name, d.value);  // a -D option or an earlier #define wins
      continue;
    }
    const std::string name = d.target.empty() ? expand(d.expression, macros) : d.target;
    if (name.empty()) continue;
    std::vector<fs::path> where;
    if (!folder.empty()) where.push_back(folder);
    where.insert(where.end(), setting.include_dirs.begin(), setting.include_dirs.end());
    for (const fs::path& dir : where) {
      const fs::path path = fs::absolute(dir / name).lexically_normal();
      if (out.includes.count(path.string())) break;
      if (const ParsedFile* included = files.file(path)) {
        out.includes.emplace(path.string(), included->sha256);
        walk(files, *included, path.parent_path(), setting, macros, out);
        break;
      }
    }
  }
}

std::mutex& ledger_mutex() {
  static std::mutex m;
  return m;
}

SourceFiles& source_files() {
  static SourceFiles files;
  return files;
}

std::string ledger_line(const ProgramSources& p) {
  const nlohmann::json line = {
      {"source", p.source_sha256}, {"options", p.options}, {"includes", p.includes}};
  return line.dump() + "\n";
}

// $KPERF_DUMP_PROGRAMS: the text as DIR/<SHA-256>.cl, once per process (under the ledger's
// lock), written beside and renamed: processes writing one text at once never leave half a file.
void dump_program(const std::string& source, const std::string& sha256) {
  static const std::string dir = [] {
    const char* d = std::getenv("KPERF_DUMP_PROGRAMS");
    return std::string(d ? d : "");
  }();
  static std::set<std::string> dumped;
  if (dir.empty() || !dumped.insert(sha256).second) return;
  try {
    fs::create_directories(dir);
    write_file_atomic(dir + "/" + sha256 + ".cl", source);
  } catch (const std::exception& e) {
    static bool warned = false;
    if (!warned) std::fprintf(stderr, "warning: KPERF_DUMP_PROGRAMS: %s\n", e.what());
    warned = true;
  }
}

}  // namespace

ProgramSources program_sources(const std::string& source, const std::string& options) {
  std::lock_guard<std::mutex> lock(ledger_mutex());
  const BuildSetting setting = parse_options(options);
  const ParsedFile& top = source_files().text(source);
  ProgramSources out{top.sha256, {}, options};
  std::map<std::string, std::string> macros = setting.macros;
  walk(source_files(), top, fs::path(), setting, macros, out);
  return out;
}

const std::string& program_sources_ledger() {
  static const std::string path = [] {
    const char* inherited = std::getenv(kLedgerVariable);
    if (inherited && *inherited) return std::string(inherited);
    std::string own;
    try {
      own = scratch_dir() + "/built-sources.jsonl";
    } catch (const std::exception&) {
      return own;  // no scratch directory: no ledger, each process lists what it built
    }
    ::setenv(kLedgerVariable, own.c_str(), 1);
    return own;
  }();
  return path;
}

void forget_inherited_sources_ledger() { ::unsetenv(kLedgerVariable); }

void record_program_sources(const std::string& source, const std::string& options) {
  const ProgramSources p = program_sources(source, options);
  const std::string line = ledger_line(p);
  std::lock_guard<std::mutex> lock(ledger_mutex());
  dump_program(source, p.source_sha256);
  static std::set<std::string> written;
  if (!written.insert(line).second) return;
  // One write() of the whole line with O_APPEND: lines from several processes do not interleave.
  const int fd = ::open(program_sources_ledger().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd < 0) return;  // no ledger: the document lists this process's sources only
  const ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

std::vector<ProgramSources> recorded_program_sources() {
  std::lock_guard<std::mutex> lock(ledger_mutex());
  std::set<std::string> seen;
  std::vector<ProgramSources> out;
  std::error_code ec;
  std::istringstream in(fs::is_regular_file(program_sources_ledger(), ec)
                            ? read_file(program_sources_ledger())
                            : std::string());
  std::string line;
  while (std::getline(in, line)) {
    if (!seen.insert(line).second) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      out.push_back({j.at("source").get<std::string>(),
                     j.at("includes").get<std::map<std::string, std::string>>(),
                     j.at("options").get<std::string>()});
    } catch (const nlohmann::json::exception&) {
      // a line cut short by a process that died writing it: its program is on another line or
      // was never built
    }
  }
  return out;
}

std::string sources_sha256(const std::map<std::string, std::string>& sources) {
  Sha256 hash;
  for (const auto& [path, sha] : sources) hash.update(sha + "  " + path + "\n");
  return hash.hex();
}

std::string builds_sha256(const std::map<std::string, std::string>& sources,
                          const std::set<std::pair<std::string, std::string>>& builds) {
  Sha256 hash;
  for (const auto& [path, sha] : sources) hash.update(sha + "  " + path + "\n");
  for (const auto& [source, options] : builds) hash.update(source + "  " + options + "\n");
  return hash.hex();
}

}  // namespace kperf
