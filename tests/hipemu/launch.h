// What the emulated runtime hands a kernel's launcher (tests/hipemu).
#pragma once
#include <cstdint>

namespace hipemu {

struct Launch {
    unsigned grid[3], block[3];
    unsigned shared_bytes;
    void** params;    // one pointer per kernel parameter, as hipModuleLaunchKernel takes them
    uint64_t seed;    // varies the thread order from launch to launch
};

}  // namespace hipemu

// Each module exports one of these per kernel: `hipemu_kernel_<name>`.
typedef int (*hipemu_launcher)(const hipemu::Launch*);
