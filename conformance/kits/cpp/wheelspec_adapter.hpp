// wheelspec adapter kit for C++ (C++17, single header, no dependencies): the protocol layer.
//
// wheelspec::serve() speaks wheelspec protocol v2 (docs/guides/PROTOCOL.md, section 10) on stdin/stdout,
// one JSON object per line, or v1 to a runner that offers only v1, and hands every valid timer
// operation to a wheelspec::Timer you write (see main.cpp). It answers every refusal the protocol
// defines before your timer is called: values outside wheelspec's ranges ("range", section 4.4), an
// advance back in time ("invalid"), purgatory operations ("unsupported") and requests it cannot
// decode ("invalid"). A cancel of a task never added since the reset is Kafka's no-op under v2
// (result false, your timer is not called) and "unknown-id" under v1. Throw wheelspec::Refusal from
// your timer to refuse something yourself; any other exception is answered "internal".
//
// Requests are read in order and each is answered, flushed, before the next is read, however many
// wait unread: under v2 the hello declares "pipeline": 64, so the runner may send that many ahead.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace wheelspec {

// wheelspec's ranges (docs/guides/PROTOCOL.md, section 4.4; the Python source is spec/limits.py)
constexpr int64_t kMaxDelay = (int64_t{1} << 40) - 1;
constexpr int64_t kMaxTime = (int64_t{1} << 43) - 1;
constexpr int64_t kMaxId = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxTick = int64_t{1} << 20;
constexpr int64_t kMinWheel = 2;
constexpr int64_t kMaxWheel = int64_t{1} << 16;
constexpr int64_t kMaxPurgeInterval = (int64_t{1} << 31) - 1;

// An error response; `type` is one of the protocol's error types.
struct Refusal : std::runtime_error {
    std::string type;
    Refusal(std::string t, const std::string& message) : std::runtime_error(message), type(std::move(t)) {}
};

// The range helper: `value` if it lies in [lo, hi], else a "range" refusal naming `name`.
inline int64_t in_range(const std::string& name, int64_t value, int64_t lo, int64_t hi) {
    if (value < lo || value > hi) {
        throw Refusal("range", name + " " + std::to_string(value) + " outside [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]");
    }
    return value;
}

// Reports that the timer handed `task` (expiration `exp`) to its action at clock `now`.
using Fire = std::function<void(int64_t now, int64_t task, int64_t exp)>;

// What you fill in: the calls into your timer. Called only with values inside wheelspec's ranges.
class Timer {
public:
    virtual ~Timer() = default;
    virtual int64_t now() const = 0;                                   // the clock reading
    // (re)schedule; returns now + delay. A Refusal thrown here must leave the task's old entry
    // scheduled (decide before you replace it).
    virtual int64_t add(int64_t task, int64_t delay, const Fire& fire) = 0;
    virtual bool cancel(int64_t task, const Fire& fire) = 0;           // true iff a scheduled entry was removed
    virtual void advance(int64_t time, const Fire& fire) = 0;          // move the clock, fire what is due
    virtual int64_t size() const = 0;                                  // the number of scheduled tasks
};

// A reset's configuration (docs/guides/PROTOCOL.md, section 2.2).
struct Config {
    int64_t tick_ms = 1, wheel_size = 20, start_ms = 0, purge_interval = 1000;
};

// A declared range (docs/guides/PROTOCOL.md, section 4.4, "A declared range"): the delays and clock
// readings your timer accepts, inclusive, inside wheelspec's. The hello declares it as
// "ranges": {"delay": [lo, hi], "time": [lo, hi]}; this layer refuses ("range") a delay or an
// advance outside it before your timer is called, and wheelspec reports it once.
struct Ranges {
    std::pair<int64_t, int64_t> delay{-kMaxDelay, kMaxDelay};
    std::pair<int64_t, int64_t> time{0, kMaxTime};
};

// What the hello answers: your timer's name and the capabilities it claims.
struct Info {
    std::string name, version = "0";
    std::string profile = "strict";                         // "strict", "kafka" or "strict-gt"
    std::vector<std::string> configurable = {"start_ms"};   // reset keys your factory honours
    std::optional<int64_t> tick_ms, wheel_size;             // your fixed values, if any
    std::vector<std::string> unobservable;                  // what your adapter cannot read (docs/guides/ADAPTERS.md)
    std::optional<Ranges> ranges;                           // what your timer accepts, if less than wheelspec's
    // a coarse timer's declared granularity in ms (0: none): a task may fire up to lateness_ms after
    // the moment its profile says it must have fired by, and up to earliness_ms before its earliest
    // time; judged as property "granularity" (docs/guides/PROTOCOL.md, section 5, "A declared granularity")
    int64_t lateness_ms = 0, earliness_ms = 0;
};

// How many requests the runner may send ahead under v2 (the line loop answers them in order).
constexpr int64_t kPipeline = 64;

// ---- just enough JSON for the protocol --------------------------------------------------------
struct Json {
    enum Kind { Null, Bool, Int, Double, String, Array, Object } kind = Null;
    bool b = false;
    int64_t i = 0;
    double d = 0;
    std::string s;
    std::vector<Json> a;
    std::map<std::string, Json> o;

    const Json* get(const std::string& key) const {
        if (kind != Object) return nullptr;
        auto it = o.find(key);
        return it == o.end() ? nullptr : &it->second;
    }
};

inline std::string quote(const std::string& v) {
    std::string out = "\"";
    for (char c : v) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

class JsonReader {
public:
    explicit JsonReader(const std::string& text) : s_(text) {}

    Json parse() {
        Json v = value(0);
        space();
        if (p_ != s_.size()) fail("trailing characters");
        return v;
    }

private:
    const std::string& s_;
    size_t p_ = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw Refusal("invalid", "request is not JSON: " + what + " at character " + std::to_string(p_));
    }
    void space() {
        while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\r' || s_[p_] == '\n')) ++p_;
    }
    void expect(char c) {
        if (p_ >= s_.size() || s_[p_] != c) fail(std::string("expected '") + c + "'");
        ++p_;
    }
    bool word(const char* w) {
        size_t n = std::char_traits<char>::length(w);
        if (s_.compare(p_, n, w) != 0) return false;
        p_ += n;
        return true;
    }
    Json value(int depth) {
        if (depth > 64) fail("nested too deeply");
        space();
        if (p_ >= s_.size()) fail("unexpected end");
        Json v;
        char c = s_[p_];
        if (c == '{') {
            v.kind = Json::Object;
            ++p_;
            space();
            if (p_ < s_.size() && s_[p_] == '}') { ++p_; return v; }
            for (;;) {
                space();
                if (p_ >= s_.size() || s_[p_] != '"') fail("expected a key");
                std::string key = string();
                space();
                expect(':');
                v.o[key] = value(depth + 1);
                space();
                if (p_ < s_.size() && s_[p_] == ',') { ++p_; continue; }
                expect('}');
                return v;
            }
        }
        if (c == '[') {
            v.kind = Json::Array;
            ++p_;
            space();
            if (p_ < s_.size() && s_[p_] == ']') { ++p_; return v; }
            for (;;) {
                v.a.push_back(value(depth + 1));
                space();
                if (p_ < s_.size() && s_[p_] == ',') { ++p_; continue; }
                expect(']');
                return v;
            }
        }
        if (c == '"') { v.kind = Json::String; v.s = string(); return v; }
        if (word("true")) { v.kind = Json::Bool; v.b = true; return v; }
        if (word("false")) { v.kind = Json::Bool; return v; }
        if (word("null")) return v;
        return number();
    }
    std::string string() {
        std::string out;
        ++p_;  // the opening quote
        for (;;) {
            if (p_ >= s_.size()) fail("unterminated string");
            char c = s_[p_++];
            if (c == '"') return out;
            if (c != '\\') { out += c; continue; }
            if (p_ >= s_.size()) fail("unterminated string");
            char e = s_[p_++];
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {  // keys and names are ASCII in practice; encode the code unit as UTF-8
                    if (p_ + 4 > s_.size()) fail("bad \\u escape");
                    unsigned cp = static_cast<unsigned>(std::stoul(s_.substr(p_, 4), nullptr, 16));
                    p_ += 4;
                    if (cp < 0x80) {
                        out += static_cast<char>(cp);
                    } else if (cp < 0x800) {
                        out += static_cast<char>(0xC0 | (cp >> 6));
                        out += static_cast<char>(0x80 | (cp & 0x3F));
                    } else {
                        out += static_cast<char>(0xE0 | (cp >> 12));
                        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                        out += static_cast<char>(0x80 | (cp & 0x3F));
                    }
                    break;
                }
                default: out += e;  // '"', '\\', '/'
            }
        }
    }
    Json number() {
        size_t start = p_;
        while (p_ < s_.size() && std::string("+-0123456789.eE").find(s_[p_]) != std::string::npos) ++p_;
        std::string t = s_.substr(start, p_ - start);
        if (t.empty()) fail("unexpected character");
        Json v;
        try {
            size_t used = 0;
            if (t.find_first_of(".eE") == std::string::npos) {
                v.kind = Json::Int;
                v.i = std::stoll(t, &used);
            } else {
                v.kind = Json::Double;
                v.d = std::stod(t, &used);
            }
            if (used != t.size()) fail("bad number " + t);
        } catch (const std::logic_error&) {  // out of range or not a number
            fail("bad number " + t);
        }
        return v;
    }
};

// ---- the protocol layer ------------------------------------------------------------------------
// The integer `field` of the object `obj`, or an "invalid" refusal naming it.
inline int64_t integer(const Json& obj, const std::string& field) {
    const Json* v = obj.get(field);
    if (!v) throw Refusal("invalid", "missing field " + field);
    if (v->kind != Json::Int) throw Refusal("invalid", field + " must be an integer");
    return v->i;
}

class Session {
public:
    Session(Info info, std::function<std::unique_ptr<Timer>(const Config&)> make)
        : info_(std::move(info)), make_(std::move(make)) {}

    // The body of an ok response (without the id); throws Refusal.
    std::string handle(const Json& req, bool& bye) {
        const Json* type = req.get("type");
        std::string t = type && type->kind == Json::String ? type->s : "";
        if (t == "hello") {
            protocol_ = 1;  // 2 if the runner offers it in "protocols"
            if (const Json* offered = req.get("protocols"); offered && offered->kind == Json::Array)
                for (const Json& v : offered->a)
                    if (v.kind == Json::Int && v.i == 2) protocol_ = 2;
            std::string caps = "{\"timer\":true,\"purgatory\":false,\"time\":\"virtual\",\"profile\":" +
                               quote(info_.profile) + ",\"configurable\":[";
            for (size_t k = 0; k < info_.configurable.size(); ++k) caps += (k ? "," : "") + quote(info_.configurable[k]);
            caps += "],\"ranges\":";
            if (info_.ranges) {
                const Ranges& r = *info_.ranges;
                caps += "{\"delay\":[" + std::to_string(r.delay.first) + "," + std::to_string(r.delay.second) +
                        "],\"time\":[" + std::to_string(r.time.first) + "," + std::to_string(r.time.second) + "]}";
            } else {
                caps += "\"bounded\"";
            }
            if (info_.tick_ms) caps += ",\"tick_ms\":" + std::to_string(*info_.tick_ms);
            if (info_.wheel_size) caps += ",\"wheel_size\":" + std::to_string(*info_.wheel_size);
            if (info_.lateness_ms) caps += ",\"lateness_ms\":" + std::to_string(info_.lateness_ms);
            if (info_.earliness_ms) caps += ",\"earliness_ms\":" + std::to_string(info_.earliness_ms);
            caps += ",\"unobservable\":[";
            for (size_t k = 0; k < info_.unobservable.size(); ++k) caps += (k ? "," : "") + quote(info_.unobservable[k]);
            caps += "]";
            if (protocol_ >= 2) caps += ",\"pipeline\":" + std::to_string(kPipeline);
            return "\"ok\":true,\"protocol\":" + std::to_string(protocol_) + ",\"name\":" + quote(info_.name) + ",\"version\":" +
                   quote(info_.version) + ",\"capabilities\":" + caps + "}";
        }
        if (t == "reset") {
            Config config = read_config(req.get("config"));
            timer_ = make_(config);
            known_.clear();
            return "\"ok\":true";
        }
        if (t == "op") {
            const Json* op = req.get("op");
            if (!op || op->kind != Json::Object) throw Refusal("invalid", "op must be an object");
            return apply(*op);
        }
        if (t == "bye") {
            bye = true;
            return "\"ok\":true";
        }
        throw Refusal("invalid", "unknown request type");
    }

private:
    Info info_;
    std::function<std::unique_ptr<Timer>(const Config&)> make_;
    std::unique_ptr<Timer> timer_;
    std::set<int64_t> known_;  // task ids added since the reset
    int64_t protocol_ = 1;     // the version agreed in the hello

    static Config read_config(const Json* raw) {
        if (!raw || raw->kind != Json::Object) throw Refusal("invalid", "reset: config must be an object");
        Config c;
        const std::map<std::string, std::pair<int64_t*, std::pair<int64_t, int64_t>>> keys = {
            {"tick_ms", {&c.tick_ms, {1, kMaxTick}}},
            {"wheel_size", {&c.wheel_size, {kMinWheel, kMaxWheel}}},
            {"start_ms", {&c.start_ms, {0, kMaxTime}}},
            {"purge_interval", {&c.purge_interval, {0, kMaxPurgeInterval}}},
        };
        for (const auto& [key, value] : raw->o) {
            auto it = keys.find(key);
            if (it == keys.end()) throw Refusal("invalid", "reset: unknown config key " + quote(key));
            int64_t v = integer(*raw, key);
            auto [lo, hi] = it->second.second;
            if (v < lo || v > hi) {
                throw Refusal("invalid", "reset: " + key + " " + std::to_string(v) + " outside [" +
                                             std::to_string(lo) + ", " + std::to_string(hi) + "]");
            }
            *it->second.first = v;
        }
        return c;
    }

    std::string apply(const Json& op) {
        if (!timer_) throw Refusal("invalid", "an op before the first reset");
        std::string events;
        Fire fire = [&events](int64_t now, int64_t task, int64_t exp) {
            events += (events.empty() ? "" : ",");
            events += "{\"kind\":\"fire\",\"now\":" + std::to_string(now) + ",\"task\":" + std::to_string(task) +
                      ",\"exp\":" + std::to_string(exp) + "}";
        };
        const Json* kind_field = op.get("kind");
        std::string kind = kind_field && kind_field->kind == Json::String ? kind_field->s : "";
        std::string result;
        if (kind == "add") {
            int64_t task = in_range("task", integer(op, "task"), 0, kMaxId);
            int64_t delay = in_range("delay", integer(op, "delay"), -kMaxDelay, kMaxDelay);
            // the declared range: the timer sees only what it accepts
            if (info_.ranges) in_range("delay", delay, info_.ranges->delay.first, info_.ranges->delay.second);
            result = std::to_string(timer_->add(task, delay, fire));
            known_.insert(task);
        } else if (kind == "cancel") {
            int64_t task = in_range("task", integer(op, "task"), 0, kMaxId);
            if (known_.count(task)) {
                result = timer_->cancel(task, fire) ? "true" : "false";
            } else if (protocol_ >= 2) {
                result = "false";  // Kafka's TimerTask.cancel() of a task never added: a no-op
            } else {
                throw Refusal("unknown-id", "cancel: unknown task id " + std::to_string(task));
            }
        } else if (kind == "advance") {
            int64_t time = in_range("time", integer(op, "time"), 0, kMaxTime);
            if (info_.ranges) in_range("time", time, info_.ranges->time.first, info_.ranges->time.second);
            if (time < timer_->now()) {
                throw Refusal("invalid", "advance to " + std::to_string(time) + " is before the current time " +
                                             std::to_string(timer_->now()));
            }
            timer_->advance(time, fire);
            result = "null";
        } else if (kind == "size") {
            result = std::to_string(timer_->size());
        } else if (kind == "watch" || kind == "set_completable" || kind == "check" || kind == "cancel_for_key" ||
                   kind == "force_complete" || kind == "watched" || kind == "num_delayed") {
            throw Refusal("unsupported", kind + " is not offered by " + info_.name + " (timer only)");
        } else {
            throw Refusal("invalid", "unknown op kind " + quote(kind));
        }
        return "\"ok\":true,\"now\":" + std::to_string(timer_->now()) + ",\"events\":[" + events +
               "],\"result\":" + result;
    }
};

inline std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return s;
}

// The line loop under every server of this kit: one request per line from stdin, one answer per
// line to stdout, flushed at once; `handle` returns the body of an ok answer (without the id) and
// sets `bye` to end the loop; a Refusal it throws is an error answer of that type, any other
// exception an "internal" one. Lines are read and answered in order until "bye" or end of input.
inline int serve_lines(const std::function<std::string(const Json& req, bool& bye)>& handle) {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::string id = "null", body;
        bool bye = false;
        try {
            Json req = JsonReader(line).parse();
            if (req.kind != Json::Object) throw Refusal("invalid", "request is not a JSON object");
            if (const Json* i = req.get("id"); i && i->kind == Json::Int) id = std::to_string(i->i);
            body = handle(req, bye);
        } catch (const Refusal& r) {
            body = "\"ok\":false,\"error\":{\"type\":" + quote(r.type) + ",\"message\":" + quote(one_line(r.what())) + "}";
        } catch (const std::exception& e) {
            body = "\"ok\":false,\"error\":{\"type\":\"internal\",\"message\":" + quote(one_line(e.what())) + "}";
        }
        std::cout << "{\"id\":" << id << "," << body << "}\n" << std::flush;  // unflushed looks like a hang
        if (bye) break;
    }
    return 0;
}

// Answer requests from stdin until "bye" or end of input; `make` is called at every reset and
// returns a fresh, empty timer whose clock reads config.start_ms.
inline int serve(const Info& info, std::function<std::unique_ptr<Timer>(const Config&)> make) {
    Session session(info, std::move(make));
    return serve_lines([&session](const Json& req, bool& bye) { return session.handle(req, bye); });
}

}  // namespace wheelspec
