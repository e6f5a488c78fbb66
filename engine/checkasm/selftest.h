/* selftest.h - hooks between checkasm.c and selftest.c. */
#ifndef PG_CHECKASM_SELFTEST_H
#define PG_CHECKASM_SELFTEST_H

#include <stdint.h>

extern uint8_t checkasm_has_avx, checkasm_has_xinuse;
/* Failures reported so far (any function). */
int checkasm_failures(void);
/* 1 if every planted fault was caught. */
int checkasm_selftest(void);

#endif
