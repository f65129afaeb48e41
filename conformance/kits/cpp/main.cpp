// Your timer behind the wheelspec protocol. Replace ToyTimer with calls into your own timer; keep
// the five methods of wheelspec::Timer (wheelspec_adapter.hpp).
// Build: g++ -std=c++17 -O2 -o toy-timer main.cpp    Run: ./toy-timer
//
// The toy: a std::priority_queue keyed by (expiration, insertion order). Profile "strict": a task
// fires at the first advance whose time is >= its expiration. Re-adding a scheduled task replaces
// its entry (a sequence number marks the live one; stale entries are skipped when popped).
#include <queue>
#include <tuple>
#include <unordered_map>

#include "wheelspec_adapter.hpp"

class ToyTimer : public wheelspec::Timer {
public:
    explicit ToyTimer(int64_t start_ms) : clock_(start_ms) {}

    int64_t now() const override { return clock_; }

    int64_t add(int64_t task, int64_t delay, const wheelspec::Fire&) override {
        int64_t exp = clock_ + delay;
        live_[task] = ++seq_;
        queue_.push({exp, seq_, task});
        return exp;
    }

    bool cancel(int64_t task, const wheelspec::Fire&) override { return live_.erase(task) > 0; }

    void advance(int64_t time, const wheelspec::Fire& fire) override {
        clock_ = time;
        while (!queue_.empty() && queue_.top().exp <= time) {
            Entry e = queue_.top();
            queue_.pop();
            auto it = live_.find(e.task);
            if (it == live_.end() || it->second != e.seq) continue;  // cancelled or replaced
            live_.erase(it);
            fire(time, e.task, e.exp);
        }
    }

    int64_t size() const override { return static_cast<int64_t>(live_.size()); }

private:
    struct Entry {
        int64_t exp, seq, task;
        // std::priority_queue is a max-heap: "greater" comes out last
        bool operator<(const Entry& o) const { return std::tie(exp, seq) > std::tie(o.exp, o.seq); }
    };
    int64_t clock_;
    int64_t seq_ = 0;
    std::priority_queue<Entry> queue_;
    std::unordered_map<int64_t, int64_t> live_;  // task -> seq of its scheduled entry
};

int main() {
    wheelspec::Info info;
    info.name = "cpp-toy-heap-timer";
    info.version = "0.1";
    info.profile = "strict";
    // info.ranges = wheelspec::Ranges{{1, 4095}};  // delays 1 .. 4095 only (README.md, "Capabilities")
    // info.lateness_ms = 1024;  // a coarse timer's declared granularity (README.md, "Capabilities")
    return wheelspec::serve(info, [](const wheelspec::Config& config) {
        return std::make_unique<ToyTimer>(config.start_ms);
    });
}
