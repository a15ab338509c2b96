/* jansson helpers.  ingot's JSON outputs are canonical: keys sorted,
 * two-space indent, trailing newline, so equal inputs give equal bytes. */
#ifndef INGOT_JSON_H
#define INGOT_JSON_H

#include <stdint.h>
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
/* Streaming serialisation of a document whose large arrays (a manifest's
 * files, an SBOM's files and relationships) are made an element at a
 * time, so no more than one element is ever in memory: the document holds
 * json_splice_mark(i) where sp[i]'s array goes, and json_dump_spliced
 * writes exactly the bytes json_dump_callback(doc, flags) would write
 * with each mark replaced by its array.  jansson stays the only JSON
 * writer: it dumps the document and each element; this only frames the
 * arrays and indents their elements as jansson does at their depth. */
typedef int (*json_next_fn)(void *ctx, json_t **elem, ingot_error *e);
struct json_splice {
	json_next_fn next;   /* *elem: next element (new reference); NULL after the last */
	void *ctx;
};
/* Where the bytes go: 0, or a negative errno with e filled. */
struct json_out {
	int (*write)(void *ctx, const char *buf, size_t len, ingot_error *e);
	void *ctx;
};
#define JSON_SPLICE_MAX 8
/* A placeholder for sp[i] (i < JSON_SPLICE_MAX); a new reference. */
json_t *json_splice_mark(unsigned i);
/* Each of sp[0..n) must be marked exactly once in doc.  *len (optional)
 * gets the byte count written.  -ENOMEM, -EINVAL (marks), or what
 * out->write or a next function returned. */
int json_dump_spliced(const json_t *doc, size_t flags, const struct json_splice *sp, size_t n,
		      const struct json_out *out, size_t *len, ingot_error *e);
/* A json_out appending to a struct strbuf (ctx). */
int json_out_strbuf(void *sb, const char *buf, size_t len, ingot_error *e);

/* Load a JSON file of at most max bytes (-EFBIG over it); errors name the
 * file, line and column.  json_read_file: at most INGOT_JSON_MAX. */
int json_read_file_max(const char *path, size_t max, json_t **out, ingot_error *e);
int json_read_file(const char *path, json_t **out, ingot_error *e);
int json_read_buf(const char *name, const char *buf, size_t len, json_t **out, ingot_error *e);

/* JSON Lines (one compact value and '\n' a line), read a line at a time
 * so a long listing is never one tree: *out gets the value at *pos,
 * which moves past its line.  -EBADMSG unless a JSON object or array
 * fills the line. */
int json_read_line(const char *name, const char *buf, size_t len, size_t *pos, json_t **out,
		   ingot_error *e);

/* Typed getters for reading documents: on failure they fill e with
 * "<what>: field '<key>': expected <type>" and return -EINVAL. */
int json_get_str(const json_t *obj, const char *key, const char *what, const char **out, ingot_error *e);
int json_get_int(const json_t *obj, const char *key, const char *what, json_int_t *out, ingot_error *e);
int json_get_obj(const json_t *obj, const char *key, const char *what, json_t **out, ingot_error *e);
int json_get_arr(const json_t *obj, const char *key, const char *what, json_t **out, ingot_error *e);

/* A decoder lists each object's members in one json_unpack(o,
 * "{s?o s?o ...}", ...): every member optional and taken as it is, so a
 * member of another type reads as absent (json_string_value and friends
 * give NULL, 0, false) without hiding the others (a lenient decode: the
 * reader decides). */

/* jansson 2.14 provides json_decrefp() for cleanup attributes. */
#define _cleanup_json_ __attribute__((cleanup(json_decrefp)))

/* o[key] = the lower-case hex of d[0..len): 0, or -1 as jansson's setters. */
int json_set_hex(json_t *o, const char *key, const uint8_t *d, size_t len);

#endif
