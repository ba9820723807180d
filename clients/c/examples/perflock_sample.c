/*
 * The perflock sample program of the Qualcomm Linux Performance Guide
 * (seed 000, §6.4 "Customize perflock"), verbatim, so that it shows the
 * drop-in library (installed as /usr/lib/libqti-perfd-client.so) works
 * with programs written for Qualcomm's.
 *
 * Fixes of text-extraction breaks only (nothing else changed):
 *  1. `int main()` lacked its `{`, and the closing `}` of main and of the
 *     `else` branch were lost: restored (the else branch ends after
 *     dlclose, where the code stops using the library).
 *  2. `if (... == NULL)` lacked the `{` that its `} else {` closes: added.
 *  3. `dlsym(qcopt_` / `handle, ...)` was split by a line break: joined.
 *  4. `"perf_lock_"` / `rel");` was split inside the string literal (not
 *     valid C): written "perf_lock_rel".
 *  5. `\{0x44008100, 1958400\}` had escaped braces: `{...}`.
 *  6. `perf_lock_acg(...)` was an OCR misreading of perf_lock_acq, and
 *     `perf_lock_` / `opts` was split by a line break: joined.
 * The declaration of perf_lock_acq broken after `int` is valid C as is.
 */
#include <stdlib.h>
#include <stdio.h>
#include <dlfcn.h>
#include <error.h>
#include <unistd.h>

#define PATH_MAX 92

static void *qcopt_handle;
static int (*perf_lock_acq) (int handle, int duration, int list[], int
numArgs);
static int (*perf_lock_rel)(int handle);
static int perf_lock_handle;
char opt_lib_path[PATH_MAX] = "/usr/lib/libqti-perfd-client.so";
int main()
{
    if ((qcopt_handle = dlopen(opt_lib_path, RTLD_NOW)) == NULL) {
       printf("dlopen failed with error: NULL\n");
    } else {
       printf("call perflock \n");
       perf_lock_acq = (int (*)(int, int, int *, int))dlsym(qcopt_handle, "perf_lock_acq");
        if(!perf_lock_acq)
            printf("Unable to get perf_lock_rel function handle.\n");
        perf_lock_rel = (int (*)(int))dlsym(qcopt_handle, "perf_lock_rel");
    int perf_lock_opts[2] = {0x44008100, 1958400};
   perf_lock_handle = perf_lock_acq(perf_lock_handle, 0, perf_lock_opts, 2);
   printf("perflock acquired %d\n", perf_lock_handle);
   //Code section requiring perflock
  perf_lock_rel(perf_lock_handle);
  printf("releasing perflock\n");
  dlclose(qcopt_handle);
    }
  return 0;
}
