// wheelspec adapter kit for C++, the optional real-time part: for a timer that runs on the wall
// clock and has no virtual clock to advance (docs/guides/ADAPTERS.md, "Real-time mode"). You write an
// RtTimer (add with a callback, cancel, size, stop); wheelspec::serve_realtime speaks the rt_run
// extension:
//
//   {"id":0,"type":"hello",...}  -> capabilities with "time":"real" and your profile and tick
//   {"id":n,"type":"rt_run","tick_ms":T,"wheel_size":W,"run_ms":R,
//    "ops":[{"at":MS,"kind":"add","task":ID,"delay":MS} | {"at":MS,"kind":"cancel","task":ID} | {"at":MS,"kind":"size"}]}
//     -> {"id":n,"ok":true,"ops":[{"t_us":..,"result":..},...],"fires":[{"task":ID,"seq":K,"t_us":..},...],"unfired":N}
//   {"id":n,"type":"bye"} -> {"id":n,"ok":true}
//
// A fresh timer from your factory runs each schedule. Every op runs at its "at" (ms after the
// run's start) and is stamped in this process with std::chrono::steady_clock (microseconds since
// the start), so the pipe adds no noise; an add is stamped *before* your add is called, so a fire
// before stamp + delay is really early. "seq" numbers the adds of the run: a fire names the add
// that scheduled it. A re-add of a task id first cancels its earlier handle (Kafka's entry
// replacement; the add's result is that cancel's answer, null if there was none). A cancel's
// result is your cancel(handle); a task id never added answers false. At run_ms your stop() says
// how many tasks the timer still held. The layer only translates task ids into your handles.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "wheelspec_adapter.hpp"

namespace wheelspec {

// What you fill in for real time: your wall-clock timer, fresh for each schedule. `action` may be
// called on any thread of yours; it is cheap and thread-safe (it stamps the fire and queues it).
class RtTimer {
public:
    virtual ~RtTimer() = default;
    // Run `action` once, `delay_ms` from now (0 or negative: due now); return your handle for it.
    virtual int64_t add(int64_t delay_ms, std::function<void()> action) = 0;
    // True iff the task of `handle` was scheduled and will now never run.
    virtual bool cancel(int64_t handle) = 0;
    // The number of tasks your timer holds (not judged in real time).
    virtual int64_t size() = 0;
    // Stop at the run's end: no action runs after it returns. How many tasks it still held.
    virtual int64_t stop() = 0;
};

// A schedule's timer parameters, from the rt_run request.
struct RtConfig {
    int64_t tick_ms = 1, wheel_size = 512;
};

// What a real-time hello answers: profile "strict" (never early) or "kafka"; tick_ms the
// resolution lateness is judged at; wheel_size your wheel's buckets, if it has a fixed number.
struct RtInfo {
    std::string name, version = "0";
    std::string profile = "strict";
    int64_t tick_ms = 1;
    std::optional<int64_t> wheel_size;
    std::vector<std::string> configurable;
};

namespace detail {

// The fires of one run, written by your timer's threads, read when the run ends. Shared with
// the actions, so an action your stop() lets slip out still writes somewhere that exists.
struct RtFires {
    std::mutex mu;
    std::vector<std::string> json;  // {"task":..,"seq":..,"t_us":..}, in the order they came
};

inline std::string rt_run(const Json& req, const std::function<std::unique_ptr<RtTimer>(const RtConfig&)>& make) {
    using std::chrono::duration_cast;
    using std::chrono::microseconds;
    using std::chrono::milliseconds;
    using std::chrono::steady_clock;

    int64_t run_ms = integer(req, "run_ms");
    RtConfig config;
    if (req.get("tick_ms")) config.tick_ms = integer(req, "tick_ms");
    if (req.get("wheel_size")) config.wheel_size = integer(req, "wheel_size");
    const Json* ops = req.get("ops");
    if (!ops || ops->kind != Json::Array) throw Refusal("invalid", "rt_run: ops must be a list");

    std::unique_ptr<RtTimer> timer = make(config);
    auto fires = std::make_shared<RtFires>();
    std::map<int64_t, int64_t> live;  // task id -> your handle of its latest add
    std::string out = "\"ok\":true,\"ops\":[";
    const steady_clock::time_point t0 = steady_clock::now();
    auto since_start_us = [t0] { return duration_cast<microseconds>(steady_clock::now() - t0).count(); };
    int64_t seq = 0;
    for (size_t i = 0; i < ops->a.size(); ++i) {
        const Json& op = ops->a[i];
        std::string where = "rt_run: op " + std::to_string(i);
        if (op.kind != Json::Object) throw Refusal("invalid", where + " is not an object");
        std::this_thread::sleep_until(t0 + milliseconds(integer(op, "at")));
        const Json* kind_field = op.get("kind");
        std::string kind = kind_field && kind_field->kind == Json::String ? kind_field->s : "";
        std::string result;
        int64_t stamp;
        if (kind == "add") {
            int64_t task = integer(op, "task"), delay = integer(op, "delay");
            result = "null";
            if (auto old = live.find(task); old != live.end()) {
                result = timer->cancel(old->second) ? "true" : "false";
                live.erase(old);
            }
            int64_t s = seq++;
            stamp = since_start_us();  // before the add: your timer computes its deadline after it
            live[task] = timer->add(delay, [fires, task, s, since_start_us] {
                std::string fire = "{\"task\":" + std::to_string(task) + ",\"seq\":" + std::to_string(s) +
                                   ",\"t_us\":" + std::to_string(since_start_us()) + "}";
                std::lock_guard<std::mutex> lock(fires->mu);
                fires->json.push_back(std::move(fire));
            });
        } else if (kind == "cancel") {
            int64_t task = integer(op, "task");
            stamp = since_start_us();
            auto held = live.find(task);
            result = held != live.end() && timer->cancel(held->second) ? "true" : "false";
        } else if (kind == "size") {
            stamp = since_start_us();
            result = std::to_string(timer->size());
        } else {
            throw Refusal("invalid", where + ": unknown kind " + quote(kind));
        }
        out += (i ? ",{\"t_us\":" : "{\"t_us\":") + std::to_string(stamp) + ",\"result\":" + result + "}";
    }
    std::this_thread::sleep_until(t0 + milliseconds(run_ms));
    int64_t unfired = timer->stop();
    out += "],\"fires\":[";
    {
        std::lock_guard<std::mutex> lock(fires->mu);
        for (size_t k = 0; k < fires->json.size(); ++k) out += (k ? "," : "") + fires->json[k];
    }
    return out + "],\"unfired\":" + std::to_string(unfired);
}

}  // namespace detail

// Answer hello, rt_run and bye requests from stdin until bye or end of input; `make` is called
// for every rt_run and returns a fresh timer.
inline int serve_realtime(const RtInfo& info, std::function<std::unique_ptr<RtTimer>(const RtConfig&)> make) {
    return serve_lines([&info, &make](const Json& req, bool& bye) -> std::string {
        const Json* type = req.get("type");
        std::string t = type && type->kind == Json::String ? type->s : "";
        if (t == "hello") {
            int64_t protocol = 1;  // 2 if the runner offers it in "protocols"
            if (const Json* offered = req.get("protocols"); offered && offered->kind == Json::Array)
                for (const Json& v : offered->a)
                    if (v.kind == Json::Int && v.i == 2) protocol = 2;
            std::string caps = "{\"timer\":true,\"purgatory\":false,\"time\":\"real\",\"profile\":" +
                               quote(info.profile) + ",\"tick_ms\":" + std::to_string(info.tick_ms) +
                               ",\"configurable\":[";
            for (size_t k = 0; k < info.configurable.size(); ++k) caps += (k ? "," : "") + quote(info.configurable[k]);
            caps += "]";
            if (info.wheel_size) caps += ",\"wheel_size\":" + std::to_string(*info.wheel_size);
            return "\"ok\":true,\"protocol\":" + std::to_string(protocol) + ",\"name\":" + quote(info.name) +
                   ",\"version\":" + quote(info.version) + ",\"capabilities\":" + caps + "}";
        }
        if (t == "rt_run") return detail::rt_run(req, make);
        if (t == "bye") {
            bye = true;
            return "\"ok\":true";
        }
        throw Refusal("invalid", "unknown request type " + quote(t) +
                                     " (a real-time adapter answers hello, rt_run, bye)");
    });
}

}  // namespace wheelspec
