#include "verify/tuplefields.h"

/* Versions match numerically ("580.95.05" == "580.95.5" is not accepted:
 * MATCH_VERSION needs the same components); declared CUDA/ROCm/toolkit
 * versions may be shorter than what the node carries ("13.0" matches
 * "13.0.1"). */
const struct tuple_field tuple_fields[] = {
	{ "vendor", "vendor", "vendor", NULL, MATCH_EXACT, RULES_DECLARED },
	{ "driver", "driver.version", "driver.version", NULL, MATCH_VERSION, RULES_PROBED },
	{ "driver flavor", "driver.flavor", "driver.flavor", NULL, MATCH_EXACT, RULES_PROBED },
	{ "fabric manager", "fabric_manager.version", "fabric_manager.version", NULL, MATCH_VERSION,
	  RULES_PROBED },
	{ "NCCL", "nccl.version", "nccl.version", NULL, MATCH_VERSION, RULES_PROBED },
	{ "RCCL", "rccl.version", "rccl.version", NULL, MATCH_VERSION, RULES_PROBED },
	{ "CUDA", "cuda.version", "cuda.version", "cuda.runtime", MATCH_PREFIX, RULES_PROBED },
	{ "container toolkit", "container_toolkit.version", "container_toolkit.version", NULL,
	  MATCH_PREFIX, RULES_PROBED },
	{ "ROCm", "rocm.version", "rocm.version", NULL, MATCH_PREFIX, RULES_PROBED },
	{ "ROCm stream", "rocm.stream", "rocm.stream", NULL, MATCH_EXACT, RULES_PROBED },
	{ "ROCm prefix", "rocm.prefix", "rocm.prefix", NULL, MATCH_EXACT, RULES_NONE },
	{ "SMI tool", "smi", "smi", NULL, MATCH_EXACT, RULES_PROBED },
};

const size_t tuple_fields_n = sizeof(tuple_fields) / sizeof(tuple_fields[0]);
