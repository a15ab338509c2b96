/* Test evidence about an image: the outputs of real test tools parsed into
 * a result, wrapped in an in-toto statement whose subject is the image
 * (from its manifest) and signed by the test runner's key (DSSE, the same
 * path as manifests).  `ingot promote` later checks these against the
 * ring policy (recipes/rings.h). */
#ifndef INGOT_AUDIT_EVIDENCE_H
#define INGOT_AUDIT_EVIDENCE_H

#include <stddef.h>
#include <time.h>
#include <jansson.h>

#include "keys/key.h"
#include "lib/err.h"

#define EVIDENCE_INPUT_MAX (16u << 20)   /* a test log larger than this is refused */
#define NCCL_MAX_ROWS 4096

/* all_reduce_perf (nccl-tests) stdout.  *result (new reference):
 *   {"test":"all_reduce_perf","nccl_tests_version","nccl_version",
 *    "ranks","nodes":[hosts],"gpus":[models],
 *    "rows":[{"size","count","type","redop","root",
 *             "out_of_place":{"time_us","algbw","busbw","wrong"},"in_place":{...}}],
 *    "out_of_bounds","out_of_bounds_ok","avg_busbw"}
 * Errors: "NAME:LINE: what was found, expected what". */
int evidence_parse_nccl(const char *name, const char *buf, size_t len, json_t **result,
			ingot_error *e);

/* `dcgmi diag -r LEVEL -j` JSON.  *result (new reference):
 *   {"level","dcgm_version","driver","tests":[{"category","name","status",
 *    "gpus","warnings"}],"counts":{"pass","fail","skip","warn"},"passed"}
 * status is pass/fail/skip/warn; "passed": no test failed and at least one
 * passed. */
int evidence_parse_dcgm(const char *name, const char *buf, size_t len, unsigned level,
			json_t **result, ingot_error *e);

/* A runner's own JSON object (kinds "custom" and "rollback"); rollback
 * needs {"result":"pass"|"fail", "rolled_back_to": sha256}. */
int evidence_parse_json(const char *name, const char *kind, const char *buf, size_t len,
			json_t **result, ingot_error *e);

struct evidence_opts {
	const char *manifest_path;  /* plain manifest or its DSSE envelope */
	const char *kind;           /* nccl-tests | dcgm-diag | custom | rollback */
	const char *from;           /* the tool's output */
	unsigned dcgm_level;        /* dcgmi diag -r N (dcgm-diag only) */
	const char *node;           /* where it ran (default: the first host in the output) */
	const char *topology;       /* free-form label, e.g. "2x HGX H100 8-GPU, 8x400G IB" */
	time_t date;
};

#define SIGN_MAX_KEYS 16

/* Parse o->from by kind and sign the statement with every key: *envelope (new). */
int evidence_create(const struct evidence_opts *o, struct signing_key *const *keys,
		    size_t n_keys, json_t **envelope, ingot_error *e);

/* Sign statement with every key in keys: one envelope, n signatures. */
int sign_statement_keys(const json_t *statement, struct signing_key *const *keys, size_t n_keys,
			json_t **envelope, ingot_error *e);

#endif
