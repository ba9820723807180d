/* Dhrystone 2.1 reference for `lever bench` (written for Lever,
 * Apache-2.0, from the published description of the benchmark: Weicker,
 * "Dhrystone Benchmark: Rationale for Version 2 and Measurement Rules",
 * SIGPLAN Notices 23(8), 1988). Same procedures, records, globals and
 * strings as crates/bench/src/cpu/dhrystone.rs, in C with pointers and
 * strcpy/strcmp as the benchmark specifies.
 *
 *   dhrystone RUNS   ->  "dhrystone DMIPS <value> runs <n> seconds <s>"
 *
 * One file (the original splits the program in two so the compiler
 * cannot inline across them; gcc -O2 inlines here as rustc does in the
 * port). DMIPS = runs per second / 1757 (the VAX 11/780's score). The
 * program checks the end values the benchmark publishes and exits 1 when
 * one is wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum { IDENT_1, IDENT_2, IDENT_3, IDENT_4, IDENT_5 } ident;

typedef struct rec {
    struct rec *next;  /* Ptr_Comp */
    ident discr;
    ident kind;        /* Enum_Comp */
    int value;         /* Int_Comp */
    char text[31];     /* Str_Comp */
} rec;

static rec *glob_ptr, *glob_next;
static int glob_int;
static int glob_bool;
static char glob_ch1, glob_ch2;
static int glob_arr1[50];
static int glob_arr2[50][50];

static void p7(int a, int b, int *out) { *out = b + (a + 2); }

static int f3(ident e) { return e == IDENT_3; }

static void p6(ident in, ident *out) {
    *out = in;
    if (!f3(in)) *out = IDENT_4;
    switch (in) {
    case IDENT_1: *out = IDENT_1; break;
    case IDENT_2: *out = glob_int > 100 ? IDENT_1 : IDENT_4; break;
    case IDENT_3: *out = IDENT_2; break;
    case IDENT_4: break;
    case IDENT_5: *out = IDENT_3; break;
    }
}

static void p3(rec **out) {
    if (glob_ptr != NULL) *out = glob_ptr->next;
    p7(10, glob_int, &glob_ptr->value);
}

static void p1(rec *r) {
    rec *n = r->next;
    *n = *glob_ptr; /* the structure assignment the benchmark counts */
    r->value = 5;
    n->value = r->value;
    n->next = r->next;
    p3(&n->next);
    if (n->discr == IDENT_1) {
        n->value = 6;
        p6(r->kind, &n->kind);
        n->next = glob_ptr->next;
        p7(n->value, 10, &n->value);
    } else {
        *r = *r->next;
    }
}

static void p2(int *io) {
    int loc = *io + 10;
    ident e;
    do {
        e = IDENT_2;
        if (glob_ch1 == 'A') {
            loc -= 1;
            *io = loc - glob_int;
            e = IDENT_1;
        }
    } while (e != IDENT_1);
}

static void p4(void) {
    int b = glob_ch1 == 'A';
    glob_bool |= b;
    glob_ch2 = 'B';
}

static void p5(void) {
    glob_ch1 = 'A';
    glob_bool = 0;
}

static void p8(int *a1, int (*a2)[50], int x, int y) {
    int loc = x + 5;
    a1[loc] = y;
    a1[loc + 1] = a1[loc];
    a1[loc + 30] = loc;
    for (int i = loc; i <= loc + 1; i++) a2[loc][i] = loc;
    a2[loc][loc - 1] += 1;
    a2[loc + 20][loc] = a1[loc];
    glob_int = 5;
}

static ident f1(char c1, char c2) {
    char a = c1, b = a;
    if (b != c2) return IDENT_1;
    glob_ch1 = a;
    return IDENT_2;
}

static int f2(const char *s1, const char *s2) {
    int loc = 2;
    char c = 'A';
    while (loc <= 2)
        if (f1(s1[loc], s2[loc + 1]) == IDENT_1) {
            c = 'A';
            loc += 1;
        }
    if (c >= 'W' && c < 'Z') loc = 7;
    if (c == 'R') return 1;
    if (strcmp(s1, s2) > 0) {
        loc += 7;
        glob_int = loc;
        return 1;
    }
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    long runs = argc > 1 ? atol(argv[1]) : 10000000;
    static rec r0, r1;
    char s1[31], s2[31];
    int i1 = 0, i2 = 0, i3 = 0;
    ident e;

    glob_next = &r1;
    glob_ptr = &r0;
    glob_ptr->next = glob_next;
    glob_ptr->discr = IDENT_1;
    glob_ptr->kind = IDENT_3;
    glob_ptr->value = 40;
    strcpy(glob_ptr->text, "DHRYSTONE PROGRAM, SOME STRING");
    strcpy(s1, "DHRYSTONE PROGRAM, 1'ST STRING");
    glob_arr2[8][7] = 10;

    double t0 = now();
    for (long run = 1; run <= runs; run++) {
        p5();
        p4();
        i1 = 2;
        i2 = 3;
        strcpy(s2, "DHRYSTONE PROGRAM, 2'ND STRING");
        e = IDENT_2;
        glob_bool = !f2(s1, s2);
        while (i1 < i2) {
            i3 = 5 * i1 - i2;
            p7(i1, i2, &i3);
            i1 += 1;
        }
        p8(glob_arr1, glob_arr2, i1, i3);
        p1(glob_ptr);
        for (char c = 'A'; c <= glob_ch2; c++)
            if (e == f1(c, 'C')) {
                p6(IDENT_1, &e);
                strcpy(s2, "DHRYSTONE PROGRAM, 3'RD STRING");
                i2 = (int)run;
                glob_int = (int)run;
            }
        i2 = i2 * i1;
        i1 = i2 / i3;
        i2 = 7 * (i2 - i3) - i1;
        p2(&i1);
    }
    double s = now() - t0;

    /* The values the published program says the run should end with. */
    int ok = glob_int == 5 && glob_bool == 1 && glob_ch1 == 'A' && glob_ch2 == 'B' &&
             glob_arr1[8] == 7 && glob_arr2[8][7] == runs + 10 && glob_ptr->value == 17 &&
             glob_next->value == 18 && i1 == 5 && i2 == 13 && i3 == 7 &&
             strcmp(glob_next->text, "DHRYSTONE PROGRAM, SOME STRING") == 0;
    if (!ok) {
        fprintf(stderr, "dhrystone: wrong end values\n");
        return 1;
    }
    printf("dhrystone DMIPS %.1f runs %ld seconds %.6f\n", runs / s / 1757.0, runs, s);
    return 0;
}
