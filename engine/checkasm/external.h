/* external.h - checkasm's external mode: one function loaded from a shared
 * library, checked as if it were the first variant of an op (external.c). */
#ifndef PG_CHECKASM_EXTERNAL_H
#define PG_CHECKASM_EXTERNAL_H

#include "../kernels/variant.h"

/* Consumes --load=, --symbol=, --family= (returns 1), else 0. */
int checkasm_external_arg(const char *arg);
/* 1 when any of the three options was given. */
int checkasm_external_enabled(void);
/* Loads the library and the symbol; 0 and a message on stderr on failure.
 * has_check tells whether checkasm has a check named after the op. */
int checkasm_external_load(int (*has_check)(const char *op));
/* The variant record slot v of op stands for: the table's own outside
 * external mode; the loaded function for slot 0 of the op, NULL (skip)
 * for everything else in it. */
const pg_variant *checkasm_external_variant(const pg_kernel_family *op, int v);

#endif
