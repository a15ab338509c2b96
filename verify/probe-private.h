/* Internals shared by the probe's files (probe-facts.c, which defines
 * the helpers, nodeprobe.c and the probes probe-*.c); not for use
 * outside verify/. */
#ifndef INGOT_VERIFY_PROBE_IMPL_H
#define INGOT_VERIFY_PROBE_IMPL_H

#include <glob.h>
#include <stddef.h>
#include "verify/nodeprobe.h"

#define SMALL_FILE_MAX (1u << 20)
#define LIB_SCAN_MAX ((size_t)512 << 20)   /* embedded version strings: scan at most this */

static inline void globfreep(glob_t *g) { globfree(g); }
#define _cleanup_glob_ __attribute__((cleanup(globfreep)))

#define TRY(x) do { int _r = (x); if (_r < 0) return _r; } while (0)

/* glob(3) a node path pattern under the root (the root itself escaped). */
int probe_glob(const struct node_probe *p, const char *pattern, glob_t *g);
/* The node path of a host path under the root, for sources in reports. */
const char *probe_node_rel(const struct node_probe *p, const char *host);
/* A small node file, trailing whitespace stripped; NULL when absent. */
char *probe_read_trimmed(const struct node_probe *p, const char *abs);
int probe_is_version_char(int c);
/* Length of the dotted version at s (at least one dot), or 0. */
size_t probe_version_len(const char *s);
/* probe_set with a printf-style source. */
int probe_setf(struct node_probe *p, const char *key, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int probe_module_loaded(const struct node_probe *p, const char *name);

/* probe-nvidia.c */
int probe_nvidia_driver(struct node_probe *p);
/* nvidia-smi's CSV answer (out, modified), run from where (its node path). */
int probe_nvidia_smi_parse(struct node_probe *p, char *out, const char *where);
int probe_nvidia_procfs(struct node_probe *p);
int probe_gsp_firmware(struct node_probe *p);
int probe_nvswitch(struct node_probe *p);

/* probe-firmware.c: NIC (InfiniBand sysfs, ethtool), DMI BIOS/board, NVSwitch. */
int probe_firmware(struct node_probe *p);
/* ipmitool mc info's answer, run from where (its node path). */
int probe_ipmitool_parse(struct node_probe *p, char *out, const char *where);

/* probe-stack.c */
char *probe_dpkg_status(const struct node_probe *p);
/* key from the first installed package of packages in the dpkg status. */
int probe_dpkg(struct node_probe *p, const char *key, const char *const *packages, const char *status);
int probe_library(struct node_probe *p, const char *key, const char *libname, const char *marker,
		  const char *const *extra_dirs, size_t n_extra);
int probe_cuda(struct node_probe *p);
int probe_rocm(struct node_probe *p);
int probe_rocm_runtime(struct node_probe *p, const char *status);
int probe_amdgpu(struct node_probe *p);
int probe_amdgpu_driver(struct node_probe *p);
/* amd-smi's JSON answer, run from where (its node path). */
int probe_amd_smi_parse(struct node_probe *p, const char *out, const char *where);

#endif
