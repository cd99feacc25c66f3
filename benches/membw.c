/* Host memory bandwidth probe for the pipeline analysis in
 * docs/PERFORMANCE.md: T threads (argument 1, default 16) each copy a
 * buffer of M MiB (argument 2, default 64: larger than the caches) into
 * another, as a staging copy does, for about 2 s; prints the bytes copied
 * per second in total (each copied byte is one read and one write of
 * memory). Build: cc -O2 -pthread -static benches/membw.c -o membw */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t BYTES = 64u << 20;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *copy_loop(void *arg) {
    double *copied = arg;
    char *src = malloc(BYTES), *dst = malloc(BYTES);
    memset(src, 1, BYTES);
    memset(dst, 2, BYTES);
    double end = now() + 2.0, n = 0;
    while (now() < end) {
        memcpy(dst, src, BYTES);
        src[n > 0 ? 1 : 0] ^= dst[7]; /* keep the copies from being elided */
        n += BYTES;
    }
    *copied = n;
    free(src);
    free(dst);
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    if (argc > 2) BYTES = (size_t)atoi(argv[2]) << 20;
    pthread_t id[256];
    double copied[256] = {0}, t0 = now();
    if (threads < 1 || threads > 256) return 2;
    for (int i = 0; i < threads; i++) pthread_create(&id[i], NULL, copy_loop, &copied[i]);
    double total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(id[i], NULL);
        total += copied[i];
    }
    printf("%d threads: %.1f GB/s copied (%.1f GB/s of memory traffic)\n", threads,
           total / (now() - t0) / 1e9, 2 * total / (now() - t0) / 1e9);
    return 0;
}
