/* jansson helpers.  ingot's JSON outputs are canonical: keys sorted,
 * two-space indent, trailing newline, so equal inputs give equal bytes. */
#ifndef INGOT_JSON_H
#define INGOT_JSON_H

#include <jansson.h>
#include "lib/err.h"

#define INGOT_JSON_MAX (64u << 20) /* refuse JSON documents over 64 MiB */
/* json_canonical's and json_compact's jansson flags (for json_dump_callback). */
#define JSON_CANONICAL_FLAGS (JSON_SORT_KEYS | JSON_INDENT(2) | JSON_ENSURE_ASCII)
#define JSON_COMPACT_FLAGS (JSON_SORT_KEYS | JSON_COMPACT | JSON_ENSURE_ASCII)

/* Canonical serialisation (malloc'd, ends with '\n'). */
char *json_canonical(const json_t *j, size_t *len);
/* Compact canonical form (sorted keys, no whitespace) used for digests. */
char *json_compact(const json_t *j, size_t *len);
/* Atomically write canonical JSON to path with the given mode. */
int json_write_file(const char *path, const json_t *j, int mode, ingot_error *e);
/* The same with another serialiser giving the same bytes faster for a
 * given kind of document (manifest/dsse.h: envelope_canonical). */
typedef char *(*json_dump_fn)(const json_t *j, size_t *len);
int json_write_file_as(const char *path, const json_t *j, json_dump_fn dump, int mode,
		       ingot_error *e);
/* Load a JSON file; errors name the file, line and column. */
int json_read_file(const char *path, json_t **out, ingot_error *e);
int json_read_buf(const char *name, const char *buf, size_t len, json_t **out, ingot_error *e);

/* Typed getters for reading documents: on failure they fill e with
 * "<what>: field '<key>': expected <type>" and return -EINVAL. */
int json_get_str(const json_t *obj, const char *key, const char *what, const char **out, ingot_error *e);
int json_get_int(const json_t *obj, const char *key, const char *what, json_int_t *out, ingot_error *e);
int json_get_obj(const json_t *obj, const char *key, const char *what, json_t **out, ingot_error *e);
int json_get_arr(const json_t *obj, const char *key, const char *what, json_t **out, ingot_error *e);

/* jansson 2.14 provides json_decrefp() for cleanup attributes. */
#define _cleanup_json_ __attribute__((cleanup(json_decrefp)))

#endif
