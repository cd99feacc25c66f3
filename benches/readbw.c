/* Page-cache read probe for the raw-file rows of docs/PERFORMANCE.md: how
 * fast can the luma planes of a raw 4:2:0 file in the page cache reach the
 * GPU, and by which route?
 *
 *   readbw FILE WIDTH HEIGHT [THREADS]      (8-bit 4:2:0 frames; luma read)
 *   readbw --make FILE WIDTH HEIGHT FRAMES  (writes such a file)
 *
 * Routes, each over the whole file, frames split among THREADS threads
 * (frame k to thread k % THREADS), printed as luma GB/s and frames/s:
 *   pread-heap    pread into a pre-touched heap buffer per thread
 *   pread-pinned  pread into a cuMemHostAlloc buffer per thread
 *   mmap-copy     memcpy out of one read-only mapping of the file
 *   register-N    the mapping's pages of N frames at a time registered with
 *                 cuMemHostRegister(READ_ONLY), each luma plane copied to
 *                 the device straight from the page cache, unregistered
 * The CUDA routes need libcuda.so.1 (dlopen'ed; skipped without it).
 * Build: cc -O2 -pthread benches/readbw.c -o readbw -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef int (*fn_i)(unsigned);
typedef int (*fn_dev)(int *, int);
typedef int (*fn_ctx_retain)(void **, int);
typedef int (*fn_ctx_set)(void *);
typedef int (*fn_host_alloc)(void **, size_t, unsigned);
typedef int (*fn_register)(void *, size_t, unsigned);
typedef int (*fn_unregister)(void *);
typedef int (*fn_free_host)(void *);
typedef int (*fn_alloc)(unsigned long long *, size_t);
typedef int (*fn_htod)(unsigned long long, const void *, size_t);

static struct {
    fn_host_alloc host_alloc;
    fn_register reg;
    fn_unregister unreg;
    fn_free_host free_host;
    fn_alloc alloc;
    fn_htod htod;
    fn_ctx_set ctx_set;
    void *ctx;
} cu;

static int cuda_open(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) return 0;
    fn_i init = (fn_i)dlsym(h, "cuInit");
    fn_dev dev = (fn_dev)dlsym(h, "cuDeviceGet");
    fn_ctx_retain retain = (fn_ctx_retain)dlsym(h, "cuDevicePrimaryCtxRetain");
    cu.ctx_set = (fn_ctx_set)dlsym(h, "cuCtxSetCurrent");
    cu.host_alloc = (fn_host_alloc)dlsym(h, "cuMemHostAlloc");
    cu.reg = (fn_register)dlsym(h, "cuMemHostRegister_v2");
    cu.unreg = (fn_unregister)dlsym(h, "cuMemHostUnregister");
    cu.free_host = (fn_free_host)dlsym(h, "cuMemFreeHost");
    cu.alloc = (fn_alloc)dlsym(h, "cuMemAlloc_v2");
    cu.htod = (fn_htod)dlsym(h, "cuMemcpyHtoD_v2");
    int d;
    if (init(0) || dev(&d, 0) || retain(&cu.ctx, d) || cu.ctx_set(cu.ctx)) return 0;
    return 1;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

enum route { PREAD_HEAP, PREAD_PINNED, MMAP_COPY, REGISTER };

struct job {
    enum route route;
    int fd, t, threads, window;
    const unsigned char *map;
    size_t frame, luma, frames;
    int failed;
};

static void *run_job(void *arg) {
    struct job *j = arg;
    unsigned char *buf = NULL;
    unsigned long long dev = 0;
    long page = sysconf(_SC_PAGESIZE);
    if (j->route == PREAD_PINNED || j->route == REGISTER) cu.ctx_set(cu.ctx);
    if (j->route == PREAD_PINNED) {
        if (cu.host_alloc((void **)&buf, j->luma, 0)) { j->failed = 1; return NULL; }
    } else if (j->route != REGISTER) {
        buf = malloc(j->luma);
        memset(buf, 0, j->luma);
    }
    if (j->route == REGISTER && cu.alloc(&dev, j->luma)) { j->failed = 1; return NULL; }
    for (size_t k = j->t; k < j->frames; k += (size_t)j->threads * j->window) {
        if (j->route == PREAD_HEAP || j->route == PREAD_PINNED) {
            if (pread(j->fd, buf, j->luma, (off_t)(k * j->frame)) != (ssize_t)j->luma) { j->failed = 1; break; }
        } else if (j->route == MMAP_COPY) {
            memcpy(buf, j->map + k * j->frame, j->luma);
        } else {
            /* frames k .. k + window of this thread's block, page-aligned */
            size_t last = k + j->window > j->frames ? j->frames : k + j->window;
            size_t a = (k * j->frame) & ~(size_t)(page - 1);
            size_t b = ((last - 1) * j->frame + j->luma + page - 1) & ~(size_t)(page - 1);
            void *p = (void *)(j->map + a);
            if (cu.reg(p, b - a, 0x08)) { j->failed = 1; break; }
            for (size_t f = k; f < last; f++)
                if (cu.htod(dev, j->map + f * j->frame, j->luma)) { j->failed = 1; break; }
            cu.unreg(p);
        }
    }
    return NULL;
}

static void route(const char *name, enum route r, int fd, const unsigned char *map,
                  size_t frame, size_t luma, size_t frames, int threads, int window) {
    pthread_t th[64];
    struct job jobs[64];
    double t0 = now();
    /* a fresh mapping each time: its page-table set-up is part of the cost */
    if (r == MMAP_COPY || r == REGISTER)
        map = mmap(NULL, frames * frame, PROT_READ, MAP_SHARED, fd, 0);
    for (int t = 0; t < threads; t++) {
        jobs[t] = (struct job){r, fd, t * window, threads, window, map, frame, luma, frames, 0};
        pthread_create(&th[t], NULL, run_job, &jobs[t]);
    }
    int failed = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        failed |= jobs[t].failed;
    }
    double s = now() - t0;
    if (r == MMAP_COPY || r == REGISTER) munmap((void *)map, frames * frame);
    printf("%-14s threads %2d: %6.2f GB/s of luma, %7.1f frames/s%s\n", name, threads,
           frames * luma / s / 1e9, frames / s, failed ? "  (FAILED)" : "");
    fflush(stdout);
}

static int make(const char *path, size_t frame, size_t frames) {
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    unsigned char *buf = malloc(frame);
    for (size_t k = 0; k < frames; k++) {
        for (size_t i = 0; i < frame; i++) buf[i] = (unsigned char)(i * 7 + k);
        fwrite(buf, 1, frame, f);
    }
    return fclose(f) != 0;
}

/* Pinned host memory, COUNT blocks of BYTES: allocated by the driver, or
 * mapped (2 MiB pages where the kernel gives them), touched and registered. */
static int alloc_probe(size_t bytes, int count) {
    double c0 = now();
    if (!cuda_open()) { printf("no CUDA\n"); return 1; }
    printf("CUDA initialised and a context made in %.3f s\n", now() - c0);
    void *blocks[256];
    for (int mode = 0; mode < 3; mode++) {
        const char *name = mode == 0 ? "cuMemHostAlloc" : mode == 1 ? "mmap+THP+touch+register" : "mmap+touch+register";
        double t0 = now();
        for (int i = 0; i < count; i++) {
            if (mode == 0) {
                if (cu.host_alloc(&blocks[i], bytes, 0)) return 1;
            } else {
                size_t len = (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
                blocks[i] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (mode == 1) madvise(blocks[i], len, MADV_HUGEPAGE);
                memset(blocks[i], 0, len);
                if (cu.reg(blocks[i], len, 0)) return 1;
            }
        }
        double t1 = now();
        for (int i = 0; i < count; i++) {
            if (mode == 0) cu.free_host(blocks[i]);
            else {
                size_t len = (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
                cu.unreg(blocks[i]);
                munmap(blocks[i], len);
            }
        }
        double t2 = now();
        printf("%-24s %d x %zu bytes: %.1f ms each to get (%.2f GB/s), %.1f ms each to free\n", name, count,
               bytes, (t1 - t0) * 1e3 / count, count * bytes / (t1 - t0) / 1e9, (t2 - t1) * 1e3 / count);
    }
    fflush(stdout);
    /* READBW_EXIT=1: leave without the C library's (and the driver's) exit handlers */
    if (getenv("READBW_EXIT")) _exit(0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 4 && !strcmp(argv[1], "--alloc")) return alloc_probe(atol(argv[2]), atoi(argv[3]));
    if (argc >= 6 && !strcmp(argv[1], "--make")) {
        size_t w = atol(argv[3]), h = atol(argv[4]);
        return make(argv[2], w * h * 3 / 2, atol(argv[5]));
    }
    if (argc < 4) {
        fprintf(stderr, "readbw FILE WIDTH HEIGHT [THREADS] | readbw --make FILE W H FRAMES\n");
        return 2;
    }
    size_t w = atol(argv[2]), h = atol(argv[3]);
    int max_threads = argc > 4 ? atoi(argv[4]) : 8;
    size_t luma = w * h, frame = luma * 3 / 2;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) { perror(argv[1]); return 1; }
    size_t frames = st.st_size / frame;
    const unsigned char *map = NULL;
    double c0 = now();
    int gpu = cuda_open();
    printf("CUDA initialised and a context made in %.3f s\n", now() - c0);
    printf("%s: %zu frames of %zux%zu, %.2f GB of luma; CUDA %s\n", argv[1], frames, w, h,
           frames * luma / 1e9, gpu ? "found" : "not found");
    route("warm (pread)", PREAD_HEAP, fd, map, frame, luma, frames, 4, 1);
    for (int t = 1; t <= max_threads; t *= 2) {
        route("pread-heap", PREAD_HEAP, fd, map, frame, luma, frames, t, 1);
        if (gpu) route("pread-pinned", PREAD_PINNED, fd, map, frame, luma, frames, t, 1);
        route("mmap-copy", MMAP_COPY, fd, map, frame, luma, frames, t, 1);
    }
    if (gpu)
        for (int win = 1; win <= 16; win *= 4)
            for (int t = 1; t <= 4; t *= 2) {
                char name[32];
                snprintf(name, sizeof name, "register-%d", win);
                route(name, REGISTER, fd, map, frame, luma, frames, t, win);
            }
    return 0;
}
