#include "distributed/cluster/cluster_spec.h"

#include <cctype>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"

namespace tapeflow::cluster {

namespace {

bool valid_job(std::string_view job) {
  if (job.empty() || !std::isalpha(static_cast<unsigned char>(job[0]))) return false;
  for (char c : job)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// host:port (host may be "[v6]"), port in [0, 65535].
bool valid_address(std::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == address.size()) return false;
  const std::string_view port = address.substr(colon + 1);
  int value = -1;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value < 0 || value > 65535) return false;
  for (char c : address.substr(0, colon))
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == ';' || c == '=') return false;
  return true;
}

std::string describe(const std::map<std::string, std::vector<std::string>>& jobs) {
  std::vector<std::string> parts;
  for (const auto& [job, tasks] : jobs) parts.push_back(absl::StrCat(job, " (", tasks.size(), " tasks)"));
  return parts.empty() ? "no jobs" : absl::StrJoin(parts, ", ");
}

}  // namespace

ClusterSpec::ClusterSpec(std::map<std::string, std::vector<std::string>> jobs, std::source_location loc) {
  for (const auto& [job, tasks] : jobs) {
    if (!valid_job(job))
      throw InvalidArgumentError(absl::StrCat("[ClusterSpec] job name '", job,
                                              "' must start with a letter and hold only letters, digits and '_'"),
                                 loc);
    if (tasks.empty()) throw InvalidArgumentError(absl::StrCat("[ClusterSpec] job '", job, "' has no tasks"), loc);
    for (size_t t = 0; t < tasks.size(); ++t)
      if (!valid_address(tasks[t]))
        throw InvalidArgumentError(absl::StrCat("[ClusterSpec] task ", t, " of job '", job, "' has address '", tasks[t],
                                                "': expected host:port with a port in [0, 65535]"),
                                   loc);
  }
  jobs_ = std::move(jobs);
}

ClusterSpec ClusterSpec::parse(std::string_view text, std::source_location loc) {
  std::map<std::string, std::vector<std::string>> jobs;
  for (absl::string_view part : absl::StrSplit(absl::string_view(text.data(), text.size()), ';', absl::SkipEmpty())) {
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos)
      throw InvalidArgumentError(absl::StrCat("[ClusterSpec] '", part, "' is not job=host:port[,host:port...]"), loc);
    const std::string job(part.substr(0, eq));
    if (jobs.contains(job)) throw InvalidArgumentError(absl::StrCat("[ClusterSpec] job '", job, "' is listed twice"), loc);
    std::vector<std::string>& tasks = jobs[job];
    for (absl::string_view a : absl::StrSplit(part.substr(eq + 1), ',')) tasks.emplace_back(a);
  }
  return ClusterSpec(std::move(jobs), loc);
}

std::string ClusterSpec::to_string() const {
  std::vector<std::string> parts;
  for (const auto& [job, tasks] : jobs_) parts.push_back(absl::StrCat(job, "=", absl::StrJoin(tasks, ",")));
  return absl::StrJoin(parts, ";");
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> out;
  for (const auto& [job, tasks] : jobs_) out.push_back(job);
  return out;
}

int ClusterSpec::num_tasks(const std::string& job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

bool ClusterSpec::has_task(const std::string& job, int task) const { return task >= 0 && task < num_tasks(job); }

const std::string& ClusterSpec::task_address(const std::string& job, int task, std::source_location loc) const {
  if (!has_task(job, task))
    throw InvalidArgumentError(absl::StrCat("[ClusterSpec] no task ", task, " in job '", job, "': the cluster has ",
                                            describe(jobs_)),
                               loc);
  return jobs_.at(job)[static_cast<size_t>(task)];
}

void ClusterSpec::set_task_address(const std::string& job, int task, std::string address, std::source_location loc) {
  (void)task_address(job, task, loc);
  if (!valid_address(address))
    throw InvalidArgumentError(absl::StrCat("[ClusterSpec] address '", address, "' is not host:port"), loc);
  jobs_[job][static_cast<size_t>(task)] = std::move(address);
}

std::string task_name(const std::string& job, int task) { return absl::StrCat("/job:", job, "/replica:0/task:", task); }
std::string task_device_name(const std::string& job, int task) { return absl::StrCat(task_name(job, task), "/device:CPU:0"); }

}  // namespace tapeflow::cluster
