/* The one table of tuple fields: the recipe's YAML path
 * ("fabric-manager.version", what tuple_parse checks and tuple_get
 * takes), the manifest/report name ("fabric_manager.version", what the
 * node check reports) and the probe key that answers it on a node, with
 * how the two compare (verify/tuplecheck.c) and whether the probed value
 * stands in for the declared one when the version-chain rules run on the
 * node (verify/rulescheck.c).  Recipe parsing, the builder's artifact
 * checks and the node checks all read it, so they never disagree on what
 * a field is. */
#ifndef INGOT_RECIPES_TUPLE_FIELDS_H
#define INGOT_RECIPES_TUPLE_FIELDS_H

#include <stddef.h>
#include "recipes/tuple.h"

enum tuple_match { MATCH_EXACT, MATCH_VERSION, MATCH_PREFIX, MATCH_MODEL };

enum tuple_rules {
	RULES_NONE,       /* the rules do not read it */
	RULES_DECLARED,   /* the rules keep the declared value (a node of another vendor is a
			   * tuple mismatch, not another rule world); listed when unreadable */
	RULES_PROBED,     /* the probed value replaces the declared one */
};

struct tuple_field {
	const char *path;       /* YAML dotted path */
	enum tuple_type type;
	const char *const *words;   /* ENUM/LIST: the allowed words, NULL-terminated */
	const char *report;     /* manifest/report name ('_' for '-'); NULL: never reported */
	const char *probe;      /* probe fact key; NULL: not probed ("not probed" when reported) */
	const char *fallback;   /* second probe key, or NULL */
	const char *label;      /* for messages */
	enum tuple_match how;   /* MATCH_VERSION and MATCH_PREFIX: the rules get the upstream version */
	enum tuple_rules rules;
};

/* Rows code names.  The probed fields come first, in the order the node
 * check reports them; the first TUPLE_FIELDS_DRIVER_END are the driver's
 * (vendor, driver, flavor). */
enum tuple_field_id {
	TF_VENDOR, TF_DRIVER, TF_DRIVER_FLAVOR, TF_FABRIC_MANAGER, TF_NCCL, TF_RCCL, TF_CUDA,
	TF_CONTAINER_TOOLKIT, TF_ROCM, TF_ROCM_STREAM, TF_ROCM_PREFIX, TF_SMI, TF_HIP, TF_HSA_RUNTIME,
	TF_SMI_LIB,
	TF_DRIVER_BRANCH, TF_GPU_MODELS, TF_GPU_ARCH, TF_NVSWITCH,
};
#define TUPLE_FIELDS_DRIVER_END (TF_DRIVER_FLAVOR + 1)

extern const struct tuple_field tuple_fields[];
extern const size_t tuple_fields_n;

/* The row of a YAML path, NULL when none (frameworks.* have no row). */
const struct tuple_field *tuple_field_find(const char *path);

#endif
