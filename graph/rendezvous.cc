#include "graph/rendezvous.h"

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tapeflow {

uint64_t Rendezvous::incarnation(const Device& device) {
  static const uint64_t process = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  return process ^ (static_cast<uint64_t>(device.type()) << 56) ^ (static_cast<uint64_t>(device.index()) * 0x9E3779B97F4A7C15ull);
}

std::string Rendezvous::create_key(const Device& src, const Device& dst, std::string_view tensor_name,
                                   std::string_view frame_iter) {
  return absl::StrCat(src.name(), ";", absl::StrFormat("%016x", incarnation(src)), ";", dst.name(), ";",
                      std::string(tensor_name), ";", std::string(frame_iter));
}

absl::Status Rendezvous::send(const std::string& key, DeviceTensor value) {
  DoneCallback done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!aborted_.ok()) return aborted_;
    Item& item = table_[key];
    if (item.value) return absl::InternalError(absl::StrCat("[_Send] the key was sent twice: ", key));
    if (!item.waiting) {
      item.value = std::move(value);
      return absl::OkStatus();
    }
    done = std::move(item.waiting);
    table_.erase(key);
  }
  done(absl::OkStatus(), value);
  return absl::OkStatus();
}

void Rendezvous::recv_async(const std::string& key, DoneCallback done) {
  DeviceTensor value;
  absl::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_.ok()) {
      auto it = table_.find(key);
      if (it == table_.end() || !it->second.value) {
        table_[key].waiting = std::move(done);
        return;
      }
      value = std::move(*it->second.value);
      table_.erase(it);
    } else {
      status = aborted_;
    }
  }
  done(status, value);
}

void Rendezvous::start_abort(const absl::Status& status) {
  std::vector<DoneCallback> waiting;
  absl::Status why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!aborted_.ok()) return;
    aborted_ = status.ok() ? absl::AbortedError("[Rendezvous] aborted") : status;
    for (auto& [key, item] : table_)
      if (item.waiting) waiting.push_back(std::move(item.waiting));
    table_.clear();
    why = aborted_;
  }
  for (DoneCallback& done : waiting) done(why, DeviceTensor{});
}

}  // namespace tapeflow
