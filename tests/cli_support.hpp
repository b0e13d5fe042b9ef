// Running the built kperf binary from a test: its exit status, stdout and stderr, and the keys of
// the document it wrote.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "gzip.hpp"
#include "io.hpp"
#include "test_support.hpp"

namespace kperf::test {

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

// `kperf ARGS` in the shell, with `env_prefix` (VAR=value ...) before it; its output files in
// `dir`.
inline CliRun kperf_cli(const std::string& args, const TempDir& dir,
                        const std::string& env_prefix = "") {
  const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
  const std::string cmd =
      env_prefix + " " + KPERF_TEST_BINARY + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

// Exactly one line, ending in a newline.
inline bool one_line(const std::string& s) {
  return !s.empty() && s.back() == '\n' && s.find('\n') == s.size() - 1;
}

struct BadCase {
  const char* args;
  const char* expect;  // substring of the one stderr line
};

// The keys of a result document (each once; an ok row has its samples), and whether it is
// complete. A .gz document must be gzip.
inline std::set<std::string> result_keys(const std::filesystem::path& file,
                                         bool* complete = nullptr) {
  if (file.extension() == ".gz") EXPECT_TRUE(is_gzip(read_file(file.string()))) << file;
  const auto doc = nlohmann::json::parse(read_document(file.string()));
  std::set<std::string> keys;
  for (const auto& row : doc.at("results")) {
    EXPECT_TRUE(keys.insert(row.at("key").get<std::string>()).second) << "duplicate " << row["key"];
    if (row.at("status") == "ok") EXPECT_FALSE(row.at("samples_ns").empty()) << row["key"];
  }
  if (complete) *complete = doc.at("context").at("complete").get<bool>();
  return keys;
}

}  // namespace kperf::test
