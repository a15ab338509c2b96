/* The checks that lean on other parts of ingot (image, attest, recipes). */
#ifndef INGOT_VERIFY_CHECKS_H
#define INGOT_VERIFY_CHECKS_H

#include <jansson.h>
#include "manifest/typed.h"
#include "verify/nodeprobe.h"
#include "verify/node-report.h"
#include "verify/admit.h"

struct nonce; /* attest/nonce.h */

/* Image file/device: size, sha256 and dm-verity root vs the manifest. */
void check_image(const struct verify_opts *o, const struct manifest *m, struct verify_report *r);
/* Quote with a fresh nonce + event-log replay vs the predicted PCR. */
void check_tpm(const struct verify_opts *o, const struct manifest *m, struct verify_report *r);
/* The measured-boot half of check_tpm for manifests with a "boot" object
 * (verify/tpmboot.c): quote + firmware log judged by attest/verdict.h. */
void check_tpm_boot(const struct verify_opts *o, const struct manifest *m, const json_t *quote, const struct nonce *nonce,
		    struct verify_report *r);
/* Version-chain rules on the probed tuple. */
void check_rules(const struct verify_opts *o, const struct manifest *m, const struct node_probe *p,
		 struct verify_report *r);

/* The image holds o->ring: a promotion statement signed by the threshold
 * of o->promotion_keyring, and not superseded or retired (verify/promotion.c). */
void check_ring(const struct verify_opts *o, const struct manifest *m, struct verify_report *r);

#endif
