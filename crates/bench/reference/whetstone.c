/* Whetstone reference for `lever bench` (written for Lever, Apache-2.0):
 * the Curnow-Wichmann modules with the standard loop counts, as in
 * crates/bench/src/cpu/whetstone.rs; one pass = 100,000 Whetstone
 * instructions.
 *
 *   whetstone PASSES  ->  "whetstone MWIPS <value> passes <n> seconds <s>"
 *
 * OPAQUE(x) (an empty asm that may have changed x) and KEEP(p) (one that
 * may have read and written the memory p points to) stand exactly where
 * the Rust port calls std::hint::black_box, so both compilers work under
 * the same constraints and neither can fold or drop a module. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define T 0.499975
#define T1 0.50025
#define T2 2.0

#define OPAQUE(x) __asm__ volatile("" : "+g"(x))
#define KEEP(p) __asm__ volatile("" : : "g"(p) : "memory")

static double E1[5];
static volatile double sink;

static void pa(double *e) {
    for (int j = 0; j < 6; j++) {
        e[1] = (e[1] + e[2] + e[3] - e[4]) * T;
        e[2] = (e[1] + e[2] - e[3] + e[4]) * T;
        e[3] = (e[1] - e[2] + e[3] + e[4]) * T;
        e[4] = (-e[1] + e[2] + e[3] + e[4]) / T2;
    }
}

static double p3(double x, double y) {
    double x1 = T * (x + y), y1 = T * (x1 + y);
    return (x1 + y1) / T2;
}

static void p0(int j, int k, int l) { E1[j] = E1[k]; E1[k] = E1[l]; E1[l] = E1[j]; }

static void pass(long loops) {
    E1[1] = 1; E1[2] = E1[3] = E1[4] = -1;
    for (long i = 0; i < 12 * loops; i++) {
        E1[1] = (E1[1] + E1[2] + E1[3] - E1[4]) * T;
        E1[2] = (E1[1] + E1[2] - E1[3] + E1[4]) * T;
        E1[3] = (E1[1] - E1[2] + E1[3] + E1[4]) * T;
        E1[4] = (-E1[1] + E1[2] + E1[3] + E1[4]) * T;
    }
    for (long i = 0; i < 14 * loops; i++) {
        KEEP(E1);
        pa(E1);
    }
    long j = 1;
    OPAQUE(j);
    for (long i = 0; i < 345 * loops; i++) {
        j = j == 1 ? 2 : 3;
        j = j > 2 ? 0 : 1;
        j = j < 1 ? 1 : 0;
    }
    OPAQUE(j);
    long k = 2, l = 3;
    j = 1;
    OPAQUE(j);
    OPAQUE(k);
    OPAQUE(l);
    for (long i = 0; i < 210 * loops; i++) {
        j = j * (k - j) * (l - k);
        k = l * k - (l - j) * k;
        l = (l - k) * (k + j);
        E1[l - 1] = j + k + l;
        E1[k - 1] = j * k * l;
    }
    double x = 0.5, y = 0.5;
    OPAQUE(x);
    OPAQUE(y);
    for (long i = 0; i < 32 * loops; i++) {
        x = T * atan(T2 * sin(x) * cos(x) / (cos(x + y) + cos(x - y) - 1.0));
        y = T * atan(T2 * sin(y) * cos(y) / (cos(x + y) + cos(x - y) - 1.0));
    }
    double one = 1.0, z = 1.0;
    OPAQUE(one);
    for (long i = 0; i < 899 * loops; i++) {
        double xx = one;
        OPAQUE(xx);
        z = p3(xx, 1.0);
    }
    E1[1] = 1; E1[2] = 2; E1[3] = 3;
    for (long i = 0; i < 616 * loops; i++) {
        KEEP(E1);
        p0(1, 2, 3);
    }
    double x11 = 0.75;
    OPAQUE(x11);
    for (long i = 0; i < 93 * loops; i++) x11 = sqrt(exp(log(x11) / T1));
    sink = x + y + z + x11 + E1[1];
}

int main(int argc, char **argv) {
    struct timespec a, b;
    long loops = argc > 1 ? atol(argv[1]) : 20000;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pass(loops);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    printf("whetstone MWIPS %.1f passes %ld seconds %.6f\n", 0.1 * loops / s, loops, s);
    return 0;
}
