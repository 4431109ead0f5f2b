#pragma once
// Per-link traffic accounting shared by the network backends: bytes carried, busy time (some transfer
// on the link) and bytes per traffic label (the communicator that sent them), for the bottleneck
// report: which links are hot, for how long, and what used them.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace clustersim {

class LinkUsage {
 public:
  explicit LinkUsage(std::size_t links)
      : bytes_(links, 0.0), busy_s_(links, 0.0), active_(links, 0), since_(links, 0.0) {
    set_label(0);
  }

  // The label of the transfers started from now on (the replay sets the communicator's index).
  void set_label(std::uint16_t label) {
    if (by_label_.size() <= label) by_label_.resize(std::size_t{label} + 1);
    if (by_label_[label].empty()) by_label_[label].assign(bytes_.size(), 0.0);
    label_ = label;
  }

  // A transfer of `bytes` starts on `route` at `now_s`: its bytes count now; links become busy.
  void start(std::span<const int> route, double bytes, double now_s) {
    for (int l : route) {
      const auto i = static_cast<std::size_t>(l);
      bytes_[i] += bytes;
      by_label_[label_][i] += bytes;
      if (active_[i]++ == 0) since_[i] = now_s;
    }
  }
  // A transfer on `route` ends at `now_s`: a link stops being busy when its last transfer ends.
  void finish(std::span<const int> route, double now_s) {
    for (int l : route) {
      const auto i = static_cast<std::size_t>(l);
      if (--active_[i] == 0) busy_s_[i] += now_s - since_[i];
    }
  }

  // Transfers in flight per link (the load adaptive routing reads).
  std::span<const int> active() const { return active_; }
  const std::vector<double>& bytes() const { return bytes_; }
  const std::vector<double>& busy_s() const { return busy_s_; }
  // [label][link] -> bytes (an empty vector for a label that never sent).
  const std::vector<std::vector<double>>& bytes_by_label() const { return by_label_; }

 private:
  std::vector<double> bytes_;
  std::vector<double> busy_s_;
  std::vector<int> active_;
  std::vector<double> since_;
  std::vector<std::vector<double>> by_label_;
  std::uint16_t label_ = 0;
};

}  // namespace clustersim
