// hipemu device side: the HIP kernel dialect of kernels/*.hip on the host
// CPU, for tests/hip_wave64.rs. The emulated runtime (runtime.cpp) compiles
// every kernel source it is handed as
//
//     #include "device.h"       // this file
//     #include "<kernel>.hip"   // unchanged
//     <one launcher per VMAF_KERNEL>
//
// into a shared object with the host C++ compiler, so the kernels run here
// exactly as written, with no GPU.
//
// Execution model. A launch runs its blocks on a few OS threads (blocks in
// any order, in parallel: global atomics are real atomics). Each block runs
// its threads as fibers on one OS thread. A thread runs until it reaches
// __syncthreads() or returns; when every live thread of the block has done
// so, the barrier opens and the next round starts. The order of the threads
// within each round is a fresh pseudo-random permutation (HIPEMU_ORDER=
// forward or reverse fixes it), so a value read from shared memory without
// the barrier that should order it is read before its write in some blocks
// and after it in others, and the results change. The wavefront width is 64
// (warpSize, and the runtime's hipDeviceAttributeWarpSize), as on CDNA.
//
// What this cannot show: lock-step execution within a wavefront (there is no
// lane-level code to need it: tests/hip_compile.rs forbids shuffles, ballots
// and warp-synchronous idioms), AMD's compiler and its code generation, and
// the device math library (the kernels use only correctly rounded operations).
//
// x86-64 only: the fiber switch is eight instructions of assembly.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#if !defined(__x86_64__)
#error "hipemu's fiber switch is written for x86-64"
#endif

#define __global__
#define __device__
#define __host__
#define __constant__ const
#define __forceinline__ inline
#define __launch_bounds__(...)
// Block-scope thread_local has static storage per OS thread, and one block
// runs on one OS thread: one copy per block, as shared memory is.
#define __shared__ thread_local
#define VMAF_DYNAMIC_SHARED(T, name) T* name = reinterpret_cast<T*>(::hipemu::dynamic_shared())
#define warpSize 64

#include "launch.h"

namespace hipemu {

struct uint3v {
    unsigned x, y, z;
};

struct Fiber {
    void* sp = nullptr;  // saved stack pointer while switched out
    uint3v tid{};
    bool done = false;
};

// Per OS thread: the block being run and the fiber on the CPU.
struct BlockState {
    uint3v block{}, bdim{}, gdim{};
    Fiber* cur = nullptr;
    void* sched_sp = nullptr;
    unsigned char* dyn = nullptr;
    const void* call = nullptr;  // the launch's argument tuple and entry
    void (*entry)(const void*) = nullptr;
};
inline thread_local BlockState bs;

inline void* dynamic_shared() { return bs.dyn; }

extern "C" void hipemu_switch(void** save_sp, void* to_sp);
// Saves the callee-saved registers on the current stack, stores the stack
// pointer in *save_sp, loads to_sp and restores the registers saved there.
asm(R"(
    .text
    .p2align 4
    .hidden hipemu_switch
    .globl hipemu_switch
    .type hipemu_switch,@function
hipemu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size hipemu_switch, .-hipemu_switch
)");

inline void barrier() {
    hipemu_switch(&bs.cur->sp, bs.sched_sp);
}

[[noreturn]] inline void fiber_main() {
    bs.entry(bs.call);
    bs.cur->done = true;
    hipemu_switch(&bs.cur->sp, bs.sched_sp);
    std::abort();  // a finished fiber is never resumed
}

// A fresh stack whose first switch "returns" into fiber_main with the
// alignment a call would leave (rsp = 8 mod 16 at entry).
inline void* fiber_stack_init(unsigned char* base, size_t bytes) {
    auto top = reinterpret_cast<uintptr_t>(base + bytes) & ~uintptr_t(15);
    auto* sp = reinterpret_cast<uintptr_t*>(top);
    *--sp = 0;                                             // fake return address of fiber_main
    *--sp = reinterpret_cast<uintptr_t>(&fiber_main);      // where `ret` goes
    for (int i = 0; i < 6; ++i) *--sp = 0;                 // rbp rbx r12 r13 r14 r15
    return sp;
}

enum class Order { Shuffle, Forward, Reverse };

inline Order order_from_env() {
    const char* o = std::getenv("HIPEMU_ORDER");
    if (o && std::strcmp(o, "forward") == 0) return Order::Forward;
    if (o && std::strcmp(o, "reverse") == 0) return Order::Reverse;
    return Order::Shuffle;
}

inline uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}


constexpr size_t kStackBytes = 64 * 1024;

// Runs blocks [next, total) on this OS thread until none is left.
inline void worker(const Launch& l, const void* call, void (*entry)(const void*),
                   std::atomic<unsigned>* next, unsigned total) {
    const unsigned nthreads = l.block[0] * l.block[1] * l.block[2];
    std::vector<Fiber> fibers(nthreads);
    std::unique_ptr<unsigned char[]> stacks(new unsigned char[kStackBytes * nthreads]);
    std::unique_ptr<unsigned char[]> dyn(new unsigned char[l.shared_bytes + 16]);
    std::vector<unsigned> order(nthreads);
    const Order how = order_from_env();
    bs.bdim = {l.block[0], l.block[1], l.block[2]};
    bs.gdim = {l.grid[0], l.grid[1], l.grid[2]};
    bs.dyn = dyn.get();
    bs.call = call;
    bs.entry = entry;
    for (;;) {
        const unsigned b = next->fetch_add(1);
        if (b >= total) break;
        bs.block = {b % l.grid[0], (b / l.grid[0]) % l.grid[1], b / (l.grid[0] * l.grid[1])};
        // Shared memory starts as garbage on a GPU: never as zeros here.
        std::memset(dyn.get(), 0xa5, l.shared_bytes);
        for (unsigned t = 0; t < nthreads; ++t) {
            fibers[t].tid = {t % l.block[0], (t / l.block[0]) % l.block[1], t / (l.block[0] * l.block[1])};
            fibers[t].done = false;
            fibers[t].sp = fiber_stack_init(stacks.get() + t * kStackBytes, kStackBytes);
        }
        unsigned live = nthreads;
        for (uint64_t round = 0; live > 0; ++round) {
            for (unsigned t = 0; t < nthreads; ++t) order[t] = how == Order::Reverse ? nthreads - 1 - t : t;
            if (how == Order::Shuffle) {
                uint64_t s = mix(l.seed ^ mix(b) ^ (round << 40));
                for (unsigned t = nthreads; t > 1; --t) {
                    s = mix(s);
                    std::swap(order[t - 1], order[s % t]);
                }
            }
            for (unsigned t : order) {
                Fiber& f = fibers[t];
                if (f.done) continue;
                bs.cur = &f;
                hipemu_switch(&bs.sched_sp, f.sp);
                if (f.done) --live;
            }
        }
    }
}

// One launch of kernel `f`: its parameters are read from the launch's
// pointer array with the kernel's own C++ types.
template <typename... A, size_t... I>
inline int launch_impl(void (*f)(A...), const Launch& l, std::index_sequence<I...>) {
    using Args = std::tuple<std::decay_t<A>...>;
    struct Call {
        void (*f)(A...);
        Args args;
    };
    Call call{f, Args{*static_cast<std::decay_t<A>*>(l.params[I])...}};
    auto entry = [](const void* p) {
        const Call* c = static_cast<const Call*>(p);
        std::apply(c->f, c->args);
    };
    const unsigned total = l.grid[0] * l.grid[1] * l.grid[2];
    std::atomic<unsigned> next{0};
    unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    if (const char* t = std::getenv("HIPEMU_THREADS")) hw = std::max(1, std::atoi(t));
    const unsigned n = std::min(hw, total);
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < n; ++i) pool.emplace_back([&] { worker(l, &call, entry, &next, total); });
    worker(l, &call, entry, &next, total);
    for (auto& t : pool) t.join();
    return 0;
}

template <typename... A>
inline int launch(void (*f)(A...), const Launch* l) {
    return launch_impl(f, *l, std::index_sequence_for<A...>{});
}

// Device functions the kernels use.
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline unsigned atomicOr(unsigned* p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v) {
    return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline float __uint_as_float(unsigned u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline unsigned __float_as_uint(float f) {
    unsigned u;
    std::memcpy(&u, &f, 4);
    return u;
}

}  // namespace hipemu

#define threadIdx (::hipemu::bs.cur->tid)
#define blockIdx (::hipemu::bs.block)
#define blockDim (::hipemu::bs.bdim)
#define gridDim (::hipemu::bs.gdim)
#define __syncthreads() ::hipemu::barrier()

using hipemu::__clz;
using hipemu::__clzll;
using hipemu::__float_as_uint;
using hipemu::__uint_as_float;
using hipemu::__threadfence;
using hipemu::atomicAdd;
using hipemu::atomicExch;
using hipemu::atomicOr;
