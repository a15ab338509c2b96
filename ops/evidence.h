/* Test evidence about an image: the outputs of real test tools parsed into
 * a result, wrapped in an in-toto statement whose subject is the image
 * (from its manifest) and signed by the test runner's key (DSSE, the same
 * path as manifests).  `ingot promote` later checks these against the
 * ring policy (recipes/rings.h). */
#ifndef INGOT_AUDIT_EVIDENCE_H
#define INGOT_AUDIT_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>

#include "keys/key.h"
#include "lib/err.h"
#include "manifest/typed.h"

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

/* An evidence predicate as `ingot promote` judges it, decoded once by
 * evidence_read (strings borrowed from the predicate; a member absent or
 * of another type reads as NULL, 0 or false, and a check of it fails). */
struct nccl_half {
	bool validated;               /* #wrong was a number (not "N/A") */
	int64_t wrong;
	double busbw;                 /* GB/s */
};
struct nccl_row {
	int64_t size;                 /* bytes */
	struct nccl_half out_of_place, in_place;
};
struct evidence {
	const char *kind;
	const char *nccl_version;     /* the NCCL the run used, or NULL */
	/* nccl-tests */
	size_t nodes;
	bool has_out_of_bounds, out_of_bounds_ok;
	struct nccl_row *rows;        /* own array */
	size_t n_rows;
	/* dcgm-diag */
	int64_t level, failed;
	bool passed;
	/* rollback */
	const char *result, *rolled_back_to;
};
void evidence_read(const json_t *predicate, struct evidence *ev);
void evidence_release(struct evidence *ev);

/* The NCCL version a manifest's tuple carries, or NULL. */
const char *manifest_tuple_nccl(const struct manifest *m);

/* Parse o->from by kind and sign the statement with every key: *envelope (new). */
int evidence_create(const struct evidence_opts *o, struct signing_key *const *keys,
		    size_t n_keys, json_t **envelope, ingot_error *e);

#endif
