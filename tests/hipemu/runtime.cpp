// hipemu runtime: a HIP runtime and hiprtc on the host CPU, with no GPU, for
// tests/hip_wave64.rs. Built as a file named `libamdhip64.so.5` (ROCm 5
// carries hiprtc in the runtime library), it is what vmafhip's AMD path
// loads when VMAFHIP_HIP_LIBRARY points at it: every call the engine makes
// through src/hip/ffi.rs's AMD tables lands here, declared by ROCm 5.2's own
// headers (so a prototype that disagrees with them does not compile), and the
// engine's kernels run on the CPU as device.h describes.
//
// One emulated device: "gfx90a:sramecc+:xnack-" (CDNA2), wavefront 64,
// 8 GiB (HIPEMU_MEMORY_MB overrides). Streams run their work at once, in the
// calling thread, so every event has completed when it is recorded.
// hiprtcCompileProgram compiles the source with the host C++ compiler
// (HIPEMU_CXX, else c++) into a shared object; that object, behind a small
// header, is the "code object" hipModuleLoadData takes.
//
// Device memory is host memory from mmap with an inaccessible page after
// each allocation, so a kernel reading far past its buffer faults; copies and
// memsets are checked against the allocations and fail as a GPU would.
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "launch.h"

#ifndef HIPEMU_DIR
#error "build with -DHIPEMU_DIR=\"<directory of device.h>\""
#endif

struct ihipStream_t {
    unsigned flags;
};
struct ihipEvent_t {
    std::chrono::steady_clock::time_point at;
    unsigned flags;
};
struct ihipModule_t {
    void* so;  // the module's shared object (its file is removed once loaded)
};
struct ihipModuleSymbol_t {
    hipemu_launcher run;
    std::string name;
};
struct _hiprtcProgram {
    std::string source, name, log;
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<char> code;
};

namespace {

const char kArch[] = "gfx90a:sramecc+:xnack-";
const char kName[] = "hipemu (CPU emulation of a wave64 gfx90a)";
const char kMagic[8] = {'H', 'I', 'P', 'E', 'M', 'U', '0', '1'};

std::mutex mem_lock;
std::map<uintptr_t, size_t> allocations;  // start -> bytes asked for
size_t allocated = 0;
uint64_t launches = 0;

size_t total_memory() {
    const char* mb = std::getenv("HIPEMU_MEMORY_MB");
    return (mb ? std::strtoull(mb, nullptr, 10) : 8192) << 20;
}

size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Whether [p, p + bytes) lies inside one live device allocation.
bool device_range(const void* p, size_t bytes) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> g(mem_lock);
    auto it = allocations.upper_bound(a);
    if (it == allocations.begin()) return false;
    --it;
    return a >= it->first && a + bytes <= it->first + it->second;
}

bool dev_ok(hipMemcpyKind kind, bool dst, const void* p, size_t bytes) {
    const bool device = dst ? (kind == hipMemcpyHostToDevice || kind == hipMemcpyDeviceToDevice)
                            : (kind == hipMemcpyDeviceToHost || kind == hipMemcpyDeviceToDevice);
    return !device || bytes == 0 || device_range(p, bytes);
}

std::string temp_dir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/hipemu-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    return mkdtemp(buf.data()) ? std::string(buf.data()) : std::string();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// The names of the source's kernels: the identifier after each
// `VMAF_KERNEL void` or `VMAF_KERNEL_BOUNDS(n) void` that starts a line.
std::vector<std::string> kernel_names(const std::string& src) {
    std::vector<std::string> names;
    const std::string key = "VMAF_KERNEL";
    for (size_t at = src.find(key); at != std::string::npos; at = src.find(key, at + 1)) {
        if (at > 0 && src[at - 1] != '\n') continue;  // only at the start of a line
        size_t i = at + key.size();
        auto skip = [&] { while (i < src.size() && std::isspace(static_cast<unsigned char>(src[i]))) ++i; };
        if (src.compare(i, 8, "_BOUNDS(") == 0) {
            const size_t close = src.find(')', i);
            if (close == std::string::npos) continue;
            i = close + 1;
        }
        skip();
        if (src.compare(i, 4, "void") != 0) continue;  // the #define itself
        i += 4;
        skip();
        size_t j = i;
        while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
        if (j > i) names.push_back(src.substr(i, j - i));
    }
    return names;
}

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------- runtime

hipError_t hipInit(unsigned int flags) { return flags == 0 ? hipSuccess : hipErrorInvalidValue; }

hipError_t hipRuntimeGetVersion(int* v) {
    *v = HIP_VERSION;
    return hipSuccess;
}

hipError_t hipGetDeviceCount(int* n) {
    *n = 1;
    return hipSuccess;
}

hipError_t hipSetDevice(int d) { return d == 0 ? hipSuccess : hipErrorInvalidDevice; }

hipError_t hipDeviceGetName(char* name, int len, int d) {
    if (d != 0) return hipErrorInvalidDevice;
    if (len <= 0) return hipErrorInvalidValue;
    std::snprintf(name, static_cast<size_t>(len), "%s", kName);
    return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int* v, hipDeviceAttribute_t attr, int d) {
    if (d != 0) return hipErrorInvalidDevice;
    switch (attr) {
        case hipDeviceAttributeWarpSize: *v = 64; return hipSuccess;
        case hipDeviceAttributeMultiprocessorCount:
            *v = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
            return hipSuccess;
        case hipDeviceAttributeMaxThreadsPerBlock: *v = 1024; return hipSuccess;
        default: return hipErrorInvalidValue;
    }
}

hipError_t hipDeviceTotalMem(size_t* bytes, int d) {
    if (d != 0) return hipErrorInvalidDevice;
    *bytes = total_memory();
    return hipSuccess;
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t* p, int d) {
    if (d != 0) return hipErrorInvalidDevice;
    std::memset(p, 0, sizeof *p);
    std::snprintf(p->name, sizeof p->name, "%s", kName);
    std::snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", kArch);
    p->gcnArch = 910;
    p->totalGlobalMem = total_memory();
    p->warpSize = 64;
    p->maxThreadsPerBlock = 1024;
    p->sharedMemPerBlock = 64 * 1024;
    p->multiProcessorCount = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    p->major = 9;
    p->minor = 0;
    return hipSuccess;
}

hipError_t hipDeviceSynchronize(void) { return hipSuccess; }

hipError_t hipMalloc(void** ptr, size_t size) {
    const size_t pg = page();
    const size_t body = (std::max<size_t>(size, 1) + pg - 1) / pg * pg;
    {
        std::lock_guard<std::mutex> g(mem_lock);
        if (allocated + size > total_memory()) return hipErrorOutOfMemory;
        allocated += size;
    }
    void* p = mmap(nullptr, body + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::lock_guard<std::mutex> g(mem_lock);
        allocated -= size;
        return hipErrorOutOfMemory;
    }
    mprotect(static_cast<char*>(p) + body, pg, PROT_NONE);
    // A GPU's fresh memory holds whatever was there: never zeros here.
    std::memset(p, 0x5a, body);
    std::lock_guard<std::mutex> g(mem_lock);
    allocations[reinterpret_cast<uintptr_t>(p)] = size;
    *ptr = p;
    return hipSuccess;
}

hipError_t hipFree(void* ptr) {
    if (!ptr) return hipSuccess;
    size_t size;
    {
        std::lock_guard<std::mutex> g(mem_lock);
        auto it = allocations.find(reinterpret_cast<uintptr_t>(ptr));
        if (it == allocations.end()) return hipErrorInvalidValue;
        size = it->second;
        allocations.erase(it);
        allocated -= size;
    }
    const size_t pg = page();
    munmap(ptr, (std::max<size_t>(size, 1) + pg - 1) / pg * pg + pg);
    return hipSuccess;
}

hipError_t hipMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
    std::lock_guard<std::mutex> g(mem_lock);
    *total_bytes = total_memory();
    *free_bytes = *total_bytes - allocated;
    return hipSuccess;
}

hipError_t hipHostMalloc(void** ptr, size_t size, unsigned int flags) {
    if (flags != hipHostMallocDefault) return hipErrorInvalidValue;
    *ptr = std::aligned_alloc(4096, (std::max<size_t>(size, 1) + 4095) / 4096 * 4096);
    return *ptr ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipHostFree(void* ptr) {
    std::free(ptr);
    return hipSuccess;
}

hipError_t hipMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                            size_t height, hipMemcpyKind kind, hipStream_t) {
    if (height == 0 || width == 0) return hipSuccess;
    if (width > dpitch || width > spitch) return hipErrorInvalidPitchValue;
    if (!dev_ok(kind, true, dst, dpitch * (height - 1) + width) ||
        !dev_ok(kind, false, src, spitch * (height - 1) + width))
        return hipErrorInvalidValue;
    for (size_t r = 0; r < height; ++r)
        std::memcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
    return hipSuccess;
}

hipError_t hipMemcpyAsync(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t) {
    if (!dev_ok(kind, true, dst, bytes) || !dev_ok(kind, false, src, bytes)) return hipErrorInvalidValue;
    std::memcpy(dst, src, bytes);
    return hipSuccess;
}

hipError_t hipMemsetAsync(void* dst, int value, size_t bytes, hipStream_t) {
    if (bytes != 0 && !device_range(dst, bytes)) return hipErrorInvalidValue;
    std::memset(dst, value, bytes);
    return hipSuccess;
}

hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned int flags) {
    *s = new ihipStream_t{flags};
    return hipSuccess;
}

hipError_t hipStreamDestroy(hipStream_t s) {
    delete s;
    return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t) { return hipSuccess; }

hipError_t hipStreamWaitEvent(hipStream_t, hipEvent_t e, unsigned int flags) {
    return e && flags == 0 ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned flags) {
    // The flags vmafhip uses; anything else is a mistake to catch here.
    if (flags & ~unsigned(hipEventBlockingSync | hipEventDisableTiming)) return hipErrorInvalidValue;
    *e = new ihipEvent_t{std::chrono::steady_clock::now(), flags};
    return hipSuccess;
}

hipError_t hipEventRecord(hipEvent_t e, hipStream_t) {
    e->at = std::chrono::steady_clock::now();
    return hipSuccess;
}

hipError_t hipEventQuery(hipEvent_t) { return hipSuccess; }

hipError_t hipEventSynchronize(hipEvent_t) { return hipSuccess; }

hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) {
    // As HIP does: events made without timing cannot be timed.
    if ((start->flags | stop->flags) & hipEventDisableTiming) return hipErrorInvalidHandle;
    *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count();
    return hipSuccess;
}

hipError_t hipEventDestroy(hipEvent_t e) {
    delete e;
    return hipSuccess;
}

hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
    const char* p = static_cast<const char*>(image);
    if (std::memcmp(p, kMagic, 8) != 0) return hipErrorInvalidImage;
    uint64_t n;
    std::memcpy(&n, p + 8, 8);
    const std::string dir = temp_dir();
    if (dir.empty()) return hipErrorOutOfMemory;
    const std::string path = dir + "/module.so";
    std::ofstream(path, std::ios::binary).write(p + 16, static_cast<std::streamsize>(n));
    void* so = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::remove(path.c_str());
    rmdir(dir.c_str());
    if (!so) {
        std::fprintf(stderr, "hipemu: %s\n", dlerror());
        return hipErrorInvalidImage;
    }
    *module = new ihipModule_t{so};
    return hipSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t m, const char* name) {
    const std::string sym = std::string("hipemu_kernel_") + name;
    void* run = dlsym(m->so, sym.c_str());
    if (!run) return hipErrorNotFound;
    *f = new ihipModuleSymbol_t{reinterpret_cast<hipemu_launcher>(run), name};
    return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t m) {
    dlclose(m->so);
    delete m;
    return hipSuccess;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz,
                                 unsigned int shared_bytes, hipStream_t, void** params, void** extra) {
    if (extra) return hipErrorNotSupported;
    if (bx * by * bz == 0 || bx * by * bz > 1024 || gx * gy * gz == 0) return hipErrorInvalidConfiguration;
    if (shared_bytes > 64 * 1024) return hipErrorInvalidValue;
    hipemu::Launch l{{gx, gy, gz}, {bx, by, bz}, shared_bytes, params, 0};
    {
        std::lock_guard<std::mutex> g(mem_lock);
        l.seed = ++launches * 0x9e3779b97f4a7c15ull;
    }
    return f->run(&l) == 0 ? hipSuccess : hipErrorLaunchFailure;
}

const char* hipGetErrorName(hipError_t e) {
    switch (e) {
        case hipSuccess: return "hipSuccess";
        case hipErrorInvalidValue: return "hipErrorInvalidValue";
        case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
        case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
        case hipErrorInvalidImage: return "hipErrorInvalidImage";
        case hipErrorNotFound: return "hipErrorNotFound";
        case hipErrorInvalidConfiguration: return "hipErrorInvalidConfiguration";
        case hipErrorInvalidPitchValue: return "hipErrorInvalidPitchValue";
        case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
        case hipErrorNotSupported: return "hipErrorNotSupported";
        default: return "hipErrorUnknown";
    }
}

// ----------------------------------------------------------------- hiprtc

hiprtcResult hiprtcVersion(int* major, int* minor) {
    *major = HIP_VERSION_MAJOR;
    *minor = HIP_VERSION_MINOR;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcCreateProgram(hiprtcProgram* prog, const char* src, const char* name, int num_headers,
                                 const char** headers, const char** include_names) {
    if (!prog || !src) return HIPRTC_ERROR_INVALID_INPUT;
    auto* p = new _hiprtcProgram;
    p->source = src;
    p->name = name ? name : "program.hip";
    for (int i = 0; i < num_headers; ++i) p->headers.emplace_back(include_names[i], headers[i]);
    *prog = p;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcCompileProgram(hiprtcProgram p, int num_options, const char** options) {
    std::string arch;
    bool contract_off = false;
    for (int i = 0; i < num_options; ++i) {
        const std::string o = options[i];
        if (o.rfind("--offload-arch=", 0) == 0) arch = o.substr(15);
        if (o == "-ffp-contract=off") contract_off = true;
    }
    if (arch.rfind("gfx", 0) != 0) {
        p->log = "hipemu: no --offload-arch=gfx... option";
        return HIPRTC_ERROR_INVALID_OPTION;
    }
    if (!contract_off) {
        // The engine's results are exact only without FMA contraction.
        p->log = "hipemu: -ffp-contract=off missing";
        return HIPRTC_ERROR_INVALID_OPTION;
    }
    const std::string dir = temp_dir();
    if (dir.empty()) return HIPRTC_ERROR_INTERNAL_ERROR;
    for (auto& h : p->headers) write_file(dir + "/" + h.first, h.second);
    write_file(dir + "/kernel.hip", p->source);
    std::ostringstream w;
    w << "#include \"device.h\"\n#include \"kernel.hip\"\n";
    const auto names = kernel_names(p->source);
    for (auto& n : names)
        w << "extern \"C\" int hipemu_kernel_" << n << "(const hipemu::Launch* l) { return hipemu::launch(&" << n
          << ", l); }\n";
    write_file(dir + "/module.cpp", w.str());
    const char* cxx = std::getenv("HIPEMU_CXX");
    const char* inc = std::getenv("HIPEMU_DIR");
    const std::string cmd = std::string(cxx && *cxx ? cxx : "c++") +
                            " -std=c++17 -O2 -ffp-contract=off -fno-fast-math -fPIC -shared -pthread -w" +
                            " -I" + shell_quote(dir) + " -I" + shell_quote(inc && *inc ? inc : HIPEMU_DIR) + " " +
                            shell_quote(dir + "/module.cpp") + " -o " + shell_quote(dir + "/module.so") + " > " +
                            shell_quote(dir + "/log") + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream logf(dir + "/log");
    std::stringstream log;
    log << logf.rdbuf();
    p->log = log.str();
    hiprtcResult result = HIPRTC_SUCCESS;
    if (rc != 0 || names.empty()) {
        if (names.empty()) p->log += "\nhipemu: no VMAF_KERNEL in " + p->name;
        result = HIPRTC_ERROR_COMPILATION;
    } else {
        std::ifstream so(dir + "/module.so", std::ios::binary);
        std::vector<char> bytes((std::istreambuf_iterator<char>(so)), std::istreambuf_iterator<char>());
        const uint64_t n = bytes.size();
        p->code.assign(kMagic, kMagic + 8);
        p->code.insert(p->code.end(), reinterpret_cast<const char*>(&n), reinterpret_cast<const char*>(&n) + 8);
        p->code.insert(p->code.end(), bytes.begin(), bytes.end());
    }
    std::system(("rm -rf " + shell_quote(dir)).c_str());
    return result;
}

hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram p, size_t* n) {
    *n = p->log.size() + 1;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcGetProgramLog(hiprtcProgram p, char* log) {
    std::memcpy(log, p->log.c_str(), p->log.size() + 1);
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcGetCodeSize(hiprtcProgram p, size_t* n) {
    *n = p->code.size();
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcGetCode(hiprtcProgram p, char* code) {
    std::memcpy(code, p->code.data(), p->code.size());
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcDestroyProgram(hiprtcProgram* p) {
    delete *p;
    *p = nullptr;
    return HIPRTC_SUCCESS;
}

const char* hiprtcGetErrorString(hiprtcResult r) {
    switch (r) {
        case HIPRTC_SUCCESS: return "HIPRTC_SUCCESS";
        case HIPRTC_ERROR_INVALID_OPTION: return "HIPRTC_ERROR_INVALID_OPTION";
        case HIPRTC_ERROR_COMPILATION: return "HIPRTC_ERROR_COMPILATION";
        case HIPRTC_ERROR_INVALID_INPUT: return "HIPRTC_ERROR_INVALID_INPUT";
        default: return "HIPRTC_ERROR_INTERNAL_ERROR";
    }
}

}  // extern "C"
