/* Lever's libUrmClient.so (crates/urm-capi): the client API of the
 * Userspace Resource Manager, for programs written against URM's
 * <Urm/UrmAPIs.h>, served by `lever daemon --urm DIR` ($LEVER_SOCKET, else
 * /run/lever/lever.sock). Same functions and ABI as URM's; written for
 * Lever. What each call becomes is in docs/urm.md.
 *
 * Return values keep URM's contract: -1 only when the request could not
 * be sent (no daemon, or arguments URM's own client refuses); a request
 * the daemon refuses still gets a handle (that holds nothing), and the
 * reason goes to syslog and lever_urm_last_error().
 *
 *   cc app.c $(pkg-config --cflags --libs UrmClient)
 */
#ifndef LEVER_URM_APIS_H
#define LEVER_URM_APIS_H

#include <stddef.h>
#include <stdint.h>

#include "UrmPlatformAL.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tune numRes resources for duration ms (-1: until untuned). prop: low
 * byte REQ_PRIORITY_HIGH/LOW. Returns a handle > 0, or -1. */
int64_t tuneResources(int64_t duration, int32_t prop, int32_t numRes, SysResource* resourceList);

/* New duration (ms, -1: until untuned) for request `handle`. 0 or -1. */
int8_t retuneResources(int64_t handle, int64_t duration);

/* Release request `handle`. 0 or -1. */
int8_t untuneResources(int64_t handle);

/* Property `prop` of the daemon's URM configuration (PropertiesConfig.yaml)
 * into buffer (NUL-terminated, at most bufferSize - 1 bytes), or defValue
 * when there is none. 0 or -1. */
int8_t getProp(const char* prop, char* buffer, size_t bufferSize, const char* defValue);

/* Trigger signal sigId (Category << 16 | SigId) of type sigType for
 * duration ms (0: the signal's Timeout, -1: until untuned). The argument
 * list is accepted and not used. Returns a handle > 0, or -1. */
int64_t tuneSignal(uint32_t sigId, uint32_t sigType, int64_t duration, int32_t properties,
                   const char* appName, const char* scenario, int32_t numArgs, uint32_t* list);

/* URM relays a signal to its extensions; Lever has none: checks the
 * arguments and that the daemon answers. 0 or -1. */
int8_t relaySignal(uint32_t sigId, uint32_t sigType, int64_t duration, int32_t properties,
                   const char* appName, const char* scenario, int32_t numArgs, uint32_t* list);

/* Release signal `handle`. 0 or -1. */
int8_t untuneSignal(int64_t handle);

/* Lever's addition: why this thread's last call was refused or failed
 * ("" if none). */
const char* lever_urm_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
