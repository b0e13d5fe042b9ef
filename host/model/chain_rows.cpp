// Chain rows (chain_rows.hpp): their JSON both ways, in the order the documents have always had.
#include "chain_rows.hpp"

#include <cmath>

#include "results.hpp"

namespace kperf {

namespace {

nlohmann::ordered_json stage_json(const StageRow& s) {
  nlohmann::ordered_json j = {{"app", s.app},
                              {"variant", s.variant},
                              {"family", s.family},
                              {"wg", s.wg},
                              {"precision", s.precision},
                              {"metric", s.metric},
                              {"reference", s.reference}};
  if (s.time) j["time_ns"] = stats_json(*s.time);
  if (s.error) j["error"] = number_or_null(*s.error);
  if (s.errors) j["errors"] = to_json(*s.errors);
  if (!s.build_log.empty()) j["build_log"] = s.build_log;
  if (!s.output_file.empty()) j["output_file"] = s.output_file;
  return j;
}

StageRow stage_from_json(const nlohmann::json& j) {
  StageRow s;
  s.app = j.at("app").get<std::string>();
  s.variant = j.at("variant").get<std::string>();
  s.family = j.value("family", std::string());
  s.wg = j.at("wg").get<std::string>();
  s.precision = j.value("precision", std::string("f32"));
  s.metric = j.value("metric", std::string());
  s.reference = j.value("reference", std::string());
  if (j.contains("time_ns")) s.time = stats_from_json(j.at("time_ns"));
  if (j.contains("error")) s.error = read_number(j.at("error"));
  if (j.contains("errors")) s.errors = errors_from_json(j.at("errors"));
  s.build_log = j.value("build_log", std::string());
  s.output_file = j.value("output_file", std::string());
  return s;
}

}  // namespace

nlohmann::ordered_json to_json(const ChainRow& r) {
  nlohmann::ordered_json row = {
      {"key", r.key},
      {"pipeline", r.pipeline},
      {"input", {{"name", r.input_name}, {"width", r.width}, {"height", r.height}}},
      {"status", status_name(r.status)},
      {"fused", r.fused},
      {"exact", r.exact}};
  if (r.fuse_rows) row["fuse_rows"] = r.fuse_rows;
  if (!r.stage.empty()) row["stage"] = r.stage;
  if (r.round) row["round"] = *r.round;
  if (!r.ok()) row["reason"] = r.reason;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageRow& s : r.stages) stages.push_back(stage_json(s));
  row["stages"] = std::move(stages);
  row["intermediate"] = r.intermediate;
  if (r.time) {
    row["time_ns"] = stats_json(*r.time);
    row["samples_ns"] = r.samples_ns;
  }
  if (r.final_error) row["final_error"] = number_or_null(*r.final_error);
  if (!r.output_file.empty()) row["output_file"] = r.output_file;
  if (r.accurate_time_ns) row["accurate_time_ns"] = *r.accurate_time_ns;
  if (r.speedup) row["speedup"] = number_or_null(*r.speedup);
  return row;
}

ChainRow chain_row_from_json(const nlohmann::json& j) {
  ChainRow r;
  r.key = j.at("key").get<std::string>();
  r.pipeline = j.at("pipeline").get<std::string>();
  r.input_name = j.at("input").at("name").get<std::string>();
  r.width = j.at("input").at("width").get<int>();
  r.height = j.at("input").at("height").get<int>();
  r.status = parse_status(j.at("status").get<std::string>());
  r.reason = j.value("reason", std::string());
  r.fused = j.value("fused", false);
  r.fuse_rows = j.value("fuse_rows", 0);
  r.exact = j.value("exact", false);
  r.stage = j.value("stage", std::string());
  if (j.contains("round")) r.round = j.at("round").get<int>();
  for (const auto& s : j.at("stages")) r.stages.push_back(stage_from_json(s));
  r.intermediate = j.value("intermediate", std::vector<std::string>());
  if (j.contains("time_ns")) {
    r.time = stats_from_json(j.at("time_ns"));
    r.samples_ns = j.at("samples_ns").get<std::vector<std::uint64_t>>();
  }
  // A NaN error is written as null; it reads back as NaN, never as a missing value.
  if (j.contains("final_error")) r.final_error = read_number(j.at("final_error"));
  if (j.contains("accurate_time_ns")) r.accurate_time_ns = read_number(j.at("accurate_time_ns"));
  if (j.contains("speedup")) r.speedup = read_number(j.at("speedup"));
  r.output_file = j.value("output_file", std::string());
  return r;
}

}  // namespace kperf
