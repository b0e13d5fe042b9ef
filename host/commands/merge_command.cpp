// kperf merge: its arguments, the merge (session/merge.hpp), the document and its summary.
#include "merge_command.hpp"

#include <cstdio>
#include <iostream>

#include "command_support.hpp"
#include "gzip.hpp"
#include "merge.hpp"

namespace kperf {

int cmd_merge(int argc, char** argv, const std::string& command_line) {
  if (argc >= 2 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help")) {
    std::cout << "usage: kperf merge OUT IN...\n"
                 "Joins the files of kperf run --shard I/N (each shard once, the same fingerprint "
                 "and partition) into OUT, with speedups and best launch shapes recomputed from "
                 "the merged rows within each physical device.\n";
    return 0;
  }
  if (argc < 3)
    throw UsageError("kperf merge needs OUT and the shard files (kperf merge OUT IN...)");
  const std::string out_path = argv[1];
  std::vector<std::string> inputs;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == out_path)
      throw UsageError("kperf merge: OUT " + out_path + " is also an input");
    inputs.push_back(argv[i]);
  }
  const MergedRun merged = merge_shards(inputs, command_line);
  require_writable(out_path);
  write_document_atomic(out_path, merged.doc.dump() + "\n");
  std::cout << summary_table(merged.results);
  std::fprintf(stderr, "merged %zu shards from %zu devices: %zu results written to %s\n",
               merged.shards, merged.devices, merged.results.size(), out_path.c_str());
  return 0;
}

}  // namespace kperf
