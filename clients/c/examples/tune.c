/*
 * tune.c — the lever_* API of lever.h.
 *
 *   cc -Ibuild examples/tune.c -Lbuild -llever -o tune
 *   LEVER_SOCKET=/tmp/lever/lever.sock LD_LIBRARY_PATH=build ./tune [ms]
 *
 * Raises the Silver cluster's minimum frequency (opcode 0x44008100, seed
 * 000 §3.4) to 1958400 kHz for `ms` milliseconds (default 2000), extends
 * it once with lever_retune, prints the daemon's status, and releases it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lever.h"

int main(int argc, char **argv)
{
    uint32_t ms = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 2000;
    const int64_t pairs[] = {0x44008100, 1958400};

    int version = lever_ping();
    if (version < 0) {
        fprintf(stderr, "tune: %s\n", lever_last_error());
        return 1;
    }
    printf("daemon speaks protocol %d\n", version);

    int h = lever_tune(ms, LEVER_PRIO_THIRD_PARTY_HIGH, pairs,
                       sizeof pairs / sizeof pairs[0]);
    if (h < 0) {
        fprintf(stderr, "tune: %s\n", lever_last_error());
        return 1;
    }
    printf("tuned: handle %d for %u ms\n", h, ms);

    if (lever_retune(h, 2 * ms) < 0) {
        fprintf(stderr, "tune: %s\n", lever_last_error());
        return 1;
    }
    printf("retuned: handle %d for %u ms\n", h, 2 * ms);

    int need = lever_status(NULL, 0);
    if (need < 0) {
        fprintf(stderr, "tune: %s\n", lever_last_error());
        return 1;
    }
    char *status = malloc((size_t)need + 1);
    if (status && lever_status(status, (size_t)need + 1) >= 0)
        printf("status: %s\n", status);
    free(status);

    if (lever_untune(h) < 0) {
        fprintf(stderr, "tune: %s\n", lever_last_error());
        return 1;
    }
    printf("released\n");
    return 0;
}
