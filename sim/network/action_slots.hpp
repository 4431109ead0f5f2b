#pragma once
// The pending actions of a network backend's event queue, kept in reusable slots: an event carries its
// slot's index instead of the std::function itself, so the queue moves small values and scheduling
// allocates nothing once the pool holds as many actions as were ever pending at once.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace clustersim {

class ActionSlots {
 public:
  // Keeps `action` and returns its slot.
  std::uint32_t put(std::function<void()> action) {
    if (free_.empty()) {
      actions_.push_back(std::move(action));
      return static_cast<std::uint32_t>(actions_.size() - 1);
    }
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    actions_[slot] = std::move(action);
    return slot;
  }

  // Takes the action out of `slot`, which is free again, to run it.
  std::function<void()> take(std::uint32_t slot) {
    std::function<void()> action = std::move(actions_[slot]);
    free_.push_back(slot);
    return action;
  }

 private:
  std::vector<std::function<void()>> actions_;
  std::vector<std::uint32_t> free_;  // slots of actions_ not in use
};

}  // namespace clustersim
