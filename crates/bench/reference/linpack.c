/* Linpack reference for `lever bench` (written for Lever, Apache-2.0):
 * the same netlib dgefa/dgesl algorithm and matgen matrix as
 * crates/bench/src/cpu/linpack.rs, in plain C, so gcc -O2 and rustc can
 * be compared on identical work.
 *
 *   linpack [N REPS]  ->  "linpack-nN MFLOPS <mean> best <best> reps <r>"
 *
 * Only dgefa + dgesl are timed; the matrix is regenerated before each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void matgen(double *a, double *b, int n) {
    long init = 1325;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            init = 3125 * init % 65536;
            a[j * n + i] = (init - 32768.0) / 16384.0;
        }
    for (int i = 0; i < n; i++) b[i] = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) b[i] += a[j * n + i];
}

static void daxpy(int m, double t, const double *x, double *y) {
    if (t == 0) return;
    for (int i = 0; i < m; i++) y[i] += t * x[i];
}

static int dgefa(double *a, int n, int *ipvt) {
    for (int k = 0; k < n - 1; k++) {
        double *ck = a + k * n;
        int l = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(ck[i]) > fabs(ck[l])) l = i;
        ipvt[k] = l;
        if (ck[l] == 0) return k;
        double t = ck[l]; ck[l] = ck[k]; ck[k] = t;
        t = -1.0 / ck[k];
        for (int i = k + 1; i < n; i++) ck[i] *= t;
        for (int j = k + 1; j < n; j++) {
            double *cj = a + j * n;
            t = cj[l];
            if (l != k) { cj[l] = cj[k]; cj[k] = t; }
            daxpy(n - k - 1, t, ck + k + 1, cj + k + 1);
        }
    }
    ipvt[n - 1] = n - 1;
    return -1;
}

static void dgesl(const double *a, int n, const int *ipvt, double *b) {
    for (int k = 0; k < n - 1; k++) {
        int l = ipvt[k];
        double t = b[l];
        if (l != k) { b[l] = b[k]; b[k] = t; }
        daxpy(n - k - 1, t, a + k * n + k + 1, b + k + 1);
    }
    for (int k = n - 1; k >= 0; k--) {
        b[k] /= a[k * n + k];
        daxpy(k, -b[k], a + k * n, b);
    }
}

int main(int argc, char **argv) {
    /* linpack [N REPS]: one order; without arguments n = 100 and 500. */
    int sizes[] = {100, 500}, count = 2;
    if (argc > 2) {
        sizes[0] = atoi(argv[1]);
        count = 1;
    }
    for (int s = 0; s < count; s++) {
        int n = sizes[s];
        double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n);
        int *ipvt = malloc(sizeof(int) * n);
        double total = 0, best = 1e30;
        int reps = argc > 2 ? atoi(argv[2]) : n == 100 ? 2000 : 20;
        for (int r = 0; r < reps; r++) {
            matgen(a, b, n);
            double t0 = now();
            dgefa(a, n, ipvt);
            dgesl(a, n, ipvt, b);
            double d = now() - t0;
            total += d;
            if (d < best) best = d;
        }
        double err = 0;
        for (int i = 0; i < n; i++) err = fmax(err, fabs(b[i] - 1.0));
        if (err > 1e-9) {
            fprintf(stderr, "linpack: max|x-1| = %.1e, wrong solution\n", err);
            return 1;
        }
        double ops = 2.0 / 3.0 * n * n * n + 2.0 * n * n;
        printf("linpack-n%d MFLOPS %.1f best %.1f reps %d\n", n, ops * reps / total / 1e6,
               ops / best / 1e6, reps);
        free(a); free(b); free(ipvt);
    }
    return 0;
}
