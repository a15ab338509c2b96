/* The verifier's signed manifests for a node that fetches its own
 * (docs/verifier.md, GET /v1/manifests/POOL): the envelope a node checks
 * against its image's keyring, and the file list that envelope binds.
 * Open, as the evidence endpoint is: a signed statement proves itself,
 * and a node trusts only what its image's keys signed. */
#ifndef INGOT_SERVER_MANIFESTS_H
#define INGOT_SERVER_MANIFESTS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "server/serve.h"

struct boot_trust;

/* rest: "POOL" (the envelope) or "POOL/NAME" (the file list it binds
 * under the subject NAME); root: NULL, or the image's dm-verity root
 * (64 hex digits) the envelope must describe.  Of the verifier's
 * manifests (c->manifests, verified into trust at start, in that order)
 * naming POOL (and, with root, that root), the one of highest serial.
 * Returns the HTTP status: 200 with *fd open on the file (its bytes as
 * signed or bound: the caller sends and closes it) and *size, else the
 * refusal's with e: 400 a bad pool, name or root, 404 no such manifest
 * or file list, 500 unreadable or over its size limit. */
unsigned manifests_get(const struct serve_config *c, const struct boot_trust *trust, const char *rest,
		       const char *root, int *fd, uint64_t *size, ingot_error *e);

#endif
