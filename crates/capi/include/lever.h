/*
 * lever.h — C API of liblever, the client library of `lever daemon`.
 *
 * Two APIs share one connection per process. The daemon ties every
 * request to the connection that made it (a lease): when the process
 * exits or is killed, everything it acquired is released.
 *
 *  1. The perflock API of Qualcomm's libqti-perfd-client.so
 *     (perf_lock_acq / perf_lock_rel), with the same semantics. The
 *     library is also installed as libqti-perfd-client.so, so existing
 *     programs work unchanged (dlopen or link).
 *  2. The lever_* API: explicit priority, re-tuning, status, errors.
 *
 * The daemon's socket is $LEVER_SOCKET, else /run/lever/lever.sock. The
 * library connects on first use, opens a new connection in a forked
 * child, and reconnects once if the daemon closed the connection (for
 * example after a restart: the requests of the old connection are gone).
 *
 * Every function is thread-safe (calls are serialised on the connection)
 * and returns -1 on failure; lever_last_error() then says why.
 *
 * Build: `make -C clients/c` (liblever.so, liblever.a, this header).
 * Link:  cc app.c -I/usr/include -llever
 */
#ifndef LEVER_H
#define LEVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- perflock API (seed: Qualcomm Linux Performance Guide §3.4) ---- */

/*
 * Acquire a perflock.
 *   handle   a live handle of this process to update that request, or
 *            0 (any value <= 0, or an unknown handle) for a new one.
 *   duration milliseconds the lock lasts; 0 = until perf_lock_rel().
 *   list     numArgs ints: opcode, value, opcode, value, ...
 *            Opcodes are 32-bit (e.g. 0x44008100 = Silver cluster min
 *            frequency); they are read as (uint32_t)list[i].
 *   numArgs  number of ints in list: even and > 0.
 * Priority: third-party-low (use lever_tune for another class).
 * Returns a handle > 0, or -1.
 */
int perf_lock_acq(int handle, int duration, int list[], int numArgs);

/*
 * Release a perflock. A timed lock that already expired counts as
 * released. Returns handle (non-zero) on success, -1 on failure.
 */
int perf_lock_rel(int handle);

/* ---- lever API ---- */

/* Priority classes. The daemon caps them by the caller's permission
 * class: a third-party (unprivileged) process cannot use the system ones. */
#define LEVER_PRIO_THIRD_PARTY_LOW  0
#define LEVER_PRIO_THIRD_PARTY_HIGH 1
#define LEVER_PRIO_SYSTEM_LOW       2
#define LEVER_PRIO_SYSTEM_HIGH      3

/*
 * Acquire a new request.
 *   duration_ms  0 = until lever_untune().
 *   priority     LEVER_PRIO_*.
 *   pairs        n_values int64_t: opcode, value, opcode, value, ...
 *                An opcode is 0..0xFFFFFFFF (a negative int32_t is taken
 *                as its 32-bit pattern).
 *   n_values     number of int64_t in pairs: even and > 0.
 * Returns a handle > 0, or -1.
 */
int lever_tune(uint32_t duration_ms, int priority, const int64_t *pairs,
               size_t n_values);

/*
 * Acquire `handle` again with the pairs and priority it was last acquired
 * with and a new duration (extend, shorten, or 0 = until released). Also
 * works after the lock expired or the daemon restarted: the library
 * remembers each handle's pairs. Returns handle, or -1.
 */
int lever_retune(int handle, uint32_t duration_ms);

/* Release `handle`. Returns 0, or -1. */
int lever_untune(int handle);

/* lever_signal's duration_ms: hold until lever_unsignal(). */
#define LEVER_UNTIL_RELEASED 0xFFFFFFFFu

/*
 * Trigger a use case of the daemon's target (URM's tuneSignal; `lever
 * usecases` lists them): its resources become one request, aggregated
 * with other requests by each resource's policy, ended by
 * lever_unsignal() or when this process exits.
 *   usecase      its name ("camera-preview") or id as text ("0x00030002").
 *   duration_ms  0 = the use case's own duration; LEVER_UNTIL_RELEASED =
 *                until lever_unsignal(); else milliseconds.
 *   priority     LEVER_PRIO_*.
 *   fps, width, height  choose the closest variant; 0 = not given.
 * Returns a handle > 0, or -1 (an unknown use case, a system-only one
 * asked by a third-party process: see lever_last_error()).
 * lever_retune() does not apply to a use case's handle.
 */
int lever_signal(const char *usecase, uint32_t duration_ms, int priority,
                 uint32_t fps, uint32_t width, uint32_t height);

/* End a use case (URM's untuneSignal). Returns 0, or -1. */
int lever_unsignal(int handle);

/*
 * Register process `pid` (0 = this process) as app `app` of the daemon's
 * target (its `apps:` entries): the daemon applies the app's use cases and
 * thread rules until that process exits. For machines where the daemon
 * cannot detect apps itself (`lever run --app NAME -- CMD` does this).
 * Without root or the daemon's system group, only a process of the
 * caller's own uid. Returns 0, or -1 (an unknown app, another uid's
 * process, a process already registered: see lever_last_error()).
 */
int lever_register_app(int pid, const char *app);

/*
 * The daemon's status as JSON (every resource: current, original and
 * winning values, live requests). Writes at most len bytes into buf,
 * always NUL-terminated when len > 0, and returns the full length without
 * the NUL, like snprintf: call lever_status(NULL, 0) to size the buffer.
 * Returns -1 on failure.
 */
int lever_status(char *buf, size_t len);

/*
 * Why the last failing call on this thread failed ("" if none has). Not
 * cleared by successful calls. The string stays valid until the next
 * failing call on this thread; do not free it.
 */
const char *lever_last_error(void);

/* Check that the daemon answers: its protocol version (> 0), or -1. */
int lever_ping(void);

#ifdef __cplusplus
}
#endif

#endif /* LEVER_H */
