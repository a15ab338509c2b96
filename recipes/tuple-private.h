/* Internals of struct tuple shared by tuple.c and tuple-check.c. */
#ifndef INGOT_TUPLE_IMPL_H
#define INGOT_TUPLE_IMPL_H

#include "recipes/tuple.h"

struct tuple {
	struct tuple_value *v;   /* in declaration order, derived fields last */
	size_t n, alloc;
	char *file;              /* recipe file or JSON document name */
};

/* Architecture of a known GPU model ("H100" -> "hopper"), NULL if unknown. */
const char *tuple_model_arch(const char *model);

#endif
