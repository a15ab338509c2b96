/* `ingot inspect` for JSON documents: what a manifest or a DSSE envelope
 * says - who signed it (key ids, unverified), recipe, serial, expiry,
 * the tuple and the image digest. */
#ifndef INGOT_AUDIT_INSPECT_DOC_H
#define INGOT_AUDIT_INSPECT_DOC_H

#include <stdio.h>
#include "lib/err.h"

/* Describe path on out: "key: value" lines, or canonical JSON when json
 * is set (fields in docs/audit.md).  Errors name the file and field. */
int inspect_document(const char *path, FILE *out, int json, ingot_error *e);

#endif
