// What the measuring core measures: a chain of stages, each an app at a variant and launch shape,
// each stage's output the next one's input on the device. A configuration of kperf run and kperf
// tune is a chain of one; kperf pipeline's chains have two or more (docs/pipelines.md). Here:
// their names, keys and labels, and which stages connect.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apps.hpp"
#include "chain_stage.hpp"
#include "schemes.hpp"

namespace kperf {

// Every stage exact (is_exact): the accurate chain, at some launch shapes.
bool exact_chain(const Chain& chain);

// The chains kperf ships, by name: blur-edges (gaussian5 then sobel3) and denoise-edges (median
// then sobel3).
const std::vector<std::pair<std::string, std::vector<std::string>>>& named_pipelines();

// The apps of a chain given by name or as APP,APP[,...] (built-in or user apps already loaded).
// Throws std::invalid_argument with one line naming the stage: an unknown app, an app that takes no
// image (hotspot) or a second input, or fewer than two stages.
std::vector<const AppDescriptor*> parse_pipeline(const std::string& text);

// "APP:VARIANT@SHAPE".
std::string stage_label(const PipelineStage& s);
// A fused chain's design as keys and labels say it: "fused" (the tile design), "fused-rows:H" (the
// rolling design, strips of H rows); "" for separate launches.
std::string fused_segment(const Chain& chain);
// A chain's label in select blocks and tables: its stages' labels joined by " > ", after "fused: "
// ("fused-rows:H: ") for a fused chain (whose stages' labels are those of the same chain in
// separate launches).
std::string chain_label(const Chain& chain);
// A chain's identity on one input: "PIPELINE[/fused|/fused-rows:H]/STAGE > STAGE/INPUT/WxH", each
// stage app:variant@shape. Rows, the fault journal and KPERF_FAULT know a chain by it.
std::string chain_key(const std::string& pipeline, const Chain& chain, const std::string& input,
                      int width, int height);
// A configuration's key (results.hpp's make_key over every axis, shape and input): a chain of
// one's identity in run and tune documents.
std::string config_key(const AppDescriptor& app, const Variant& v, WorkGroup wg,
                       const std::string& input, int width, int height);

// A saved output's file name from its key: '/' as "__", ':' as '-', a chain's " > " as '+', then
// ".npy".
std::string key_to_filename(const std::string& key);
// Writes an output grid as float32 .npy (--save-outputs); throws std::exception where it cannot
// (KPERF_FAULT=save makes every write fail).
void write_output_npy(const std::string& file, std::vector<float> values, int width, int height);

// Why a stage reading `next` cannot take the device output of a stage under `prev`: the stored
// types differ (the intermediate buffer is one type: prev's output, next's input), or `next` reads
// its input from the host (host perforation) or as an image. Nothing when they connect.
std::optional<std::string> stage_link_problem(const Variant& prev, const Variant& next);

// The storage type of the buffer between a stage under `prev` and the next one.
const StorageType& intermediate_type(const Variant& prev);

// "stage K (APP): " for stage k (0-based) of a chain of two or more, "" for a chain of one: what
// a chain's reasons begin with, so that a row says which stage failed.
std::string stage_prefix(const Chain& chain, int k);
// The same for stage k of `stages` stages, of app `app`.
std::string stage_prefix(std::size_t stages, std::size_t k, const AppDescriptor& app);

}  // namespace kperf
