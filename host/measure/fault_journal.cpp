// The measuring process's journal (see fault_journal.hpp): events appended to a file the
// supervisor reads after this process ends, however it ends.
#include "fault_journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "gzip.hpp"

namespace kperf {

namespace {

struct Journal {
  int events_fd = -1;
  std::vector<nlohmann::json> rows, workload_faults;
  std::string stop;
  int restarts = 0;
  bool skip_prebuild = false;
};

Journal& journal() {
  static Journal j;
  return j;
}

// One line to the events file, whole: the supervisor reads it after this process is gone.
void append_event(const nlohmann::ordered_json& event) {
  const int fd = journal().events_fd;
  if (fd < 0) return;
  const std::string line = event.dump() + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the supervisor will see a truncated line and ignore it
    done += static_cast<std::size_t>(n);
  }
}

bool fields_match(const nlohmann::json& row, const nlohmann::ordered_json& fields) {
  for (auto it = fields.begin(); it != fields.end(); ++it)
    if (!row.contains(it.key()) || row[it.key()].dump() != it.value().dump()) return false;
  return true;
}

}  // namespace

void init_journal_from_environment() {
  Journal& j = journal();
  if (const char* events = std::getenv("KPERF_JOURNAL_EVENTS"); events && *events)
    j.events_fd = ::open(events, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (const char* path = std::getenv("KPERF_JOURNAL"); path && *path) {
    const nlohmann::json doc = nlohmann::json::parse(read_document(path));
    for (const auto& row : doc.at("rows")) j.rows.push_back(row);
    for (const auto& w : doc.value("workload_faults", nlohmann::json::array()))
      j.workload_faults.push_back(w);
    j.stop = doc.value("stop", std::string());
    j.restarts = doc.value("restarts", 0);
    j.skip_prebuild = doc.value("skip_prebuild", false);
  }
  ::unsetenv("KPERF_JOURNAL_EVENTS");
  ::unsetenv("KPERF_JOURNAL");
}

bool supervised() { return journal().events_fd >= 0; }

void journal_begin(const nlohmann::ordered_json& row, const char* phase) {
  append_event({{"begin", row}, {"phase", phase}});
}

void journal_end() { append_event({{"end", true}}); }

void journal_row(const nlohmann::ordered_json& row) { append_event({{"row", row}}); }

void journal_begin_workload(const nlohmann::ordered_json& workload, const char* phase) {
  append_event({{"begin_workload", workload}, {"phase", phase}});
}

void journal_begin_prebuild(std::size_t programs) { append_event({{"begin_prebuild", programs}}); }

bool journal_skip_prebuild() { return journal().skip_prebuild; }

void journal_workload_fault(const nlohmann::ordered_json& workload) {
  append_event({{"workload_fault", workload}});
}

std::optional<std::string> journaled_workload_fault(const nlohmann::ordered_json& workload) {
  for (const auto& w : journal().workload_faults)
    if (fields_match(w, workload)) return w.value("reason", std::string());
  return std::nullopt;
}

const std::vector<nlohmann::json>& journal_rows() { return journal().rows; }

std::optional<nlohmann::json> journaled_row(const std::string& key,
                                            const nlohmann::ordered_json& fields) {
  for (const auto& row : journal().rows)
    if (row.value("key", std::string()) == key && fields_match(row, fields)) return row;
  return std::nullopt;
}

std::optional<nlohmann::json> journaled_fault(const std::string& key,
                                              const nlohmann::ordered_json& fields) {
  for (const auto& row : journal().rows)
    if (row.value("status", std::string()) == "device_fault" &&
        row.value("key", std::string()) == key && fields_match(row, fields))
      return row;
  return std::nullopt;
}

const std::string& journal_stop() { return journal().stop; }

int journal_restarts() { return journal().restarts; }

void exit_for_restart() {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(kExitRestart);
}

}  // namespace kperf
