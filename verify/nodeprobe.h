/* The node probe: what a node really runs, read from files under a root
 * directory (so tests can hand it a fake sysroot) and from the vendor
 * tools found there.  Every fact records where it was read; a fact that
 * could not be found is recorded too, with where it was looked for, because
 * on the wrong vendor's node a missing tool is a fact, not an error. */
#ifndef INGOT_VERIFY_NODEPROBE_H
#define INGOT_VERIFY_NODEPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "lib/err.h"

/* Fact keys (see docs/verify.md):
 *   vendor  driver.version driver.flavor driver.license driver.taint
 *   driver.ko_version driver.ko_license driver.ko_vermagic kernel.release
 *   driver.userspace_version nvml.version smi.version
 *   modules fabric_manager.version nccl.version rccl.version
 *   cuda.version cuda.runtime container_toolkit.version
 *   rocm.version rocm.stream rocm.prefix amdgpu.version
 *   hip.version hsa_runtime.version smi_lib.version
 *   gpu.model gpu.count gpu.driver_version firmware.vbios firmware.gsp
 *   firmware.nvswitch firmware.nic firmware.ethernet firmware.bios
 *   firmware.bios_date firmware.bmc system.board_name system.product_name
 *   nvswitch.count  smi */
struct probe_fact {
	char *key;
	char *value;    /* NULL: not found */
	char *source;   /* where it was read, or where it was looked for */
	bool unreadable; /* value NULL because the source exists but could not be
			    read or parsed (or its tool failed): a comparison
			    needing it is "not made", unlike a source not there */
};

struct node_probe {
	char *root;
	bool no_tools;   /* run none of the image's tools (node_probe_run_no_tools) */
	struct probe_fact *v;
	size_t n, alloc;
};

/* Probe the node under root ("/" on a real node).  Only allocation
 * failures are errors; unreadable or absent sources become facts. */
int node_probe_run(const char *root, struct node_probe **out, ingot_error *e);
/* The same, but what only a tool (nvidia-smi, nv-fabricmanager, ...)
 * would answer is unreadable, "not run": for a root whose files check did
 * not pass, whose tools are not the image's (check before use). */
int node_probe_run_no_tools(const char *root, struct node_probe **out, ingot_error *e);
void node_probe_free(struct node_probe *p);

/* The fact's value, or NULL when absent or not found. */
const char *probe_get(const struct node_probe *p, const char *key);
const struct probe_fact *probe_find(const struct node_probe *p, const char *key);

/* Record a fact (strings copied); a later set of a found value replaces
 * a not-found one, never the other way round.  Returns 0 or -ENOMEM. */
int probe_set(struct node_probe *p, const char *key, const char *value, const char *source);

/* Record key as unreadable (value NULL, unreadable set) with a
 * printf-style source naming what failed; a fact already recorded wins. */
int probe_set_unreadable(struct node_probe *p, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* {"root":..., "facts":[{"key","value"|null,"source"[,"unreadable":true]}]}
 * sorted by key. */
json_t *probe_to_json(const struct node_probe *p);

/* "ROOT/rel" for an absolute node path (root "/" gives the path itself). */
char *probe_path(const struct node_probe *p, const char *abs);

/* Parsers, exposed for unit tests.  Each returns a malloc'd string or NULL. */
char *probe_parse_nvrm_version(const char *text, int *open_flavor);
char *probe_parse_dpkg_version(const char *status, const char *const *packages, char **pkg_out);
char *probe_first_version(const char *text);

#endif
