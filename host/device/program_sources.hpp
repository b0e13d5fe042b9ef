// The files each program a run builds reads, for the provenance of its documents
// (context.sources and context.builds, SPEC section 15): the text handed to the compiler, the
// options it got, and every file its #include lines name, each by the SHA-256 of its contents.
// Every process of one command (the measuring children of a supervisor, a tune's stage workers)
// appends what it built to one ledger, so that the document lists what the whole run built, not
// only what its last process did.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kperf {

struct ProgramSources {
  std::string source_sha256;                    // the SHA-256 of the source text built
  std::map<std::string, std::string> includes;  // absolute path -> SHA-256 of its contents
  // The build options as the compiler got them, the device's defines (ClEnv's build_defines)
  // included: the same text under other options is another program.
  std::string options;
};

// The files `source` includes when built with `options` (which it keeps), as the preprocessor
// finds them: every `#include "F"`, `#include <F>` and `#include MACRO(NAME)` (NAME a -D option or
// an object-like #define met before it, the -D option first), depth first, each file once,
// whatever #if surrounds the line (where conditions leave a file out it is listed all the same).
// A name is looked up in the including file's folder, then in the -I folders in order; one found
// nowhere is left out (the build failed on it).
ProgramSources program_sources(const std::string& source, const std::string& options);

// Appends what `source` built with `options` reads, and the options, to the ledger (ClEnv::build
// calls it for every pair it builds, a failed build included, with the options it handed the
// compiler); the same pair twice is written once. Under $KPERF_DUMP_PROGRAMS=DIR the text is also
// written to DIR/<its SHA-256>.cl, so that a text no file holds (a fused chain's) can be read
// and hashed again.
void record_program_sources(const std::string& source, const std::string& options);

// What every process of this command recorded, each distinct program and options once.
std::vector<ProgramSources> recorded_program_sources();

// The ledger's path: $KPERF_SOURCES_LEDGER, else a file in the scratch directory (which a
// supervisor's children share), exported to the environment so that the processes this one
// starts append to it too. ClEnv's constructor calls it before any worker exists.
const std::string& program_sources_ledger();

// A command's own process forgets a ledger it inherited (a test that built programs itself and
// runs kperf, say): the ledger belongs to one command and the processes it starts.
void forget_inherited_sources_ledger();

// context.sources_sha256: the SHA-256 of the lines "<SHA-256 of the contents>  <path>\n" in
// path order, as `sha256sum FILE... | sha256sum` prints it for the files sorted by path.
std::string sources_sha256(const std::map<std::string, std::string>& sources);

// context.builds_sha256: the SHA-256 of the lines sources_sha256 hashes, then one line
// "<source>  <options>\n" per build (`builds`: the source's name in `sources`, and its options),
// in the set's order (by source, then options). Unlike sources_sha256 it changes with the options
// (--cl-options, an app's parameters, the device's defines) and with which texts were built.
std::string builds_sha256(const std::map<std::string, std::string>& sources,
                          const std::set<std::pair<std::string, std::string>>& builds);

}  // namespace kperf
