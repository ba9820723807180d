/* One client binary for URM's daemon and for `lever daemon --urm`
 * (scripts/urm-side-by-side.sh): it is linked against libUrmClient.so.1
 * and the library found at run time (LD_LIBRARY_PATH) decides which
 * daemon it talks to, URM's libUrmClient or Lever's.
 *
 *   urm_bench NODE RESCODE N
 *
 * N times: tuneResources(-1, HIGH, {RESCODE: v}) with v alternating
 * between two values, then read NODE until it holds v (the daemon wrote
 * it), then untuneResources and read NODE until it holds its original
 * value again; 10 ms before the untune and 20 ms after each round, for
 * URM's rate limiter (outside the measured spans). Prints one line per measure: its name, the count, p50 and
 * p99 in microseconds (CLOCK_MONOTONIC), e.g.
 *   tune_reply 500 41.2 88.0
 * tune_reply: the call until it returned; tune_written: the call until
 * the node read back v; untune_restored: untuneResources until the node
 * read back the original. A node not written within 2 s is an error
 * (exit 1), never a number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "UrmAPIs.h"

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static long read_node(const char* path) {
    char buf[64] = {0};
    FILE* f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strtol(buf, NULL, 10);
}

/* Read `path` until it holds `want`; the time it first did, or -1 after 2 s. */
static double wait_for(const char* path, long want, double since) {
    for (;;) {
        double t = now_us();
        if (read_node(path) == want) return t;
        if (t - since > 2e6) return -1;
    }
}

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static void report(const char* name, double* v, int n) {
    qsort(v, n, sizeof *v, cmp);
    int p99 = (int)(0.99 * (n - 1) + 0.5);
    printf("%s %d %.1f %.1f\n", name, n, v[(n - 1) / 2], v[p99]);
}

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: urm_bench NODE RESCODE N\n");
        return 2;
    }
    const char* node = argv[1];
    uint32_t code = (uint32_t)strtoul(argv[2], NULL, 0);
    int n = atoi(argv[3]);
    if (n <= 0) return 2;
    long original = read_node(node);
    if (original < 0) {
        fprintf(stderr, "urm_bench: cannot read %s\n", node);
        return 1;
    }
    double* reply = calloc(n, sizeof(double));
    double* written = calloc(n, sizeof(double));
    double* restored = calloc(n, sizeof(double));
    for (int i = 0; i < n; i++) {
        long v = (i % 2) ? 300 : 200;
        SysResource r;
        memset(&r, 0, sizeof r);
        r.mResCode = code;
        r.mNumValues = 1;
        r.mResValue.value = (int32_t)v;
        double t0 = now_us();
        int64_t h = tuneResources(-1, REQ_PRIORITY_HIGH, 1, &r);
        double t1 = now_us();
        if (h <= 0) {
            fprintf(stderr, "urm_bench: tuneResources returned %lld\n", (long long)h);
            return 1;
        }
        double t2 = wait_for(node, v, t0);
        if (t2 < 0) {
            fprintf(stderr, "urm_bench: %s did not become %ld within 2 s (it holds %ld)\n", node, v,
                    read_node(node));
            return 1;
        }
        /* URM's rate limiter penalises a client whose requests come
         * closer than resource_tuner.rate_limiter.delta (5 ms) and blocks
         * it when its health reaches 0: 10 ms before the untune and 20 ms
         * after each round, outside every measured span. */
        struct timespec gap = {0, 10 * 1000 * 1000};
        nanosleep(&gap, NULL);
        double t3 = now_us();
        if (untuneResources(h) != 0) {
            fprintf(stderr, "urm_bench: untuneResources(%lld) failed\n", (long long)h);
            return 1;
        }
        double t4 = wait_for(node, original, t3);
        if (t4 < 0) {
            fprintf(stderr, "urm_bench: %s was not restored to %ld within 2 s\n", node, original);
            return 1;
        }
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
        reply[i] = t1 - t0;
        written[i] = t2 - t0;
        restored[i] = t4 - t3;
    }
    report("tune_reply", reply, n);
    report("tune_written", written, n);
    report("untune_restored", restored, n);
    return 0;
}
