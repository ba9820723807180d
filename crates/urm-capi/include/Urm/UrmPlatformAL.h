/* Lever's libUrmClient.so (crates/urm-capi): the types and helpers of the
 * Userspace Resource Manager's client API, for programs written against
 * URM's <Urm/UrmPlatformAL.h>. Same layout and values as URM's; written
 * for Lever (docs/urm.md).
 */
#ifndef LEVER_URM_PLATFORM_AL_H
#define LEVER_URM_PLATFORM_AL_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One resource of a tuneResources request (24 bytes on LP64). */
typedef struct {
    uint32_t mResCode;     /* ResType << 16 | ResID; bit 31 for a custom resource */
    int32_t mResInfo;      /* bits 15..8 logical cluster, 7..0 core (from 1; 0 = all) */
    int32_t mOptionalInfo; /* unused */
    int32_t mNumValues;    /* 1: mResValue.value; more: mResValue.values */
    union {
        int32_t value;
        int32_t* values;
    } mResValue;
} SysResource;

/* Request priority: the low byte of `properties`. */
enum RequestPriority {
    REQ_PRIORITY_HIGH = 0,
    REQ_PRIORITY_LOW = 1,
    NUMBER_OF_RQUEST_PRIORITIES = 2
};

/* Display modes: the second byte of `properties` (Lever tunes whatever the mode). */
enum Modes {
    MODE_RESUME = 0x01,
    MODE_SUSPEND = 0x02,
    MODE_DOZE = 0x04
};

/* Apply options. */
#define OPT_WITHMAX 0x00000001
#define OPT_WITHMIN 0x00000002
#define OPT_WITHREL 0x00000004

/* properties with `priority` set; -1 for a bad argument. */
static inline int32_t SET_REQUEST_PRIORITY(int32_t properties, int32_t priority) {
    if (properties < 0 || priority < 0 || priority >= NUMBER_OF_RQUEST_PRIORITIES) return -1;
    return properties | priority;
}

/* properties with display mode `mode` allowed too; -1 for a bad argument. */
static inline int32_t ADD_ALLOWED_MODE(int32_t properties, int32_t mode) {
    if (properties < 0 || mode < MODE_RESUME || mode > MODE_DOZE) return -1;
    return properties | (((properties >> 8) | mode) << 8);
}

static inline int8_t EXTRACT_REQUEST_PRIORITY(int32_t properties) { return (int8_t)(properties & 0xFF); }
static inline int8_t EXTRACT_ALLOWED_MODES(int32_t properties) { return (int8_t)((properties >> 8) & 0xFF); }
static inline int8_t EXTRACT_RESOURCE_CORE_VALUE(int32_t info) { return (int8_t)(info & 0xFF); }
static inline int8_t EXTRACT_RESOURCE_CLUSTER_VALUE(int32_t info) { return (int8_t)((info >> 8) & 0xFF); }
static inline int8_t EXTRACT_RESOURCE_MPAM_VALUE(int32_t info) { return (int8_t)((info >> 16) & 0xFF); }

/* info with its core byte replaced by `core`. */
static inline int32_t SET_RESOURCE_CORE_VALUE(int32_t info, int32_t core) {
    return (info & ~0xFF) | core;
}

/* info with its cluster byte replaced by `cluster`. */
static inline int32_t SET_RESOURCE_CLUSTER_VALUE(int32_t info, int32_t cluster) {
    return (info & ~0xFF00) | (cluster << 8);
}

/* info with its MPAM byte replaced by `group`. */
static inline int32_t SET_RESOURCE_MPAM_VALUE(int32_t info, int32_t group) {
    return (info & ~0xFF0000) | (group << 16);
}

static inline uint32_t GET_SIGNAL_ID(uint64_t code) { return (uint32_t)(code >> 32); }
static inline uint32_t GET_SIGNAL_TYPE(uint64_t code) { return (uint32_t)(code & 0xFFFFFFFFu); }

/* A resource code: type in bits 23..16, id in 15..0. */
static inline uint32_t CONSTRUCT_RES_CODE(uint32_t res_type, uint32_t res_id) {
    return (res_type << 16) | res_id;
}

/* A signal code: category in bits 23..16, id in 15..0. */
static inline uint32_t CONSTRUCT_SIG_CODE(uint32_t category, uint32_t sig_id) {
    return (category << 16) | sig_id;
}

/* Resource types. */
enum {
    CPU_LPM = 0x00,
    CACHE_MGMT = 0x01,
    CPU_SCHED = 0x02,
    CPU_FREQ = 0x03,
    GPU_OPP = 0x04,
    NPU_OPP = 0x06,
    MEMORY_QOS = 0x07,
    MPAM_QOS = 0x08,
    CGRP_OPS = 0x09,
    STORAGE_IO = 0x0a,
    CUSTOM = 0x80
};

/* A custom resource or signal code: bit 31 set. (A function-like macro,
 * so the enum constant CUSTOM above stays usable.) */
#define CUSTOM(code) ((uint32_t)(code) | 0x80000000u)

/* Upstream resource codes and ResInfo values. */
enum ResCodesDef {
    RES_SCALE_MIN_FREQ = 0x00040000,
    RES_SCALE_MAX_FREQ = 0x00040001,
    RES_RATE_LIMIT_US = 0x00040002,
    RES_CPU_ONLINE_PER_CORE = 0x00040003,
    RES_CPU_IDLE_DISABLE_ST0 = 0x00010002,
    RES_CPU_IDLE_DISABLE_ST1 = 0x00010003,
    RES_CPU_IDLE_DISABLE_ST2 = 0x00010004,
    RES_SCHED_UTIL_CLAMP_MIN = 0x00030000,
    RES_SCHED_UTIL_CLAMP_MAX = 0x00030001,
    RES_SCHED_ENERGY_AWARE = 0x00030002,
    RES_SCHED_RT_RUNTIME = 0x00030003,
    RES_CPU_DMA_LATENCY = 0x00010000,
    RES_PM_QOS_LATENCY = 0x00010001,
    RES_DEVFREQ_GPU_MAX = 0x00050000,
    RES_DEVFREQ_GPU_MIN = 0x00050001,
    RES_DEVFREQ_GPU_POLL_INTV = 0x00050002,
    RES_DEVFREQ_UFS_MAX = 0x000a0000,
    RES_DEVFREQ_UFS_MIN = 0x000a0001,
    RES_DEVFREQ_UFS_POLL_INTV = 0x000a0002,
    RES_IRQ_AFFINE = 0x000b0000,
    RES_DEF_IRQ_AFFINE = 0x000b0001,
    RES_CGRP_MOVE_PID = 0x00090000,
    RES_CGRP_MOVE_TID = 0x00090001,
    RES_CGRP_RUN_CORES = 0x00090002,
    RES_CGRP_RUN_CORES_EXCL = 0x00090003,
    RES_CGRP_FREEZE = 0x00090004,
    RES_CGRP_LIMIT_CPU_TIME = 0x00090005,
    RES_CGRP_RUN_WHEN_CPU_IDLE = 0x00090006,
    RES_CGRP_UCLAMP_MIN = 0x00090007,
    RES_CGRP_UCLAMP_MAX = 0x00090008,
    RES_CGRP_REL_CPU_WEIGHT = 0x00090009,
    RES_CGRP_HIGH_MEM = 0x0009000a,
    RES_CGRP_MAX_MEM = 0x0009000b,
    RES_CGRP_LOW_MEM = 0x0009000c,
    RES_CGRP_MIN_MEM = 0x0009000d,
    RES_CGRP_SWAP_MAX_MEMORY = 0x0009000e,
    RES_CGRP_IO_WEIGHT = 0x0009000f,
    RES_CGRP_CPU_LATENCY = 0x00090011,
    FOCUSED_CGROUP_IDENTIFIER = 0x00000004,
    CLUSTER_LITTLE_ALL_CORES = 0x00000000,
    CLUSTER_LITTLE_CORE_0 = 0x00000001,
    CLUSTER_LITTLE_CORE_1 = 0x00000002,
    CLUSTER_LITTLE_CORE_2 = 0x00000003,
    CLUSTER_LITTLE_CORE_3 = 0x00000004,
    CLUSTER_BIG_ALL_CORES = 0x00000100,
    CLUSTER_BIG_CORE_0 = 0x00000101,
    CLUSTER_BIG_CORE_1 = 0x00000102,
    CLUSTER_BIG_CORE_2 = 0x00000103,
    CLUSTER_BIG_CORE_3 = 0x00000104,
    CLUSTER_PLUS_ALL_CORES = 0x00000200,
    CLUSTER_PLUS_CORE_0 = 0x00000201,
    CLUSTER_PLUS_CORE_1 = 0x00000202,
    CLUSTER_PLUS_CORE_2 = 0x00000203,
    CLUSTER_PLUS_CORE_3 = 0x00000204,
    DEFAULT_SIGNAL_TYPE = 0x00000000
};

/* Signal categories. */
enum {
    URM_SIG_CAT_TEST = 0x01,
    URM_SIG_CAT_GENERIC = 0x02,
    URM_SIG_CAT_MULTIMEDIA = 0x03,
    URM_SIG_CAT_GAMING = 0x04,
    URM_SIG_CAT_BROWSER = 0x05,
    URM_SIG_CAT_CUSTOM = 0x80
};

/* Signal codes (Category << 16 | SigId). */
enum {
    URM_SIG_APP_OPEN = 0x00020001,
    URM_SIG_BROWSER_APP_OPEN = 0x00020002,
    URM_SIG_GAME_APP_OPEN = 0x00020003,
    URM_SIG_MULTIMEDIA_APP_OPEN = 0x00020004,
    URM_SIG_VIDEO_DECODE = 0x00030001,
    URM_SIG_CAMERA_PREVIEW = 0x00030002,
    URM_SIG_CAMERA_ENCODE = 0x00030003,
    URM_SIG_CAMERA_ENCODE_MULTI_STREAMS = 0x00030004,
    URM_SIG_ENCODE_DECODE = 0x00030005
};

#ifdef __cplusplus
}
#endif

#endif
