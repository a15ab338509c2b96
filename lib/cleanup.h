/* systemd-style scope cleanup: `_cleanup_free_ char *p = NULL;` */
#ifndef INGOT_CLEANUP_H
#define INGOT_CLEANUP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p) { free(*(void **)p); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_close_ _cleanup_(closep)

/* Hand ownership out of a cleanup-scoped variable. */
#define TAKE_PTR(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })
#define TAKE_FD(fd) ({ int _t = (fd); (fd) = -1; _t; })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
